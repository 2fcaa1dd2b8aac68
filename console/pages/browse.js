// Folders: breadcrumbs, one page of entries at a time (the API's `next`
// tokens; never the whole folder), and uploads by drag and drop or file
// pickers (js/upload.js).
import { h, clear, fmtBytes, fmtDate } from "../js/dom.js";
import { api } from "../js/api.js";
import { state, can, siteQuery, pager, status, errorText, navigate } from "../js/ctx.js";
import { uploader } from "../js/upload.js";
import { t, lang } from "../i18n/index.js";

const PAGE = 50;

export function folderHref(path) {
  return "#/browse/" + path.split("/").filter(Boolean).map(encodeURIComponent).join("/");
}

function crumbs(folder) {
  const parts = folder.split("/").filter(Boolean);
  const items = [h("li", h("a", { href: "#/browse" }, t("browse.root")))];
  parts.forEach((p, i) => {
    const last = i === parts.length - 1;
    items.push(h("li", last ? h("span", { "aria-current": "page" }, p) : h("a", { href: folderHref(parts.slice(0, i + 1).join("/")) }, p)));
  });
  return h("nav.crumbs", { "aria-label": t("browse.breadcrumbs") }, h("ol", items));
}

export default {
  path: /^\/browse(?:\/(.*))?$/,
  nav: "nav.browse",
  href: "#/browse",
  async render(ctx, main) {
    const folder = ctx.params[0].split("/").filter(Boolean).join("/");
    const tbody = h("tbody");
    const table = h("table.list#entries", h("caption.sr", t("browse.caption", { folder: folder || "/" })),
      h("thead", h("tr", h("th", { scope: "col" }, t("browse.name")), h("th", { scope: "col" }, t("browse.size")),
        h("th", { scope: "col" }, t("browse.modified")))), tbody);
    const pg = pager(load);

    async function load(token) {
      const out = await api("GET", "/folders", { query: siteQuery({ path: folder, limit: PAGE, next: token }) });
      if (ctx.stale()) return;
      clear(tbody, (out.documents || []).map((d) => {
        const name = d.folder ? d.path : d.path.split("/").pop();
        const href = d.folder ? folderHref((folder ? folder + "/" : "") + d.path) : "#/doc/" + encodeURIComponent(d.documentId);
        return h("tr", { class: d.folder ? "folder" : "doc" },
          h("td", h("a", { href }, h("img.icon", { src: d.folder ? "icons/folder.svg" : "icons/file.svg", alt: "", width: 16, height: 16 }), " ", name)),
          h("td", d.folder ? "" : fmtBytes(d.contentLength)),
          h("td", fmtDate(d.lastModifiedDate || d.insertedDate, lang())));
      }));
      if (!tbody.children.length) tbody.append(h("tr", h("td", { colspan: 3 }, t("browse.empty"))));
      pg.update(out.next);
    }

    const parts = [crumbs(folder), h("h1", folder ? folder.split("/").pop() : t("browse.title"))];
    if (can("WRITE")) {
      parts.push(uploader(folder, () => load("")));
      const input = h("input#newfolder", { type: "text", "aria-label": t("browse.newFolder"), placeholder: t("browse.newFolder") });
      const add = h("form.inline#newfolder-form", input, h("button", { type: "submit" }, t("browse.createFolder")));
      add.addEventListener("submit", async (e) => {
        e.preventDefault();
        const name = input.value.trim().replace(/\//g, "");
        if (!name) return;
        try {
          await api("POST", "/folders", { query: siteQuery(), body: { path: (folder ? folder + "/" : "") + name } });
          navigate(folderHref((folder ? folder + "/" : "") + name));
        } catch (ex) { status(errorText(ex), "error"); }
      });
      parts.push(add);
    }
    parts.push(table, pg.el);
    await load("");
    if (ctx.stale()) return;
    clear(main, parts);
    void state;
  },
};
