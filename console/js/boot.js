// The page's first request, sent while the console's script is still
// loading: the session from the refresh cookie (POST /login/refresh, as
// js/api.js refresh() sends it). A classic deferred script before the
// module script: it runs first (document order), as soon as it has
// arrived and the page is parsed, while the bundle may still be loading;
// refresh() takes its answer, once, and sends its own after that (issue
// 47's first-load goal: the round trip no longer waits for the bundle).
window.quireBoot = fetch("/login/refresh", {
  method: "POST", credentials: "same-origin",
  headers: { "Content-Type": "application/json", "X-Quire-Console": "1" },
  body: "{}",
}).then(async (res) => ({ ok: res.ok, status: res.status, text: await res.text() }), () => null);
