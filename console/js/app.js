// The console's shell: session start, header (site switch, language
// switch, sign-out), navigation and the hash router that renders one
// page module (pages/*.js) into <main>. A page is a module whose default
// export is {path, nav?, render}; pages/index.js lists them, so a new
// page is one file and one line there.
import { h, clear } from "./dom.js";
import { api, refresh, refusal, signOut, signedIn, whenSignedOut } from "./api.js";
import { state, navigate, status, errorText, takeFlash } from "./ctx.js";
import { t, lang, setLanguage, pickLanguage, languages, languageNames } from "../i18n/index.js";
import pages from "../pages/index.js";
import login from "../pages/login.js";
import { applyBranding, brandName, brandLogo, setGlobalBranding } from "./brand.js";

const app = document.getElementById("app");
let idleTimer = 0;
// The idle timeout: no key press, click or pointer move for that long
// signs the user out. The server's setting auth.console_idle_timeout
// gives it (GET /system/configuration, webui.idleTimeoutSeconds); 15
// minutes until it is read.
let idleMs = 15 * 60 * 1000;

function touchIdle() {
  clearTimeout(idleTimer);
  if (!signedIn()) return;
  idleTimer = setTimeout(() => leave("idle"), idleMs);
}
for (const ev of ["keydown", "pointerdown", "pointermove", "wheel"]) {
  addEventListener(ev, touchIdle, { passive: true });
}

function langSwitch() {
  const sel = h("select#lang", { "aria-label": t("header.language") },
    Object.keys(languages).map((l) => h("option", { value: l, selected: l === lang() }, languageNames[l])));
  sel.addEventListener("change", () => { setLanguage(sel.value, true); render(); });
  return sel;
}

// leave ends the session in this tab: why (a sign-out, the idle
// timeout, or the server no longer taking the session) is told on the
// sign-in page. The next person to sign in here starts on the documents
// page with nothing of the last user's state (page, site), under the
// global branding (the last one seen in this tab).
let leaving = false;
async function leave(why) {
  if (leaving) return; // several requests may find the session gone at once
  leaving = true;
  clearTimeout(idleTimer);
  try { await signOut(); } finally { leaving = false; }
  sessionStorage.removeItem("quire.site");
  sessionStorage.setItem(why === "idle" ? "quire.idle" : why === "disabled" ? "quire.disabled" : why === "ended" ? "quire.ended" : "quire.signedout", "1");
  state.user = null;
  state.sites = [];
  state.site = null;
  lastPath = null;
  history.replaceState(null, "", location.pathname + location.search);
  start();
}

function siteSwitch() {
  if (state.sites.length < 2) {
    return h("span.site#site-name", t("header.site"), ": ", state.site || "—");
  }
  const sel = h("select#site", { "aria-label": t("header.site") },
    state.sites.map((s) => h("option", { value: s.siteId, selected: s.siteId === state.site }, s.siteId)));
  sel.addEventListener("change", () => {
    state.site = sel.value;
    sessionStorage.setItem("quire.site", state.site);
    render();
    navigate("#/browse");
  });
  return h("label.site", t("header.site"), " ", sel);
}

function header() {
  const nav = h("nav", { "aria-label": t("nav.label") },
    h("ul", pages.filter((p) => p.nav && (!p.visible || p.visible())).map((p) =>
      h("li", h("a", { href: p.href, dataset: { nav: p.href } }, t(p.nav), p.badge ? [" ", p.badge()] : null)))));
  // On a phone or a tablet the navigation and the tools fold into a
  // menu the "Menu" button opens (app.css hides the button on wider
  // screens, where the menu always shows).
  const toggle = h("button#menu-toggle", { type: "button", "aria-expanded": "false", "aria-controls": "menu" }, h("span.burger", { "aria-hidden": "true" }), t("header.menu"));
  const top = h("header.top",
    h("a.brand", { href: "#/home" }, h("img#brand-logo", { src: brandLogo(), alt: "", width: 24, height: 24 }), " ", h("span#brand-name", brandName())),
    toggle,
    h("div.menu#menu", nav,
      h("div.tools", h("span#site-switch", siteSwitch()), langSwitch(),
        h("span.user#user", state.user ? state.user.username : ""),
        h("button#signout", { type: "button", onclick: () => leave("signedout") }, t("header.signout")))));
  const show = (open) => { top.classList.toggle("open", open); toggle.setAttribute("aria-expanded", String(open)); };
  toggle.addEventListener("click", () => show(!top.classList.contains("open")));
  top.addEventListener("keydown", (e) => { if (e.key === "Escape" && top.classList.contains("open")) { show(false); toggle.focus(); } });
  nav.addEventListener("click", (e) => { if (e.target.closest("a")) show(false); });
  return top;
}

// A page that changed the list of sites (the admin's Sites page) says so:
// the header's site switch follows without a reload.
addEventListener("quire:sites", () => {
  const el = document.getElementById("site-switch");
  if (el) clear(el, siteSwitch());
});

// render draws the shell and the page of the current hash.
function render() {
  document.title = "Quire";
  if (!signedIn()) {
    clear(app, h("header.top", h("span.brand", h("img#brand-logo", { src: brandLogo(), alt: "", width: 24, height: 24 }), " ", h("span#brand-name", brandName())),
      h("div.tools", langSwitch())),
      h("div#status", { "aria-live": "polite" }),
      h("main#main", { tabindex: "-1" }));
    applyBranding();
    login.render({ done: start }, document.getElementById("main"));
    return;
  }
  clear(app, h("a.skip", { href: "#main", onclick: (e) => { e.preventDefault(); document.getElementById("main").focus(); } }, t("nav.skip")),
    header(), h("div#status", { "aria-live": "polite" }), h("main#main", { tabindex: "-1" }));
  applyBranding();
  route();
}

let routeSeq = 0;
let lastPath = null;
async function route() {
  if (!signedIn()) return;
  const main = document.getElementById("main");
  if (!main) return;
  const raw = location.hash.replace(/^#/, "") || "/home"; // the start page: pages/home.js
  const [path, qs] = raw.split("?");
  const query = new URLSearchParams(qs || "");
  const seq = ++routeSeq;
  for (const a of document.querySelectorAll("header nav a[data-nav]")) {
    a.toggleAttribute("aria-current", raw.startsWith(a.dataset.nav.slice(1)));
  }
  for (const p of pages) {
    const m = p.path.exec(path);
    if (!m) continue;
    if (path !== lastPath) {
      const f = takeFlash();
      status(f ? f[0] : "", f ? f[1] : undefined);
      lastPath = path;
    }
    if (!main.children.length) clear(main, h("p.loading", t("common.loading")));
    try {
      await p.render({ params: m.slice(1).map((x) => (x === undefined ? "" : decodeURIComponent(x))), query, stale: () => seq !== routeSeq }, main);
    } catch (e) {
      if (seq === routeSeq) clear(main, h("p.msg.error", { role: "alert" }, errorText(e)));
    }
    return;
  }
  clear(main, h("p", t("common.notFound")));
}

addEventListener("hashchange", route);

// On a phone a table's rows stack, each cell under its column's name
// (app.css, td::before): every cell of a table.list carries its header
// in data-label, kept up as pages draw and redraw their rows.
function labelCells() {
  for (const table of app.querySelectorAll("table.list")) {
    const heads = [...table.querySelectorAll("thead th")].map((th) => {
      const c = th.cloneNode(true);
      for (const x of c.querySelectorAll("[aria-hidden=true]")) x.remove();
      return c.textContent.trim();
    });
    if (!heads.length) continue;
    for (const tr of table.querySelectorAll("tbody tr")) {
      [...tr.children].forEach((td, i) => {
        if (td.tagName === "TD" && !td.hasAttribute("colspan") && heads[i] && td.dataset.label !== heads[i]) td.dataset.label = heads[i];
      });
    }
  }
}
new MutationObserver(labelCells).observe(app, { childList: true, subtree: true });
// The server no longer takes the session (the user was disabled or
// deleted, the password or the groups changed): say so on the sign-in page.
// The server says why when it is because the user was disabled.
whenSignedOut((why) => leave(why === "disabled" ? "disabled" : "ended"));

// start: a session from the refresh cookie, else the sign-in page.
async function start() {
  if (!signedIn() && !(await refresh()) && refusal() === "disabled") sessionStorage.setItem("quire.disabled", "1");
  if (signedIn()) {
    try {
      // One GET /system/configuration per start: the global branding
      // and the idle timeout.
      const [me, sys] = await Promise.all([api("GET", "/sites"), api("GET", "/system/configuration").catch(() => ({}))]);
      setGlobalBranding(sys.branding);
      state.user = { username: me.username, roles: me.roles || [] };
      state.sites = me.sites || [];
      const saved = sessionStorage.getItem("quire.site");
      state.site = state.sites.some((s) => s.siteId === saved) ? saved : (state.sites[0] || {}).siteId || null;
      for (const k of ["quire.idle", "quire.ended", "quire.disabled", "quire.signedout"]) sessionStorage.removeItem(k); // automatic sign-in may go to the IdP again
      const secs = Number(sys.webui && sys.webui.idleTimeoutSeconds);
      if (secs > 0) idleMs = secs * 1000;
      touchIdle();
    } catch (e) {
      await signOut();
    }
  }
  render();
}

setLanguage(pickLanguage(), false);
start();
