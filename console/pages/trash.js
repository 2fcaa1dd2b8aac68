// The trash: soft-deleted documents, one page at a time, with restore
// and (DELETE permission) purge, one by one or all at once ("Empty
// trash"). The API has no purge of the whole trash: the console lists the
// trash (GET /documents?deleted=true, pages of 100) and purges each
// document (DELETE /documents/{id}/purge), a few at a time, with progress
// and a summary of what failed.
import { h, clear, fmtDate } from "../js/dom.js";
import { api } from "../js/api.js";
import { can, siteQuery, pager, status, errorText } from "../js/ctx.js";
import { progressPanel, runBulk } from "../js/bulk.js";
import { t, lang } from "../i18n/index.js";

const enc = encodeURIComponent;

// everyDeleted lists the whole trash (ids and paths), page after page.
async function everyDeleted() {
  const out = [];
  let next = "";
  do {
    const page = await api("GET", "/documents", { query: siteQuery({ deleted: "true", limit: 100, next }) });
    for (const d of page.documents || []) out.push({ id: d.documentId, path: d.path });
    next = page.next || "";
  } while (next);
  return out;
}

export default {
  path: /^\/trash$/,
  nav: "nav.trash",
  href: "#/trash",
  async render(ctx, main) {
    const tbody = h("tbody");
    const pg = pager(load);
    const panel = progressPanel("trash-progress");
    const emptyBtn = h("button.danger#empty-trash", { type: "button", hidden: true, onclick: emptyTrash }, t("trash.emptyAll"));
    let current = "";
    async function load(token) {
      current = token;
      const out = await api("GET", "/documents", { query: siteQuery({ deleted: "true", limit: 50, next: token }) });
      if (ctx.stale()) return;
      const act = (fn, msg) => async () => {
        try { await fn(); status(msg, "info"); await load(current); } catch (ex) { status(errorText(ex), "error"); }
      };
      clear(tbody, (out.documents || []).map((d) => h("tr", { dataset: { doc: d.documentId } },
        h("td", d.path), h("td", fmtDate(d.deletedDate || d.lastModifiedDate, lang())),
        h("td",
          can("WRITE") ? h("button.small.restore", { type: "button", "aria-label": t("trash.restoreNamed", { name: d.path }),
            onclick: act(() => api("PUT", `/documents/${enc(d.documentId)}/restore`, { query: siteQuery() }), t("trash.restored", { name: d.path })) }, t("trash.restore")) : null,
          " ",
          can("DELETE") ? h("button.small.danger.purge", { type: "button", "aria-label": t("trash.purgeNamed", { name: d.path }), onclick: async () => {
            if (!confirm(t("trash.purgeConfirm", { name: d.path }))) return;
            await act(() => api("DELETE", `/documents/${enc(d.documentId)}/purge`, { query: siteQuery() }), t("trash.purged", { name: d.path }))();
          } }, t("trash.purge")) : null))));
      const empty = !tbody.children.length;
      if (empty) tbody.append(h("tr", h("td", { colspan: 3 }, t("trash.empty"))));
      emptyBtn.hidden = empty || !can("DELETE");
      pg.update(out.next);
    }

    async function emptyTrash() {
      emptyBtn.disabled = true;
      try {
        const docs = await everyDeleted();
        if (ctx.stale()) return;
        if (!docs.length) { await load(""); return; }
        if (!confirm(t("trash.emptyConfirm", { n: docs.length }))) return;
        const failed = await runBulk(panel, t("trash.emptying"), docs,
          (d) => api("DELETE", `/documents/${enc(d.id)}/purge`, { query: siteQuery() }), (d) => d.path);
        panel.finish(docs.length, failed, t("trash.emptied", { n: docs.length }));
        await load("");
      } catch (ex) {
        status(errorText(ex), "error");
      } finally {
        emptyBtn.disabled = false;
      }
    }

    await load("");
    if (ctx.stale()) return;
    clear(main, h("h1", t("trash.title")),
      h("div.actions", emptyBtn), panel.el,
      h("table.list#trash-list", h("caption.sr", t("trash.caption")),
        h("thead", h("tr", h("th", { scope: "col" }, t("doc.path")), h("th", { scope: "col" }, t("trash.deleted")), h("th", { scope: "col" }, t("trash.actions")))), tbody),
      pg.el);
  },
};
