// Attributes and the site schema (GOVERN; FormKiQ's /attributes and
// /sites/{siteId}/schema/document): the site's attributes with their data
// type, and for each whether the schema requires it on every document
// and which values it allows. Defining an attribute is POST /attributes
// (WRITE), removing one DELETE /attributes/{key} (DELETE); its place in
// the schema is the schema's PUT, which replaces the whole schema: the
// page reads it, changes the one attribute and sends the rest back as it
// was.
import { h, clear } from "../js/dom.js";
import { api } from "../js/api.js";
import { state, can, status, errorText } from "../js/ctx.js";
import { canGovern, tabNav, field, submitting } from "../js/admin.js";
import { typeName } from "../js/attrs.js";
import { t } from "../i18n/index.js";

const enc = encodeURIComponent;
// The data types a person picks from (entities, publications and
// watermarks are set up through the API).
const TYPES = ["STRING", "NUMBER", "DATE", "BOOLEAN", "KEY_ONLY"];

// values reads allowed values from a text box: one per line (or comma).
function values(text) {
  return [...new Set(String(text).split(/[\n,]/).map((v) => v.trim()).filter(Boolean))];
}

export default {
  path: /^\/admin\/attributes$/,
  async render(ctx, main) {
    if (!canGovern()) { clear(main, tabNav(""), h("p.msg.error", { role: "alert" }, t("admin.denied"))); return; }
    const site = state.site;
    const schemaPath = `/sites/${enc(site)}/schema/document`;
    const tbody = h("tbody");
    const editSlot = h("div#attr-edit");
    let schema = { name: "", attributes: {} };

    function place(key) {
      const a = schema.attributes || {};
      const req = (a.required || []).find((x) => x.attributeKey === key);
      if (req) return { where: "required", entry: req };
      const opt = (a.optional || []).find((x) => x.attributeKey === key);
      return opt ? { where: "optional", entry: opt } : { where: "", entry: null };
    }

    // saveSchema puts an attribute in the schema as required, optional
    // (with allowed values) or not at all, keeping everything else.
    async function saveSchema(key, where, allowed) {
      const a = JSON.parse(JSON.stringify(schema.attributes || {}));
      const strip = (list) => (list || []).filter((x) => x.attributeKey !== key).map((x) => { const y = { ...x }; delete y.localizedAllowedValues; return y; });
      a.required = strip(a.required);
      a.optional = strip(a.optional);
      if (where) {
        const old = place(key).entry || {};
        const entry = { ...old, attributeKey: key };
        delete entry.localizedAllowedValues;
        if (allowed.length) entry.allowedValues = allowed; else delete entry.allowedValues;
        a[where].push(entry);
      }
      for (const k of ["required", "optional"]) if (!a[k].length) delete a[k];
      await api("PUT", schemaPath, { body: { name: schema.name || t("admin.attributes.schemaName"), attributes: a } });
    }

    async function load() {
      const [defs, sc] = await Promise.all([
        api("GET", "/attributes", { query: { siteId: site, limit: 100 } }),
        api("GET", schemaPath).catch(() => ({ attributes: {} })),
      ]);
      if (ctx.stale()) return;
      schema = { name: sc.name || "", attributes: sc.attributes || {} };
      const list = (defs.attributes || []).filter((d) => d.type !== "GOVERNANCE" && TYPES.includes(d.dataType));
      clear(tbody, list.map((d) => {
        const p = place(d.key);
        const allowed = (p.entry && p.entry.allowedValues) || [];
        return h("tr", { dataset: { key: d.key } },
          h("td", d.key), h("td", typeName(d.dataType)),
          h("td", p.where ? t("admin.attributes." + p.where) : t("admin.attributes.notInSchema")),
          h("td", allowed.length ? allowed.join(", ") : "—"),
          h("td",
            h("button.small.edit", { type: "button", "aria-label": t("admin.attributes.editNamed", { key: d.key }), onclick: () => edit(d, p, allowed) }, t("admin.attributes.edit")), " ",
            can("DELETE") ? h("button.small.danger.remove", { type: "button", "aria-label": t("admin.attributes.removeNamed", { key: d.key }), onclick: async () => {
              if (!confirm(t("admin.attributes.removeConfirm", { key: d.key }))) return;
              try {
                if (p.where) await saveSchema(d.key, "", []);
                await api("DELETE", `/attributes/${enc(d.key)}`, { query: { siteId: site } });
                status(t("admin.attributes.removed", { key: d.key }), "info");
                await load();
              } catch (ex) { status(errorText(ex), "error"); }
            } }, t("admin.attributes.remove")) : null));
      }));
      if (!list.length) tbody.append(h("tr", h("td", { colspan: 5 }, t("admin.attributes.empty"))));
    }

    // schemaFields are the schema controls of an attribute: required,
    // optional or neither, and allowed values (text only).
    function schemaFields(prefix, dataType, where, allowed) {
      const sel = h("select", ["", "optional", "required"].map((w) => h("option", { value: w, selected: w === where },
        w ? t("admin.attributes." + w) : t("admin.attributes.notInSchema"))));
      const vals = h("textarea", { rows: 3 }, allowed.join("\n"));
      const valsField = field(prefix + "-allowed", t("admin.attributes.allowed"), vals, t("admin.attributes.allowedHint"));
      const sync = () => { valsField.hidden = dataType() !== "STRING" || !sel.value; };
      sel.addEventListener("change", sync);
      return { sel, vals, sync, el: [field(prefix + "-where", t("admin.attributes.inSchema"), sel, t("admin.attributes.inSchemaHint")), valsField] };
    }

    function edit(d, p, allowed) {
      const sf = schemaFields("attr-edit", () => d.dataType, p.where, allowed);
      const f = submitting(h("form.panel#attr-edit-form", { "aria-labelledby": "attr-edit-title" },
        h("h2#attr-edit-title", t("admin.attributes.editTitle", { key: d.key })), sf.el,
        h("div.actions", h("button.primary", { type: "submit" }, t("common.save")), h("button", { type: "button", onclick: () => clear(editSlot) }, t("admin.cancel")))), async () => {
        await saveSchema(d.key, sf.sel.value, d.dataType === "STRING" ? values(sf.vals.value) : []);
        status(t("admin.attributes.saved", { key: d.key }), "info");
        clear(editSlot);
        await load();
      });
      clear(editSlot, f);
      sf.sync();
      sf.sel.focus();
    }

    const key = h("input", { type: "text", required: true, autocomplete: "off", maxlength: 256 });
    const type = h("select", TYPES.map((x) => h("option", { value: x }, typeName(x))));
    const sf = schemaFields("attr-new", () => type.value, "", []);
    type.addEventListener("change", sf.sync);
    const create = submitting(h("form.panel#attr-form", { "aria-labelledby": "attr-form-title" },
      h("h2#attr-form-title", t("admin.attributes.create")),
      field("attr-new-key", t("admin.attributes.key"), key, t("admin.attributes.keyHint")),
      field("attr-new-type", t("admin.attributes.type"), type), sf.el,
      h("div.actions", h("button.primary", { type: "submit" }, t("admin.attributes.create")))), async () => {
      const k = key.value.trim();
      await api("POST", "/attributes", { query: { siteId: site }, body: { attribute: { key: k, dataType: type.value } } });
      if (sf.sel.value) await saveSchema(k, sf.sel.value, type.value === "STRING" ? values(sf.vals.value) : []);
      status(t("admin.attributes.created", { key: k }), "info");
      key.value = ""; sf.vals.value = ""; sf.sel.value = ""; sf.sync();
      await load();
    });
    sf.sync();

    await load();
    if (ctx.stale()) return;
    clear(main, tabNav("#/admin/attributes"), h("h1", t("admin.attributes.title")), h("p.meta", t("admin.attributes.intro", { site })),
      h("div.forms", create, editSlot),
      h("table.list#attr-list", h("caption.sr", t("admin.attributes.caption", { site })),
        h("thead", h("tr", ["admin.attributes.key", "admin.attributes.type", "admin.attributes.inSchema", "admin.attributes.allowed", "admin.actions"]
          .map((k) => h("th", { scope: "col" }, t(k))))), tbody));
  },
};
