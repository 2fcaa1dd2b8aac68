// One document: preview (PDF in the browser's viewer, images, text),
// download, a new version, rename and move (its path), tags, typed
// attributes, versions (open, download, restore after a question), move
// to trash.
// Controls the user's site permissions do not allow are not shown; the
// API refuses them anyway.
import { h, clear, fmtBytes, fmtDate } from "../js/dom.js";
import { api, upload } from "../js/api.js";
import { state, can, siteQuery, status, flash, errorText, navigate } from "../js/ctx.js";
import { folderHref } from "./browse.js";
import { shareSection } from "../js/share.js";
import { esignSection } from "../js/esign.js";
import { ocrSection } from "../js/ocr.js";
import { notesSection } from "../js/notes.js";
import { named, kindOf } from "../js/words.js";
import { definitions, input, body, typeName } from "../js/attrs.js";
import { findByPath, freeName } from "../js/upload.js";
import { choose } from "../js/dialog.js";
import { SITE_ROLES, groupOf, groupLabel } from "../js/groups.js";
import { nearFolders } from "../js/bulkbar.js";
import { t, lang } from "../i18n/index.js";

const enc = encodeURIComponent;

function isText(ct) {
  return /^text\//.test(ct) || /json|xml|csv|javascript/.test(ct);
}

// preview shows the document, or with versionKey one of its earlier
// versions (GET /documents/{id}/url and /content take versionKey).
async function preview(id, doc, versionKey) {
  const ct = doc.contentType || "";
  const vq = versionKey ? { versionKey } : {};
  if (ct === "application/pdf" || ct.startsWith("image/")) {
    if (ct === "image/svg+xml") return h("p", t("doc.noPreview"));
    const { url } = await api("GET", `/documents/${enc(id)}/url`, { query: siteQuery({ inline: "true", ...vq }) });
    if (ct.startsWith("image/")) return h("img.preview#preview", { src: url, alt: t("doc.previewOf", { name: doc.path }) });
    return h("iframe.preview#preview", { src: url, title: t("doc.previewOf", { name: doc.path }) });
  }
  if (isText(ct) && (doc.contentLength || 0) <= 1 << 20) {
    const out = await api("GET", `/documents/${enc(id)}/content`, { query: siteQuery(vq) });
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

    const [tags, attrs, defn, versions, pv, actions, artifacts, activity, reviews] = await Promise.all([
      api("GET", `/documents/${enc(id)}/tags`, { query: { ...q, limit: 100 } }),
      api("GET", `/documents/${enc(id)}/attributes`, { query: { ...q, limit: 100 } }),
      definitions(),
      api("GET", `/documents/${enc(id)}/versions`, { query: { ...q, limit: 20 } }),
      preview(id, doc).catch((e) => h("p.msg.error", errorText(e))),
      api("GET", `/documents/${enc(id)}/actions`, { query: q }).catch(() => ({ actions: [] })),
      api("GET", `/documents/${enc(id)}/artifacts`, { query: { ...q, limit: 50 } }).catch(() => ({ documents: [] })),
      api("GET", `/documents/${enc(id)}/userActivities`, { query: { ...q, limit: 20 } }).catch(() => ({ userActivities: [] })),
      api("GET", `/documents/${enc(id)}/reviews`, { query: { ...q, limit: 20 } }).catch(() => ({ reviews: [] })),
    ]);
    if (ctx.stale()) return;
    const defs = { attributes: defn.list };
    const { types, allowed, labels } = defn;
    const esign = (doc.contentType || "") === "application/pdf" ? await esignSection(id, write, () => navigate(location.hash)).catch(() => null) : null;
    if (ctx.stale()) return;

    // Text recognition (OCR): its state, text and searchable PDF, kept
    // up to date while it runs (js/ocr.js).
    // The panel's poll also brings the Actions table up to date (a new
    // answer only: If-None-Match makes the others 304s).
    let actionsBox = null;
    const ocr = ocrSection({ id, doc, actions: actions.actions || [], artifacts: artifacts.documents || [], write, reload, stale: ctx.stale,
      onChange: (acts) => {
        if (!actionsBox || !actionsBox.isConnected) return;
        const next = actionsSection(acts);
        actionsBox.replaceWith(next);
        actionsBox = next;
      } });

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

    // Versions: the first is the current state. Any version opens in the
    // preview and downloads; an earlier one is restored after a question
    // (the current state then becomes a version, nothing is lost).
    const previewBox = h("section.previewbox", { "aria-label": t("doc.preview") }, pv);
    const showVersion = async (v, when) => {
      try {
        const el = await preview(id, { ...doc, contentType: v.contentType || doc.contentType, contentLength: v.contentLength }, v.versionKey);
        clear(previewBox, h("p.msg.info#version-note", { role: "status" }, t("doc.showingVersion", { date: when }), " ",
          h("button.link#version-back", { type: "button", onclick: () => clear(previewBox, pv) }, t("doc.backToCurrent"))), el);
      } catch (ex) { status(errorText(ex), "error"); }
    };
    const downloadVersion = async (v) => {
      try {
        const { url } = await api("GET", `/documents/${enc(id)}/url`, { query: { ...q, versionKey: v.versionKey } });
        const a = h("a", { href: url, download: (v.path || doc.path).split("/").pop() });
        document.body.append(a); a.click(); a.remove();
      } catch (ex) { status(errorText(ex), "error"); }
    };
    const verRows = (versions.documents || []).map((v, i) => {
      const when = fmtDate(v.insertedDate, lang());
      return h("tr", { dataset: { version: v.versionKey } },
        h("td", when, i === 0 ? h("span.meta", " (" + t("doc.current") + ")") : null), h("td", v.userId || ""), h("td", fmtBytes(v.contentLength)), h("td", v.path || ""),
        h("td.version-actions",
          h("button.small.open", { type: "button", "aria-label": t("doc.openVersionOf", { date: when }), onclick: () => showVersion(v, when) }, t("doc.openVersion")), " ",
          h("button.small.download", { type: "button", "aria-label": t("doc.downloadVersionOf", { date: when }), onclick: () => downloadVersion(v) }, t("doc.download")), " ",
          i > 0 && write ? h("button.small.restore", { type: "button", "aria-label": t("doc.restoreOf", { date: when }), onclick: async () => {
            if (!confirm(t("doc.restoreConfirm", { date: when }))) return;
            await act(() => api("PUT", `/documents/${enc(id)}/versions`, { query: q, body: { versionKey: v.versionKey } }), t("doc.restored"))();
          } }, t("doc.restore")) : null));
    });

    // A new version: the file's bytes go to the document's own upload URL
    // (GET /documents/{id}/upload), with progress.
    let newVersion = null;
    if (write) {
      const file = h("input#version-file.sr", { type: "file" });
      const bar = h("progress#version-progress", { max: 1, value: 0, hidden: true, "aria-label": t("doc.uploadingVersion") });
      file.addEventListener("change", async () => {
        const f = file.files[0];
        file.value = "";
        if (!f) return;
        bar.hidden = false;
        try {
          const out = await api("GET", `/documents/${enc(id)}/upload`, { query: { ...q, contentLength: f.size } });
          await upload(out.url, f, (loaded) => { bar.value = loaded / (f.size || 1); });
          status(t("doc.versionUploaded", { name: f.name }), "info");
          reload();
        } catch (ex) { bar.hidden = true; status(errorText(ex), "error"); }
      });
      newVersion = h("span.new-version", file, h("label.button#new-version", { for: "version-file" }, t("doc.newVersion")), " ", bar);
    }

    // Actions (the pipeline's work on the document), with a retry of
    // the failed ones.
    // The Actions table, drawn again from the OCR panel's polls.
    const actionsSection = (acts) => {
      // The engine's own message (an error's text) is there to read on
      // demand, for whoever fixes it.
      const actionRows = acts.map((a) => h("tr", { dataset: { status: a.status } }, h("td", named("actiontype.", a.type)), h("td.status", named("action.", a.status)),
        h("td", a.message ? h("details", h("summary", t("doc.details")), h("span.meta", a.message)) : ""),
        h("td", fmtDate(a.completedDate || a.startDate || a.insertedDate, lang()))));
      const retry = write && acts.some((a) => a.status === "FAILED" || a.status === "MAX_RETRIES_REACHED") ? h("button#retry-actions", { type: "button",
        onclick: act(() => api("POST", `/documents/${enc(id)}/actions/retry`, { query: q }), t("doc.retrying")) }, t("doc.retry")) : null;
      return h("section#actions", h("h2", t("doc.actions")), acts.length ? h("table.list",
        h("thead", h("tr", [t("doc.action"), t("doc.status"), t("doc.message"), t("doc.when")].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", actionRows)) : h("p", t("doc.noActions")), retry);
    };
    actionsBox = actionsSection(actions.actions || []);

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

    // Reviews of the document, and a request for one (WRITE): what to
    // check, how many decisions it needs, and who may decide (a group,
    // offered from the user's own groups; anyone with write access when
    // left empty).
    const siteIds = state.sites.map((x) => x.siteId);
    const reviewRows = (reviews.reviews || []).map((rv) => h("li", { dataset: { review: rv.reviewId } },
      h("strong", rv.reviewCategory || ""), " · ", named("reviews.status.", rv.reviewStatus), " · ",
      t("doc.reviewNeeds", { n: Number(rv.requiredDecisions) || 1 }),
      (rv.approvalGroups || []).length ? [" · ", t("doc.reviewBy", { groups: rv.approvalGroups.map((g) => groupLabel(g, siteIds)).join(", ") })] : null,
      rv.comments ? h("p.meta", rv.comments) : null));
    let reviewForm = null;
    if (write) {
      const cat = h("input#review-category", { type: "text", required: true, maxlength: 255, autocomplete: "off" });
      const needs = h("input#review-needs", { type: "number", min: 1, max: 100, value: 1, required: true });
      // Who decides: anyone with write access, a role of this site or
      // one of the user's own teams, chosen from a list; another group
      // (an identity provider's) typed by name.
      const own = SITE_ROLES.map((r) => groupOf(state.site, r));
      const teams = (state.user && state.user.roles || []).filter((r) => r !== "Admins" && !own.includes(r));
      const who = h("select#review-who",
        h("option", { value: "" }, t("doc.reviewAnyone")),
        h("optgroup", { label: t("doc.reviewRoles", { site: state.site }) },
          SITE_ROLES.map((r) => h("option", { value: groupOf(state.site, r) }, groupLabel(groupOf(state.site, r), siteIds)))),
        teams.length ? h("optgroup", { label: t("doc.reviewTeams") }, teams.map((g) => h("option", { value: g }, groupLabel(g, siteIds)))) : null,
        h("option", { value: "*other" }, t("doc.reviewOther")));
      const group = h("input#review-group", { type: "text", autocomplete: "off" });
      const otherField = h("div.field", h("label", { for: "review-group" }, t("doc.reviewOtherName")), group);
      const syncWho = () => { otherField.hidden = who.value !== "*other"; };
      who.addEventListener("change", syncWho);
      syncWho();
      const note = h("textarea#review-comments", { rows: 2 });
      reviewForm = h("form.panel#review-form", { "aria-labelledby": "review-form-title" }, h("h3#review-form-title", t("doc.requestReview")),
        h("div.field", h("label", { for: "review-category" }, t("doc.reviewCategory")), cat, h("small.meta", t("doc.reviewCategoryHint"))),
        h("div.field", h("label", { for: "review-needs" }, t("doc.reviewDecisions")), needs),
        h("div.field", h("label", { for: "review-who" }, t("doc.reviewGroup")), who), otherField,
        h("div.field", h("label", { for: "review-comments" }, t("reviews.comment")), note),
        h("div.actions", h("button.primary", { type: "submit" }, t("doc.requestReview"))));
      reviewForm.addEventListener("submit", act(() => {
        const review = { reviewCategory: cat.value.trim(), requiredDecisions: Math.max(1, Number(needs.value) || 1) };
        const chosen = who.value === "*other" ? group.value.split(",").map((x) => x.trim()).filter(Boolean) : who.value ? [who.value] : [];
        if (chosen.length) review.approvalGroups = chosen;
        if (note.value.trim()) review.comments = note.value.trim();
        return api("POST", `/documents/${enc(id)}/reviews`, { query: q, body: { review } });
      }, t("doc.reviewRequested")));
    }

    // The activity trail, newest first.
    const activityRows = (activity.userActivities || []).map((a) => h("li", h("span.meta", fmtDate(a.insertedDate, lang())), " · ",
      a.userId || named("source.", a.source), " · ", named("activity.", a.type),
      a.changed && a.changed.length ? " (" + a.changed.map((c) => named("changed.", c)).join(", ") + ")" : ""));

    // Rename and move, which edit the path: a folder (offered from the
    // folders around) and a name. A path another document has already is
    // asked about (keep both as "name (2).ext", or not), never left to the
    // API's "name (<id>).ext".
    const pathSlot = h("div#path-slot");
    const editPath = (focus) => {
      const name = doc.path.split("/").pop();
      const dir = h("input#path-folder", { type: "text", value: folder, autocomplete: "off", list: "path-folders", placeholder: t("bulk.moveExample") });
      const nm = h("input#path-name", { type: "text", value: name, required: true, autocomplete: "off" });
      const shown = h("p.meta#path-result");
      const sync = () => { shown.textContent = t("doc.newPath", { path: target() }); };
      const target = () => {
        const d = dir.value.trim().replace(/^\/+|\/+$/g, "");
        return (d ? d + "/" : "") + nm.value.trim().replace(/\//g, "");
      };
      dir.addEventListener("input", sync);
      nm.addEventListener("input", sync);
      const f = h("form.panel#path-form", { "aria-labelledby": "path-form-title" }, h("h2#path-form-title", t("doc.editPath")),
        h("div.field", h("label", { for: "path-folder" }, t("doc.folder")), dir, h("small.meta", t("bulk.moveHint"))),
        h("datalist#path-folders"),
        h("div.field", h("label", { for: "path-name" }, t("doc.name")), nm), shown,
        h("div.actions", h("button.primary", { type: "submit" }, t("common.save")), h("button", { type: "button", onclick: () => clear(pathSlot) }, t("admin.cancel"))));
      f.addEventListener("submit", async (e) => {
        e.preventDefault();
        let to = target();
        if (!nm.value.trim() || to === doc.path) { clear(pathSlot); return; }
        try {
          const other = await findByPath(to);
          if (other && other !== id) {
            const { value } = await choose({ id: "path-conflict", title: t("doc.pathTakenTitle"), text: t("doc.pathTaken", { path: to }),
              choices: [{ value: "both", label: t("upload.keepBoth"), primary: true }, { value: "cancel", label: t("admin.cancel") }], cancel: "cancel" });
            if (value !== "both") return;
            to = await freeName(to);
          }
          await api("PATCH", `/documents/${enc(id)}`, { query: q, body: { path: to } });
          status(t("doc.pathChanged", { path: to }), "info");
          reload();
        } catch (ex) { status(errorText(ex), "error"); }
      });
      clear(pathSlot, f);
      sync();
      (focus === "folder" ? dir : nm).focus();
      nearFolders(folder).then((list) => clear(f.querySelector("#path-folders"), list.map((x) => h("option", { value: x })))).catch(() => {});
    };
    const pathButtons = h("span.path-buttons",
      h("button#rename", { type: "button", onclick: () => editPath("name") }, t("browse.rename")), " ",
      h("button#move", { type: "button", onclick: () => editPath("folder") }, t("bulk.move")));

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
      h("div.actions", download, newVersion, write ? pathButtons : null, trash),
      pathSlot,
      h("div.docgrid",
        previewBox,
        h("div.side",
          h("section#tags", h("h2", t("doc.tags")), tagRows.length ? h("ul.tags", tagRows) : h("p", t("doc.noTags")), tagForm),
          h("section#attributes", h("h2", t("doc.attributes")),
            attrRows.length ? h("table.kv", h("tbody", attrRows)) : h("p", t("doc.noAttrs")), attrForm),
          write ? shareSection(id) : null)),
      ocr,
      esign,
      h("section#versions", h("h2", t("doc.versions")), h("table.list",
        h("thead", h("tr", [t("doc.when"), t("doc.by"), t("browse.size"), t("doc.path"), t("doc.versionActions")].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", verRows))),
      actionsBox,
      artifactRows.length ? h("section#artifacts", h("h2", t("doc.artifacts")), h("table.list",
        h("thead", h("tr", [t("doc.category"), t("doc.path"), t("doc.type"), t("browse.size"), t("doc.versionActions")].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", artifactRows))) : null,
      notesSection(id, write, del),
      h("section#doc-reviews", h("h2", t("doc.reviews")), reviewRows.length ? h("ul.doc-reviews", reviewRows) : h("p", t("doc.noReviews")), reviewForm),
      h("section#activity", h("h2", t("doc.activity")), activityRows.length ? h("ul.activity", activityRows) : h("p", t("doc.noActivity"))));
  },
};
