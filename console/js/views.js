// Saved views (GET/POST /sites/{siteId}/savedSearches, DELETE
// .../{savedSearchId}; API.md "Saved searches"): a search with its
// filters saved by name, the user's own or shared with the site. A view
// keeps the /queryFulltext body the search page sends; it opens as that
// search page again (fieldsOf reads the page's filters back from the
// body). A view saved by another program in a shape the page cannot show
// is listed, but says it cannot be opened here.
import { h, clear } from "./dom.js";
import { api } from "./api.js";
import { state, can, status, errorText } from "./ctx.js";
import { t } from "../i18n/index.js";

const enc = encodeURIComponent;
export const maxViewName = 100;

function base() { return `/sites/${enc(state.site || "default")}/savedSearches`; }

// views lists the views the user sees in the current site (the API's
// limit of 100 per user, and the shared ones, in pages of 100).
export async function views() {
  const out = [];
  let next = "";
  for (let i = 0; i < 30; i++) {
    const page = await api("GET", base(), { query: { limit: 100, next: next || undefined } });
    out.push(...(page.savedSearches || []));
    next = page.next;
    if (!next) break;
  }
  return out.sort((a, b) => String(a.name).localeCompare(String(b.name)));
}

// fieldsOf is the inverse of search.js's searchBody: the search page's
// fields of a saved query, or null when the query has another shape.
export function fieldsOf(body) {
  const q = body && body.query;
  if (!q || typeof q !== "object") return null;
  const out = {};
  const must = q.bool ? q.bool.must : q;
  const filter = q.bool ? q.bool.filter || [] : [];
  if (q.bool && (Object.keys(q.bool).some((k) => k !== "must" && k !== "filter") || !Array.isArray(filter))) return null;
  if (must && must.match && typeof must.match._all === "string" && Object.keys(must.match).length === 1) out.q = must.match._all;
  else if (!(must && must.match_all)) return null;
  for (const f of filter) {
    const [kind] = Object.keys(f || {});
    const v = f[kind] || {};
    const [field] = Object.keys(v);
    if (kind === "term" && field === "folder") out.folder = v.folder;
    else if (kind === "term" && /^tags\./.test(field)) { out.tag = field.slice(5); out.tagv = v[field]; }
    else if (kind === "term" && /^attributes\./.test(field)) { out.attr = field.slice(11); out.attrv = v[field]; }
    else if (kind === "exists" && /^tags\./.test(v.field)) out.tag = v.field.slice(5);
    else if (kind === "exists" && /^attributes\./.test(v.field)) out.attr = v.field.slice(11);
    else if (kind === "range" && field === "insertedDate") { if (v.insertedDate.gte) out.after = v.insertedDate.gte; if (v.insertedDate.lte) out.before = v.insertedDate.lte; }
    else return null;
  }
  for (const k of Object.keys(out)) if (typeof out[k] !== "string") return null;
  return out;
}

// hrefOf is the search page's address of a view, or "" when it has none.
export function hrefOf(v) {
  const f = fieldsOf(v.query);
  if (!f) return "";
  return "#/search?" + new URLSearchParams(f).toString();
}

// viewList is a list of views as links; own views get a delete button
// (after a question) when removable.
export function viewList(list, opts) {
  const o = opts || {};
  if (!list.length) return h("p.views-none", t("views.none"));
  return h("ul.views", list.map((v) => {
    const href = hrefOf(v);
    const mine = v.userId === (state.user && state.user.username);
    return h("li", { dataset: { view: v.savedSearchId } },
      href ? h("a", { href }, v.name) : h("span", v.name, h("span.meta", " (", t("views.cannotOpen"), ")")),
      v.shared ? h("span.meta", " · ", t("views.shared")) : null,
      o.removable && mine ? [" ", h("button.small.view-delete", { type: "button", "aria-label": t("views.deleteOf", { name: v.name }), onclick: async () => {
        if (!confirm(t("views.deleteConfirm", { name: v.name }))) return;
        try { await api("DELETE", `${base()}/${enc(v.savedSearchId)}`); status(t("views.deleted", { name: v.name }), "info"); if (o.changed) o.changed(); }
        catch (ex) { status(errorText(ex), "error"); }
      } }, "×")] : null);
  }));
}

// saveForm asks for a name (and, with WRITE, whether the site sees it)
// and saves body as a view; done runs after a save.
export function saveForm(body, done) {
  const name = h("input#view-name", { type: "text", required: true, maxlength: maxViewName, autocomplete: "off" });
  const shared = can("WRITE") ? h("input#view-shared", { type: "checkbox" }) : null;
  const f = h("form.panel.inline#view-form", { "aria-labelledby": "view-form-title" }, h("h2#view-form-title", t("views.save")),
    h("label", { for: "view-name" }, t("views.name")), name,
    shared ? h("label.check", shared, " ", t("views.shareWithSite")) : null,
    h("button.primary#view-save", { type: "submit" }, t("views.saveButton")),
    h("button#view-cancel", { type: "button", onclick: () => f.remove() }, t("admin.cancel")));
  f.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (!name.value.trim()) { name.focus(); return; }
    try {
      await api("POST", base(), { body: { savedSearch: { name: name.value.trim(), query: body, shared: !!(shared && shared.checked) } } });
      status(t("views.saved", { name: name.value.trim() }), "info");
      f.remove();
      if (done) done();
    } catch (ex) { status(errorText(ex), "error"); }
  });
  setTimeout(() => name.focus(), 0);
  return f;
}

// viewsAside is the search page's side list of the user's views, drawn
// again after a save.
export function viewsAside() {
  const box = h("div#views-list");
  const el = h("aside.views#saved-views", { "aria-labelledby": "saved-views-title" }, h("h2#saved-views-title", t("views.title")), box);
  const draw = () => views().then((l) => clear(box, viewList(l, { removable: true, changed: draw })), (ex) => clear(box, h("p.msg.error", errorText(ex))));
  draw();
  return { el, draw };
}
