// The bar over a list with a selection (a folder, search results): how
// many are selected, and what to do with all of them: add a tag, set an
// attribute, move to a folder, download as one ZIP, move to the trash.
// A tag goes to up to TAG_BATCH documents per request (POST
// /documents/tags/batch); the other changes are one document per request
// (PUT .../attributes/{key}, PATCH path, DELETE ?softDelete=true). Each is
// a bulk job (js/bulk.js: progress, then what failed and why); the ZIP is
// one request (POST /documents/compress, up to 1,000 documents).
import { h, clear } from "./dom.js";
import { api, ApiError } from "./api.js";
import { can, siteQuery, status, errorText } from "./ctx.js";
import { progressPanel, runBulk, runBatches } from "./bulk.js";
import { definitions, input, body, typeName } from "./attrs.js";
import { PlainError } from "./errors.js";
import { findByPath, freeName } from "./upload.js";
import { t } from "../i18n/index.js";

const enc = encodeURIComponent;
const ZIP_MAX = 1000;
// TAG_BATCH is how many documents one POST /documents/tags/batch names
// (the API takes up to 200).
const TAG_BATCH = 200;

// tagBatch adds tags to the documents docs in one request and answers the
// ones the server left out, each with its reason as an API error.
async function tagBatch(docs, tags) {
  const out = await api("POST", "/documents/tags/batch", { query: siteQuery(), body: { documentIds: docs.map((d) => d.id), tags } });
  const byId = new Map(docs.map((d) => [d.id, d]));
  return (out.errors || []).map((e) => ({
    item: byId.get(e.key) || { id: e.key, path: e.key },
    error: new ApiError(/not found/i.test(e.error) ? 404 : 403, { message: e.error }),
  }));
}

const baseName = (p) => String(p || "").split("/").pop();

// moveTo is a document's new path in folder (keeping its name).
export function moveTo(path, folder) {
  const name = baseName(path);
  return folder ? folder + "/" + name : name;
}

// moveDoc moves a document into folder; where its name is taken there it
// keeps both as "name (2).ext" and says so in notes (never the API's
// "name (<id>).ext").
export async function moveDoc(d, folder, notes) {
  let to = moveTo(d.path, folder);
  if (to === d.path) return;
  const other = await findByPath(to);
  if (other && other !== d.id) {
    to = await freeName(to);
    notes.push(t("bulk.renamedOnMove", { path: d.path, name: to.split("/").pop() }));
  }
  await api("PATCH", `/documents/${enc(d.id)}`, { query: siteQuery(), body: { path: to } });
}

// nearFolders lists folders to offer as a new place for what is in
// folder: the top level's and folder's subfolders, and its parent.
export async function nearFolders(folder) {
  const out = new Set();
  const add = async (p) => {
    const r = await api("GET", "/folders", { query: siteQuery({ path: p, limit: 200 }) }).catch(() => ({}));
    for (const d of r.documents || []) if (d.folder) out.add((p ? p + "/" : "") + d.path);
  };
  await Promise.all([add(""), folder ? add(folder) : null]);
  if (folder.includes("/")) out.add(folder.split("/").slice(0, -1).join("/"));
  out.delete(folder);
  return [...out].sort(new Intl.Collator(undefined, { numeric: true }).compare);
}

// download starts the browser's download of a URL.
export function download(url, name) {
  const a = h("a", { href: url, download: name || "" });
  document.body.append(a);
  a.click();
  a.remove();
}

// bulkBar is the bar of a selection; done(kind) runs after a job (the page
// reloads its list); folders() lists folders to offer as move targets.
export function bulkBar(sel, done, folders) {
  const count = h("p.selected-count#selected-count", { role: "status" });
  const form = h("div.bulk-form#bulk-form");
  const panel = progressPanel("bulk-progress");
  const btn = (id, key, onclick, cls) => h("button" + (cls || "") + "#" + id, { type: "button", onclick }, t(key));
  const actions = h("div.actions",
    can("WRITE") ? btn("bulk-tag", "bulk.tag", () => show(tagForm())) : null,
    can("WRITE") ? btn("bulk-attr", "bulk.attribute", () => attrForm().then(show, (e) => status(errorText(e), "error"))) : null,
    can("WRITE") ? btn("bulk-move", "bulk.move", () => moveForm().then(show, (e) => status(errorText(e), "error"))) : null,
    btn("bulk-zip", "bulk.zip", zip),
    can("DELETE") ? btn("bulk-trash", "bulk.trash", trash, ".danger") : null,
    btn("bulk-clear", "bulk.clear", () => { sel.clear(); clear(form); }, ".link"));
  const bar = h("section.bulkbar#bulkbar", { "aria-label": t("bulk.label"), hidden: true }, count, actions, form);
  const el = h("div.bulkwrap", bar, panel.el);

  function show(f) {
    clear(form, f);
    const first = f.querySelector("input, select");
    if (first) first.focus();
  }

  // job runs work on every selected document, then reports; with
  // batch, work takes up to batch documents at once (runBatches).
  async function job(label, work, after, notes, batch) {
    const docs = sel.list();
    clear(form);
    const failed = batch ? await runBatches(panel, label, docs, batch, work, (d) => d.path) : await runBulk(panel, label, docs, work, (d) => d.path);
    panel.finish(docs.length, failed, null, notes);
    if (after) after(docs.filter((d) => !failed.some((f) => f.item.id === d.id)));
    done();
  }

  function panelForm(id, title, fields, submit, onsubmit) {
    const f = h("form.panel.bulk-panel", { id, "aria-labelledby": id + "-title" },
      h("h2", { id: id + "-title" }, title), fields,
      h("div.actions", h("button.primary", { type: "submit" }, submit), h("button", { type: "button", onclick: () => clear(form) }, t("admin.cancel"))));
    f.addEventListener("submit", (e) => { e.preventDefault(); onsubmit(); });
    return f;
  }

  function tagForm() {
    const k = h("input#bulk-tag-key", { type: "text", required: true, autocomplete: "off" });
    const v = h("input#bulk-tag-value", { type: "text", autocomplete: "off" });
    return panelForm("bulk-tag-form", t("bulk.tagTitle", { n: sel.size }), [
      h("div.field", h("label", { for: "bulk-tag-key" }, t("doc.tagKey")), k),
      h("div.field", h("label", { for: "bulk-tag-value" }, t("doc.tagValue")), v),
    ], t("bulk.apply"), () => job(t("bulk.tagging"), (docs) => tagBatch(docs, [{ key: k.value.trim(), value: v.value }]), null, null, TAG_BATCH));
  }

  async function attrForm() {
    const defs = await definitions();
    const usable = defs.list.filter((d) => d.type !== "GOVERNANCE");
    if (!usable.length) return h("p.msg.info#bulk-no-attrs", t("bulk.noAttributes"));
    const sel2 = h("select#bulk-attr-key", usable.map((d) => h("option", { value: d.key }, d.key + " (" + typeName(d.dataType) + ")")));
    const slot = h("div.field.slot");
    let el = null;
    const pick = () => {
      el = input("bulk-attr-value", defs.types[sel2.value], defs.allowed[sel2.value], undefined, defs.labels[sel2.value]);
      clear(slot, el ? [h("label", { for: "bulk-attr-value" }, t("doc.value")), el] : null);
    };
    sel2.addEventListener("change", pick);
    pick();
    return panelForm("bulk-attr-form", t("bulk.attrTitle", { n: sel.size }), [
      h("div.field", h("label", { for: "bulk-attr-key" }, t("doc.attribute")), sel2), slot,
    ], t("bulk.apply"), () => {
      const key = sel2.value, type = defs.types[key], value = body(type, el);
      job(t("bulk.setting"), (d) => api("PUT", `/documents/${enc(d.id)}/attributes/${enc(key)}`, { query: siteQuery(), body: { attribute: value } }));
    });
  }

  async function moveForm() {
    const known = folders ? await folders() : [];
    const to = h("input#bulk-move-to", { type: "text", autocomplete: "off", list: "bulk-folders", placeholder: t("bulk.moveExample") });
    return panelForm("bulk-move-form", t("bulk.moveTitle", { n: sel.size }), [
      h("div.field", h("label", { for: "bulk-move-to" }, t("bulk.moveTo")), to, h("small.meta#bulk-move-hint", t("bulk.moveHint"))),
      h("datalist#bulk-folders", known.map((f) => h("option", { value: f }))),
    ], t("bulk.moveButton"), () => {
      const folder = to.value.trim().replace(/^\/+|\/+$/g, "");
      const notes = [];
      job(t("bulk.moving"), (d) => moveDoc(d, folder, notes), (moved) => sel.remove(moved.map((d) => d.id)), notes);
    });
  }

  async function zip() {
    const docs = sel.list();
    try {
      if (docs.length > ZIP_MAX) throw new PlainError(t("bulk.zipTooMany", { n: ZIP_MAX }));
      const out = await api("POST", "/documents/compress", { query: siteQuery(), body: { documentIds: docs.map((d) => d.id) } });
      download(out.downloadUrl, "documents.zip");
      status(t("bulk.zipReady", { n: docs.length }), "info");
    } catch (e) { status(errorText(e), "error"); }
  }

  function trash() {
    if (!confirm(t("bulk.trashConfirm", { n: sel.size }))) return;
    job(t("bulk.trashing"), (d) => api("DELETE", `/documents/${enc(d.id)}`, { query: siteQuery({ softDelete: "true" }) }),
      (gone) => sel.remove(gone.map((d) => d.id)));
  }

  return {
    el,
    // update shows the bar while something is selected.
    update() {
      bar.hidden = sel.size === 0;
      count.textContent = t("bulk.selected", { n: sel.size });
      if (!sel.size) clear(form);
    },
  };
}
