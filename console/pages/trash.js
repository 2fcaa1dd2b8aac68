// The trash: soft-deleted documents, one page at a time, with restore
// and (DELETE permission) purge.
import { h, clear, fmtDate } from "../js/dom.js";
import { api } from "../js/api.js";
import { can, siteQuery, pager, status, errorText } from "../js/ctx.js";
import { t, lang } from "../i18n/index.js";

export default {
  path: /^\/trash$/,
  nav: "nav.trash",
  href: "#/trash",
  async render(ctx, main) {
    const tbody = h("tbody");
    const pg = pager(load);
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
          can("WRITE") ? h("button.small.restore", { type: "button", onclick: act(() => api("PUT", `/documents/${encodeURIComponent(d.documentId)}/restore`, { query: siteQuery() }), t("trash.restored", { name: d.path })) }, t("trash.restore")) : null,
          " ",
          can("DELETE") ? h("button.small.danger.purge", { type: "button", onclick: async () => {
            if (!confirm(t("trash.purgeConfirm", { name: d.path }))) return;
            await act(() => api("DELETE", `/documents/${encodeURIComponent(d.documentId)}/purge`, { query: siteQuery() }), t("trash.purged", { name: d.path }))();
          } }, t("trash.purge")) : null))));
      if (!tbody.children.length) tbody.append(h("tr", h("td", { colspan: 3 }, t("trash.empty"))));
      pg.update(out.next);
    }
    await load("");
    if (ctx.stale()) return;
    clear(main, h("h1", t("trash.title")),
      h("table.list#trash-list", h("thead", h("tr", h("th", { scope: "col" }, t("doc.path")), h("th", { scope: "col" }, t("trash.deleted")), h("th", { scope: "col" }, t("trash.actions")))), tbody),
      pg.el);
  },
};
