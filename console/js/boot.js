// The page's first request, sent while the console's script is still
// loading: the session from the refresh cookie (POST /login/refresh, as
// js/api.js refresh() sends it). A classic async script, not a module: it
// runs as soon as it arrives, before the page is parsed if it can (issue
// 47's first-load goal: the round trip no longer waits for the bundle).
// refresh() takes its answer, once, and sends its own after that; should
// this script come after the first refresh() has run (async scripts keep
// no order), that refresh() has set quireBoot already and nothing is sent.
if (!("quireBoot" in window)) {
  window.quireBoot = fetch("/login/refresh", {
    method: "POST", credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-Quire-Console": "1" },
    body: "{}",
  }).then(async (res) => ({ ok: res.ok, status: res.status, text: await res.text() }), () => null);
}
