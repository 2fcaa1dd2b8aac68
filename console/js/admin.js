// What the admin and governor pages (pages/admin-*.js) share: who may see
// them, their tabs, and small form helpers. Visibility only hides
// controls: every request is the API's to refuse (Admins-only routes
// answer 401 to anyone else, site routes need GOVERN).
import { h } from "./dom.js";
import { state, can, status, errorText } from "./ctx.js";
import { t } from "../i18n/index.js";

// isAdmin: the user is in the Admins group (users, groups, sites,
// global branding, health).
export function isAdmin() {
  return !!state.user && (state.user.roles || []).includes("Admins");
}

// canGovern: GOVERN on the current site (API keys, site configuration,
// site branding, scanner intake).
export function canGovern() {
  return isAdmin() || can("GOVERN");
}

// The admin tabs, in order; each with who may see it.
const tabs = [
  { href: "#/admin/users", key: "admin.users.title", show: isAdmin },
  { href: "#/admin/keys", key: "admin.keys.title", show: canGovern },
  { href: "#/admin/sites", key: "admin.sites.title", show: isAdmin },
  { href: "#/admin/config", key: "admin.config.title", show: canGovern },
  { href: "#/admin/mail", key: "admin.mail.title", show: canGovern },
  { href: "#/admin/branding", key: "admin.branding.title", show: canGovern },
  { href: "#/admin/attributes", key: "admin.attributes.title", show: canGovern },
  { href: "#/admin/schemas", key: "admin.schemas.title", show: canGovern },
  { href: "#/admin/intake", key: "admin.intake.title", show: canGovern },
  { href: "#/admin/health", key: "admin.health.title", show: isAdmin },
];

// firstTab is where #/admin leads: the first tab the user may see.
export function firstTab() {
  const tab = tabs.find((x) => x.show());
  return tab ? tab.href : null;
}

// tabNav is the admin pages' own navigation, the current one marked.
export function tabNav(current) {
  return h("nav.tabs", { "aria-label": t("admin.nav") },
    h("ul", tabs.filter((x) => x.show()).map((x) =>
      h("li", h("a", { href: x.href, "aria-current": x.href === current ? "page" : null }, t(x.key))))));
}

// field is a labelled control.
export function field(id, label, control, hint) {
  control.id = id;
  if (hint) control.setAttribute("aria-describedby", id + "-hint");
  return h("div.field", h("label", { for: id }, label), control, hint ? h("small.meta", { id: id + "-hint" }, hint) : null);
}

// submitting wires a form's submit to an async action, with its button
// disabled while it runs and any error shown in the status line.
export function submitting(form, action) {
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const btn = form.querySelector("button[type=submit]");
    if (btn) btn.disabled = true;
    try { await action(); } catch (ex) { status(errorText(ex), "error"); } finally { if (btn) btn.disabled = false; }
  });
  return form;
}

// run does an action from a button, its outcome in the status line.
export function run(action, done) {
  return async () => {
    try { await action(); if (done) status(done, "info"); } catch (ex) { status(errorText(ex), "error"); }
  };
}
