// What pages share: the signed-in state and small helpers. Pages import
// this module, never app.js (no import cycle).
import { h, clear } from "./dom.js";
import { explain } from "./errors.js";
import { t } from "../i18n/index.js";

export const state = {
  user: null,   // {username, roles}
  sites: [],    // GET /sites: siteId, permissions
  site: null,   // the current siteId
};

// can tells whether the user holds a permission (READ, WRITE, DELETE,
// GOVERN, ADMIN) on the current site. It only hides controls: the API
// decides (a folder's permissions may refuse more).
export function can(perm) {
  const s = state.sites.find((x) => x.siteId === state.site);
  return !!s && (s.permissions || []).includes(perm);
}

// navigate goes to a hash, rendering again when it is the current one.
export function navigate(hash) {
  if (location.hash === hash) dispatchEvent(new HashChangeEvent("hashchange"));
  else location.hash = hash;
}

// status shows a message in the live region (screen readers read it).
export function status(msg, kind) {
  const el = document.getElementById("status");
  if (!el) return;
  clear(el, msg ? h("div", { class: "msg " + (kind || "info"), role: kind === "error" ? "alert" : "status" }, msg) : null);
}

// flash shows a message on the next page (after navigate).
let pending = null;
export function flash(msg, kind) { pending = [msg, kind]; }
export function takeFlash() { const p = pending; pending = null; return p; }

// errorText is what went wrong in plain words (js/errors.js).
export function errorText(e) {
  return explain(e);
}

// siteQuery is the siteId query parameter of document routes.
export function siteQuery(extra) {
  return { siteId: state.site, ...(extra || {}) };
}

// pager: Previous/Next buttons over API `next` tokens. Only the tokens
// of the pages seen are kept, never their rows: a folder of 10,000
// documents costs one page of DOM.
export function pager(onPage) {
  const stack = [""]; // the token of each page seen; the last is the current
  const prev = h("button.prev", { type: "button" }, t("common.previous"));
  const next = h("button.next", { type: "button" }, t("common.next"));
  const label = h("span.page");
  let nextToken = null;
  prev.addEventListener("click", () => { if (stack.length > 1) { stack.pop(); onPage(stack[stack.length - 1]); } });
  next.addEventListener("click", () => { if (nextToken) { stack.push(nextToken); onPage(nextToken); } });
  return {
    el: h("div.pager", prev, label, next),
    // update after a page loaded, with its `next` token.
    update(token) {
      nextToken = token || null;
      prev.disabled = stack.length < 2;
      next.disabled = !nextToken;
      label.textContent = t("common.page", { n: stack.length });
    },
  };
}
