// The console's only way to the server: the public API with the signed-in
// user's own access token. The access token lives in this module's memory
// only; the refresh token is an HttpOnly cookie the script never sees
// (DESIGN.md, "Tokens").

const CONSOLE_HEADER = { "X-Quire-Console": "1" };

let accessToken = null;
let refreshTimer = 0;
let onSignedOut = () => {};

// ApiError carries the status and the API's message.
export class ApiError extends Error {
  constructor(status, body) {
    let msg = body && body.message;
    if (!msg && body && Array.isArray(body.errors)) {
      msg = body.errors.map((e) => (e.key ? e.key + ": " : "") + e.error).join("; ");
    }
    super(msg || "HTTP " + status);
    this.status = status;
    this.body = body;
  }
}

export function signedIn() { return accessToken !== null; }

export function whenSignedOut(fn) { onSignedOut = fn; }

async function parse(res) {
  const text = await res.text();
  if (!text) return {};
  try { return JSON.parse(text); } catch (_) { return { message: text }; }
}

// authCall posts to a sign-in route (no token) with the console header.
export async function authCall(path, body) {
  const res = await fetch(path, {
    method: "POST", credentials: "same-origin",
    headers: { "Content-Type": "application/json", ...CONSOLE_HEADER },
    body: JSON.stringify(body || {}),
  });
  const out = await parse(res);
  if (!res.ok) throw new ApiError(res.status, out);
  return out;
}

// signInOptions asks the server (no token) whether it offers sign-in
// through an identity provider (GET /login/oidc/info): {enabled,
// displayName, automaticSignIn}; {enabled: false} when it cannot tell.
export async function signInOptions() {
  try {
    const res = await fetch("/login/oidc/info", { credentials: "omit" });
    return res.ok ? await res.json() : { enabled: false };
  } catch (_) {
    return { enabled: false };
  }
}

// useTokens keeps a sign-in's access token and schedules its refresh a
// minute before it expires.
export function useTokens(result) {
  accessToken = result.AccessToken;
  clearTimeout(refreshTimer);
  const ms = Math.max(30, (result.ExpiresIn || 900) - 60) * 1000;
  refreshTimer = setTimeout(() => { refresh().catch(() => {}); }, ms);
}

// Why the last refresh was refused: "disabled" when the server said the
// user is disabled (401 "User is disabled."), else "".
let refusedWhy = "";
export function refusal() { return refusedWhy; }

// refresh trades the refresh cookie for a new access token; false when
// there is no valid cookie (not signed in). A refusal because the user
// was disabled ends the session here at once (whenSignedOut), with that
// reason, even when the scheduled refresh finds it.
export async function refresh() {
  refusedWhy = "";
  try {
    const out = (await bootRefresh()) || (await authCall("/login/refresh", {}));
    if (!out.AuthenticationResult) return false;
    useTokens(out.AuthenticationResult);
    return true;
  } catch (e) {
    if (e instanceof ApiError && e.status === 401 && e.body && e.body.message === "User is disabled.") {
      refusedWhy = "disabled";
      polled.clear();
      if (accessToken) { accessToken = null; onSignedOut(refusedWhy); }
    }
    return false;
  }
}

// bootRefresh is the answer to the refresh js/boot.js sent as the page
// loaded, taken once (null when there is none, or it did not reach the
// server): as authCall answers, or its ApiError.
async function bootRefresh() {
  const sent = window.quireBoot;
  window.quireBoot = null; // taken, or a late js/boot.js sends none
  if (!sent) return null;
  const r = await sent;
  if (!r) return null;
  let out = {};
  if (r.text) {
    try { out = JSON.parse(r.text); } catch (_) { out = { message: r.text }; }
  }
  if (!r.ok) throw new ApiError(r.status, out);
  return out;
}

// signOut ends the refresh token on the server and forgets the access
// token here.
export async function signOut() {
  clearTimeout(refreshTimer);
  accessToken = null;
  window.quireBoot = null; // an answer not taken yet is not this session's any more
  polled.clear();
  try { await authCall("/login/logout", {}); } catch (_) { /* already gone */ }
}

function url(path, query) {
  const u = new URL(path, location.origin);
  for (const [k, v] of Object.entries(query || {})) {
    if (v !== undefined && v !== null && v !== "") u.searchParams.set(k, v);
  }
  return u.pathname + u.search;
}

// polled keeps the last answer of each revalidated GET (api's
// revalidate), by URL, with its ETag: the next poll sends If-None-Match
// and a 304 gives the kept answer (API.md "Revalidating polls"). Bounded;
// forgotten at sign-out.
const polled = new Map();
const MAX_POLLED = 64;

// api calls the API; a 401 gets one refresh and retry, then signs out.
// With revalidate (a GET polled every few seconds), an answer the server
// says is unchanged (304) is the one kept from the previous call.
export async function api(method, path, { query, body, retry = true, revalidate = false } = {}) {
  const opts = { method, headers: {}, credentials: "omit" };
  if (accessToken) opts.headers.Authorization = "Bearer " + accessToken;
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const u = url(path, query);
  const kept = revalidate ? polled.get(u) : null;
  if (kept) opts.headers["If-None-Match"] = kept.etag;
  const res = await fetch(u, opts);
  if (res.status === 401 && retry && accessToken) {
    const out = await parse(res);
    // A refused permission is a 401 too (FormKiQ): only a token the
    // server no longer takes is worth a refresh.
    if (out.message === "Unauthorized") {
      if (await refresh()) return api(method, path, { query, body, retry: false, revalidate });
      polled.clear();
      if (accessToken) { accessToken = null; onSignedOut(refusedWhy); }
    }
    throw new ApiError(401, out);
  }
  if (res.status === 304 && kept) return kept.out;
  const out = await parse(res);
  if (!res.ok) throw new ApiError(res.status, out);
  const etag = revalidate && res.headers.get("ETag");
  if (etag) {
    polled.delete(u);
    if (polled.size >= MAX_POLLED) polled.delete(polled.keys().next().value);
    polled.set(u, { etag, out });
  }
  return out;
}

// apiForm posts a multipart form (files) with the user's token: the
// browser sets the multipart boundary.
export async function apiForm(path, form, query) {
  const opts = { method: "POST", headers: {}, credentials: "omit", body: form };
  if (accessToken) opts.headers.Authorization = "Bearer " + accessToken;
  const res = await fetch(url(path, query), opts);
  const out = await parse(res);
  if (!res.ok) throw new ApiError(res.status, out);
  return out;
}

// upload sends a file to a signed upload URL with XMLHttpRequest, whose
// upload events give the progress fetch does not.
export function upload(signedURL, file, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("PUT", signedURL);
    if (file.type) xhr.setRequestHeader("Content-Type", file.type);
    xhr.upload.onprogress = (e) => { if (e.lengthComputable) onProgress(e.loaded, e.total); };
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) { onProgress(file.size, file.size); resolve(); }
      else {
        let body = {};
        try { body = JSON.parse(xhr.responseText); } catch (_) { body = { message: xhr.responseText }; }
        reject(new ApiError(xhr.status, body));
      }
    };
    xhr.onerror = () => reject(new ApiError(0, { message: "network error" }));
    xhr.send(file);
  });
}
