// Document types (GOVERN; FormKiQ's classifications,
// /sites/{siteId}/classifications): a document type (an invoice, a
// contract) asks for attributes of its own on the documents that have
// it, on top of the site schema (the attributes page). Each is listed
// with the attributes it requires and allows, made by name, edited
// (name, and for each of the site's attributes: required, optional or
// not, with allowed values for text) and deleted after a question. The
// PUT replaces the whole classification: the page reads it and sends
// every entry back as it was except the ones changed.
import { h, clear } from "../js/dom.js";
import { api } from "../js/api.js";
import { state, status, errorText } from "../js/ctx.js";
import { canGovern, tabNav, field, submitting } from "../js/admin.js";
import { choose } from "../js/dialog.js";
import { PlainError } from "../js/errors.js";
import { t } from "../i18n/index.js";

const enc = encodeURIComponent;
const TYPES = ["STRING", "NUMBER", "DATE", "BOOLEAN", "KEY_ONLY"];

function values(text) {
  return [...new Set(String(text).split(/[\n,]/).map((v) => v.trim()).filter(Boolean))];
}

// entries are a classification's attributes as {key: {where, entry}}.
function entries(attrs) {
  const out = {};
  for (const where of ["required", "optional"]) {
    for (const x of (attrs && attrs[where]) || []) {
      const entry = { ...x };
      delete entry.localizedAllowedValues;
      out[x.attributeKey] = { where, entry };
    }
  }
  return out;
}

const page = {
  path: /^\/admin\/schemas$/,
  async render(ctx, main) {
    if (!canGovern()) { clear(main, tabNav(""), h("p.msg.error", { role: "alert" }, t("admin.denied"))); return; }
    const site = state.site;
    const base = `/sites/${enc(site)}/classifications`;
    const tbody = h("tbody");
    const editSlot = h("div#class-edit");
    let defs = [];

    async function load() {
      const [list, attrs] = await Promise.all([
        api("GET", base, { query: { limit: 100 } }),
        api("GET", "/attributes", { query: { siteId: site, limit: 100 } }),
      ]);
      if (ctx.stale()) return;
      defs = (attrs.attributes || []).filter((d) => d.type !== "GOVERNANCE" && TYPES.includes(d.dataType));
      const items = list.classifications || [];
      // The list answer has no attributes: each is read (a site has a
      // few document types).
      const full = await Promise.all(items.map((c) => api("GET", `${base}/${enc(c.classificationId)}`).then((x) => x.classification || c).catch(() => c)));
      if (ctx.stale()) return;
      clear(tbody, full.map((c) => {
        const e = entries(c.attributes);
        const keys = (where) => Object.keys(e).filter((k) => e[k].where === where).join(", ") || "—";
        return h("tr", { dataset: { id: c.classificationId, name: c.name } },
          h("td", c.name), h("td", keys("required")), h("td", keys("optional")),
          h("td",
            h("button.small.edit", { type: "button", "aria-label": t("admin.schemas.editNamed", { name: c.name }), onclick: () => edit(c) }, t("admin.attributes.edit")), " ",
            h("button.small.danger.remove", { type: "button", "aria-label": t("admin.schemas.deleteNamed", { name: c.name }), onclick: () => remove(c) }, t("admin.delete"))));
      }));
      if (!full.length) tbody.append(h("tr", h("td", { colspan: 4 }, t("admin.schemas.empty"))));
    }

    async function remove(c) {
      const { value } = await choose({ id: "class-delete", title: t("admin.schemas.deleteTitle", { name: c.name }),
        text: t("admin.schemas.deleteText", { name: c.name }), cancel: "cancel",
        choices: [{ value: "delete", label: t("admin.delete"), danger: true }, { value: "cancel", label: t("admin.cancel") }] });
      if (value !== "delete") return;
      try {
        await api("DELETE", `${base}/${enc(c.classificationId)}`);
        status(t("admin.schemas.deleted", { name: c.name }), "info");
        clear(editSlot);
        await load();
      } catch (ex) {
        status(/in use/i.test(ex.message || "") ? t("admin.schemas.inUse", { name: c.name }) : errorText(ex), "error");
      }
    }

    function edit(c) {
      const old = entries(c.attributes);
      const name = h("input", { type: "text", required: true, autocomplete: "off", maxlength: 256, value: c.name || "" });
      const rows = defs.map((d) => {
        const cur = old[d.key] || { where: "", entry: null };
        const id = "class-attr-" + d.key.replace(/[^a-z0-9_-]/gi, "_");
        const sel = h("select", { id: id + "-where", "aria-label": t("admin.schemas.whereFor", { key: d.key }) },
          ["", "optional", "required"].map((w) => h("option", { value: w, selected: w === cur.where }, w ? t("admin.attributes." + w) : t("admin.schemas.notAsked"))));
        const vals = d.dataType === "STRING" ? h("textarea", { id: id + "-allowed", rows: 2, "aria-label": t("admin.schemas.allowedFor", { key: d.key }) },
          ((cur.entry && cur.entry.allowedValues) || []).join("\n")) : null;
        const sync = () => { if (vals) vals.hidden = !sel.value; };
        sel.addEventListener("change", sync);
        sync();
        return { d, sel, vals, cur, el: h("tr", { dataset: { key: d.key } }, h("th", { scope: "row" }, d.key), h("td", sel), h("td", vals || "—")) };
      });
      const f = submitting(h("form.panel#class-edit-form", { "aria-labelledby": "class-edit-title" },
        h("h2#class-edit-title", t(c.classificationId ? "admin.schemas.editTitle" : "admin.schemas.newTitle", { name: c.name })),
        field("class-edit-name", t("admin.schemas.name"), name),
        rows.length ? h("table.list#class-attrs", h("caption", t("admin.schemas.attrsCaption")),
          h("thead", h("tr", ["admin.attributes.key", "admin.schemas.asked", "admin.attributes.allowed"].map((k) => h("th", { scope: "col" }, t(k))))),
          h("tbody", rows.map((r) => r.el))) : h("p.meta", t("admin.schemas.noAttributes")),
        h("p.meta", t("admin.attributes.allowedHint")),
        h("div.actions", h("button.primary", { type: "submit" }, t("common.save")), h("button", { type: "button", onclick: () => clear(editSlot) }, t("admin.cancel")))), async () => {
        const attributes = {};
        // Entries of attributes the page does not offer (other types)
        // go back as they were.
        for (const [k, v] of Object.entries(old)) {
          if (!defs.some((d) => d.key === k)) (attributes[v.where] = attributes[v.where] || []).push(v.entry);
        }
        for (const r of rows) {
          if (!r.sel.value) continue;
          const entry = { ...(r.cur.entry || {}), attributeKey: r.d.key };
          const allowed = r.vals ? values(r.vals.value) : [];
          if (allowed.length) entry.allowedValues = allowed; else delete entry.allowedValues;
          (attributes[r.sel.value] = attributes[r.sel.value] || []).push(entry);
        }
        // The API takes no document type that asks for nothing.
        if (!attributes.required && !attributes.optional) throw new PlainError(t("admin.schemas.needOne"));
        const n = name.value.trim();
        if (c.classificationId) {
          await api("PUT", `${base}/${enc(c.classificationId)}`, { body: { classification: { name: n, attributes } } });
          status(t("admin.schemas.saved", { name: n }), "info");
        } else {
          await api("POST", base, { body: { classification: { name: n, attributes } } });
          status(t("admin.schemas.created", { name: n }), "info");
        }
        clear(editSlot);
        await load();
      });
      clear(editSlot, f);
      name.focus();
    }

    const newName = h("input", { type: "text", required: true, autocomplete: "off", maxlength: 256 });
    const create = submitting(h("form.panel#class-form", { "aria-labelledby": "class-form-title" },
      h("h2#class-form-title", t("admin.schemas.create")),
      field("class-new-name", t("admin.schemas.name"), newName, t("admin.schemas.nameHint")),
      h("div.actions", h("button.primary", { type: "submit" }, t("admin.schemas.next")))), async () => {
      // Made on its first save, with what it asks for (the API takes
      // no document type that asks for nothing).
      const n = newName.value.trim();
      newName.value = "";
      edit({ name: n, attributes: {} });
    });

    await load();
    if (ctx.stale()) return;
    clear(main, tabNav("#/admin/schemas"), h("h1#schemas-title", t("admin.schemas.title")), h("p.meta", t("admin.schemas.intro", { site })),
      h("div.forms", create, editSlot),
      h("table.list#class-list", h("caption.sr", t("admin.schemas.caption", { site })),
        h("thead", h("tr", ["admin.schemas.name", "admin.schemas.requires", "admin.schemas.allows", "admin.actions"]
          .map((k) => h("th", { scope: "col" }, t(k))))), tbody));
  },
};

export default page;
