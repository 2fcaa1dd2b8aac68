// One document: preview (PDF in the browser's viewer, images, text),
// download, tags, typed attributes, versions with restore, move to trash.
// Controls the user's site permissions do not allow are not shown; the
// API refuses them anyway.
import { h, clear, fmtBytes, fmtDate } from "../js/dom.js";
import { api } from "../js/api.js";
import { can, siteQuery, status, flash, errorText, navigate } from "../js/ctx.js";
import { folderHref } from "./browse.js";
import { shareSection } from "../js/share.js";
import { esignSection } from "../js/esign.js";
import { named, kindOf } from "../js/words.js";
import { definitions, input, body, typeName } from "../js/attrs.js";
import { t, lang } from "../i18n/index.js";

const enc = encodeURIComponent;

function isText(ct) {
  return /^text\//.test(ct) || /json|xml|csv|javascript/.test(ct);
}

async function preview(id, doc) {
  const ct = doc.contentType || "";
  if (ct === "application/pdf" || ct.startsWith("image/")) {
    if (ct === "image/svg+xml") return h("p", t("doc.noPreview"));
    const { url } = await api("GET", `/documents/${enc(id)}/url`, { query: siteQuery({ inline: "true" }) });
    if (ct.startsWith("image/")) return h("img.preview#preview", { src: url, alt: t("doc.previewOf", { name: doc.path }) });
    return h("iframe.preview#preview", { src: url, title: t("doc.previewOf", { name: doc.path }) });
  }
  if (isText(ct) && (doc.contentLength || 0) <= 1 << 20) {
    const out = await api("GET", `/documents/${enc(id)}/content`, { query: siteQuery() });
    if (typeof out.content === "string" && !out.isBase64) return h("pre.preview#preview", out.content);
  }
  return h("p", t("doc.noPreview"));
}

// attrValue is the shown value of a document attribute; allowed values
// show their label from the site's locale (labels), as the edit
// controls do, the value itself where the locale has none.
function attrValue(a, labels) {
  const label = (v) => (labels && Object.hasOwn(labels, v) && labels[v]) || v;
  if ("stringValue" in a) return label(a.stringValue);
  if ("dateValue" in a) return String(a.dateValue).slice(0, 10);
  if ("numberValue" in a) return String(a.numberValue);
  if ("booleanValue" in a) return a.booleanValue ? t("common.yes") : t("common.no");
  if (a.stringValues) return a.stringValues.map(label).join(", ");
  if (a.numberValues) return a.numberValues.join(", ");
  return "";
}

export default {
  path: /^\/doc\/([^/]+)$/,
  async render(ctx, main) {
    const id = ctx.params[0];
    const q = siteQuery();
    const doc = await api("GET", `/documents/${enc(id)}`, { query: q });
    if (ctx.stale()) return;
    const write = can("WRITE"), del = can("DELETE");
    const folder = doc.path.split("/").slice(0, -1).join("/");
    const reload = () => navigate(location.hash);
    const act = (fn, done) => async (e) => {
      if (e) e.preventDefault();
      try { await fn(); status(done || t("common.saved"), "info"); reload(); } catch (ex) { status(errorText(ex), "error"); }
    };

    // Download: a signed URL with an attachment disposition.
    const download = h("button#download", { type: "button", onclick: async () => {
      try {
        const { url } = await api("GET", `/documents/${enc(id)}/url`, { query: q });
        const a = h("a", { href: url, download: doc.path.split("/").pop() });
        document.body.append(a); a.click(); a.remove();
      } catch (ex) { status(errorText(ex), "error"); }
    } }, t("doc.download"));

    const [tags, attrs, defn, versions, pv, actions, artifacts, activity] = await Promise.all([
      api("GET", `/documents/${enc(id)}/tags`, { query: { ...q, limit: 100 } }),
      api("GET", `/documents/${enc(id)}/attributes`, { query: { ...q, limit: 100 } }),
      definitions(),
      api("GET", `/documents/${enc(id)}/versions`, { query: { ...q, limit: 20 } }),
      preview(id, doc).catch((e) => h("p.msg.error", errorText(e))),
      api("GET", `/documents/${enc(id)}/actions`, { query: q }).catch(() => ({ actions: [] })),
      api("GET", `/documents/${enc(id)}/artifacts`, { query: { ...q, limit: 50 } }).catch(() => ({ documents: [] })),
      api("GET", `/documents/${enc(id)}/userActivities`, { query: { ...q, limit: 20 } }).catch(() => ({ userActivities: [] })),
    ]);
    if (ctx.stale()) return;
    const defs = { attributes: defn.list };
    const { types, allowed, labels } = defn;
    const esign = (doc.contentType || "") === "application/pdf" ? await esignSection(id, write, () => navigate(location.hash)).catch(() => null) : null;
    if (ctx.stale()) return;

    // Tags.
    const tagRows = (tags.tags || []).map((tg) => h("li", h("span.tag", tg.key, tg.value ? " = " + tg.value : ""),
      del ? h("button.small", { type: "button", "aria-label": t("doc.removeTag", { key: tg.key }),
        onclick: act(() => api("DELETE", `/documents/${enc(id)}/tags/${enc(tg.key)}`, { query: q })) }, "×") : null));
    let tagForm = null;
    if (write) {
      const k = h("input#tag-key", { required: true }), v = h("input#tag-value");
      tagForm = h("form.inline#tag-form", h("label", { for: "tag-key" }, t("doc.tagKey")), k,
        h("label", { for: "tag-value" }, t("doc.tagValue")), v, h("button", { type: "submit" }, t("doc.addTag")));
      tagForm.addEventListener("submit", act(() => api("POST", `/documents/${enc(id)}/tags`, { query: q, body: { tags: [{ key: k.value, value: v.value }] } })));
    }

    // Attributes: each with the control of its type.
    const attrRows = (attrs.attributes || []).map((a, i) => {
      const type = types[a.key] || a.valueType || "STRING";
      const cid = "attr-" + i;
      if (!write || type === "KEY_ONLY" || a.stringValues || a.numberValues) {
        return h("tr", { dataset: { key: a.key } }, h("th", { scope: "row" }, a.key), h("td.value", attrValue(a, labels[a.key])), h("td"));
      }
      const value = a.stringValue ?? a.dateValue ?? a.numberValue ?? a.booleanValue;
      const el = input(cid, type, allowed[a.key], value, labels[a.key]);
      const save = h("button.small", { type: "button", onclick: act(() => api("PUT", `/documents/${enc(id)}/attributes/${enc(a.key)}`, { query: q, body: { attribute: body(type, el) } })) }, t("common.save"));
      return h("tr", { dataset: { key: a.key } }, h("th", { scope: "row" }, h("label", { for: cid }, a.key)), h("td", el),
        h("td", save, del ? h("button.small", { type: "button", "aria-label": t("doc.removeAttr", { key: a.key }),
          onclick: act(() => api("DELETE", `/documents/${enc(id)}/attributes/${enc(a.key)}`, { query: q })) }, "×") : null));
    });
    let attrForm = null;
    const unused = (defs.attributes || []).filter((d) => !(attrs.attributes || []).some((a) => a.key === d.key) && d.type !== "GOVERNANCE");
    if (write && unused.length) {
      const sel = h("select#attr-key", unused.map((d) => h("option", { value: d.key }, d.key + " (" + typeName(d.dataType) + ")")));
      const slot = h("span.slot");
      let el = null;
      const pickType = () => { el = input("attr-new", types[sel.value], allowed[sel.value], undefined, labels[sel.value]); clear(slot, el ? [h("label.sr", { for: "attr-new" }, t("doc.value")), el] : null); };
      sel.addEventListener("change", pickType);
      pickType();
      attrForm = h("form.inline#attr-form", h("label", { for: "attr-key" }, t("doc.attribute")), sel, slot, h("button", { type: "submit" }, t("doc.addAttr")));
      attrForm.addEventListener("submit", act(() => api("PUT", `/documents/${enc(id)}/attributes/${enc(sel.value)}`, { query: q, body: { attribute: body(types[sel.value], el) } })));
    }

    // Versions: the first is the current state.
    const verRows = (versions.documents || []).map((v, i) => h("tr", { dataset: { version: v.versionKey } },
      h("td", fmtDate(v.insertedDate, lang())), h("td", v.userId || ""), h("td", fmtBytes(v.contentLength)), h("td", v.path || ""),
      h("td", i === 0 ? t("doc.current") : write ? h("button.small.restore", { type: "button",
        onclick: act(() => api("PUT", `/documents/${enc(id)}/versions`, { query: q, body: { versionKey: v.versionKey } }), t("doc.restored")) }, t("doc.restore")) : "")));

    // Actions (the pipeline's work on the document), with a retry of
    // the failed ones.
    const acts = actions.actions || [];
    // The engine's own message (an error's text) is there to read on
    // demand, for whoever fixes it.
    const actionRows = acts.map((a) => h("tr", { dataset: { status: a.status } }, h("td", named("actiontype.", a.type)), h("td.status", named("action.", a.status)),
      h("td", a.message ? h("details", h("summary", t("doc.details")), h("span.meta", a.message)) : ""),
      h("td", fmtDate(a.completedDate || a.startDate || a.insertedDate, lang()))));
    const retry = write && acts.some((a) => a.status === "FAILED" || a.status === "MAX_RETRIES_REACHED") ? h("button#retry-actions", { type: "button",
      onclick: act(() => api("POST", `/documents/${enc(id)}/actions/retry`, { query: q }), t("doc.retrying")) }, t("doc.retry")) : null;

    // Artifacts (OCR text, renditions, certified and signed copies).
    const artifactRows = (artifacts.documents || []).map((a) => h("tr", h("td", named("artifact.", a.artifactCategory)), h("td", a.path || a.artifactId),
      h("td", kindOf(a.contentType)), h("td", fmtBytes(a.contentLength)),
      h("td", h("button.small", { type: "button", onclick: async () => {
        try {
          const { url } = await api("GET", `/documents/${enc(id)}/url`, { query: { ...q, artifactId: a.artifactId } });
          const link = h("a", { href: url, download: "" });
          document.body.append(link); link.click(); link.remove();
        } catch (ex) { status(errorText(ex), "error"); }
      } }, t("doc.download")))));

    // The activity trail, newest first.
    const activityRows = (activity.userActivities || []).map((a) => h("li", h("span.meta", fmtDate(a.insertedDate, lang())), " · ",
      a.userId || named("source.", a.source), " · ", named("activity.", a.type),
      a.changed && a.changed.length ? " (" + a.changed.map((c) => named("changed.", c)).join(", ") + ")" : ""));

    const trash = del ? h("button.danger#trash", { type: "button", onclick: async () => {
      if (!confirm(t("doc.trashConfirm", { name: doc.path }))) return;
      try {
        await api("DELETE", `/documents/${enc(id)}`, { query: { ...q, softDelete: "true" } });
        flash(t("doc.trashed", { name: doc.path }), "info");
        navigate(folderHref(folder));
      } catch (ex) { status(errorText(ex), "error"); }
    } }, t("doc.trash")) : null;

    clear(main,
      h("nav.crumbs", { "aria-label": t("browse.breadcrumbs") }, h("ol", h("li", h("a", { href: folderHref(folder) }, folder || t("browse.root"))))),
      h("h1#doc-title", doc.path.split("/").pop()),
      h("p.meta", kindOf(doc.contentType), " · ", fmtBytes(doc.contentLength), " · ", t("doc.modified", { date: fmtDate(doc.lastModifiedDate, lang()), user: doc.userId || "" })),
      h("div.actions", download, trash),
      h("div.docgrid",
        h("section.previewbox", { "aria-label": t("doc.preview") }, pv),
        h("div.side",
          h("section#tags", h("h2", t("doc.tags")), tagRows.length ? h("ul.tags", tagRows) : h("p", t("doc.noTags")), tagForm),
          h("section#attributes", h("h2", t("doc.attributes")),
            attrRows.length ? h("table.kv", h("tbody", attrRows)) : h("p", t("doc.noAttrs")), attrForm),
          write ? shareSection(id) : null)),
      esign,
      h("section#versions", h("h2", t("doc.versions")), h("table.list",
        h("thead", h("tr", [t("doc.when"), t("doc.by"), t("browse.size"), t("doc.path"), t("doc.versionActions")].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", verRows))),
      h("section#actions", h("h2", t("doc.actions")), acts.length ? h("table.list",
        h("thead", h("tr", [t("doc.action"), t("doc.status"), t("doc.message"), t("doc.when")].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", actionRows)) : h("p", t("doc.noActions")), retry),
      artifactRows.length ? h("section#artifacts", h("h2", t("doc.artifacts")), h("table.list",
        h("thead", h("tr", [t("doc.category"), t("doc.path"), t("doc.type"), t("browse.size"), t("doc.versionActions")].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", artifactRows))) : null,
      h("section#activity", h("h2", t("doc.activity")), activityRows.length ? h("ul.activity", activityRows) : h("p", t("doc.noActivity"))));
  },
};
