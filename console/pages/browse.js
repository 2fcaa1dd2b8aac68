// Folders: breadcrumbs, the folder's entries as a table or a grid, sorted
// by a column (name in natural order: n15 before n144), "page X of Y" and
// the total; uploads by drag and drop or file pickers (js/upload.js);
// many documents selected at once for bulk work (js/select.js,
// js/bulkbar.js); rename, move (a button, or dragging onto a folder or a
// breadcrumb) and delete.
//
// The API sorts and counts a folder (GET /folders with sort, sortBy:
// totalCount and `next` tokens in that order, API.md "Folder listings in
// an order"): the console asks for one page of 50 in the chosen order, at
// any folder size. A folder of more than SERVER_MAX entries the API
// answers in its stored order ("sorted": false): paged by its tokens,
// without a total or a sort (console/DESIGN.md, "Folders").
import { h, clear, fmtBytes, fmtDate } from "../js/dom.js";
import { api } from "../js/api.js";
import { can, siteQuery, status, errorText, navigate, flash } from "../js/ctx.js";
import { uploader } from "../js/upload.js";
import { selection } from "../js/select.js";
import { bulkBar, moveDoc, nearFolders } from "../js/bulkbar.js";
import { runBulk, progressPanel } from "../js/bulk.js";
import { kindOf } from "../js/words.js";
import { t, lang } from "../i18n/index.js";

const PAGE = 50;
const SERVER_MAX = 5000; // the API's MaxSortedFolder
const enc = encodeURIComponent;

export function folderHref(path) {
  return "#/browse/" + path.split("/").filter(Boolean).map(encodeURIComponent).join("/");
}

// The columns one can sort by, each with the API's sortBy (the kind
// column sorts by content type).
const SORT_BY = { name: "path", kind: "contentType", size: "contentLength", modified: "lastModifiedDate" };
const SORTS = Object.keys(SORT_BY);

function view() {
  try { return localStorage.getItem("quire.view") === "grid" ? "grid" : "table"; } catch (_) { return "table"; }
}

export default {
  path: /^\/browse(?:\/(.*))?$/,
  nav: "nav.browse",
  href: "#/browse",
  async render(ctx, main) {
    const folder = ctx.params[0].split("/").filter(Boolean).join("/");
    const here = (name) => (folder ? folder + "/" : "") + name;
    const o = {
      sort: SORTS.includes(ctx.query.get("sort")) ? ctx.query.get("sort") : "name",
      dir: ctx.query.get("dir") === "desc" ? "desc" : "asc",
      view: view(),
      page: 0,
    };
    // The listing: the API's pages in the chosen order (tokens of the
    // pages seen, the rows of the one shown), its total, and whether the
    // API sorted it (not above SERVER_MAX entries).
    const list = { tokens: [""], docs: [], next: null, total: null, sorted: true };
    let dragging = null;  // what is being dragged: {docs, folder}
    let thumbTimer = null, thumbTries = 0; // awaitThumbs
    const write = can("WRITE");

    const sel = selection(() => bar.update());
    const bar = bulkBar(sel, () => reload(), knownFolders);
    const body = h("div#listing");
    const countEl = h("p.meta#entry-count", { role: "status" });
    const prev = h("button.prev", { type: "button", onclick: () => go(-1) }, t("common.previous"));
    const next = h("button.next", { type: "button", onclick: () => go(1) }, t("common.next"));
    const pageEl = h("span.page");
    const pagerEl = h("div.pager", prev, pageEl, next);

    function setHash() {
      const u = new URLSearchParams();
      if (o.sort !== "name") u.set("sort", o.sort);
      if (o.dir !== "asc") u.set("dir", o.dir);
      const qs = u.toString();
      history.replaceState(null, "", folderHref(folder) + (qs ? "?" + qs : ""));
    }

    function rows() { return list.docs; }

    function pages() { return list.total === null ? null : Math.max(1, Math.ceil(list.total / PAGE)); }

    // load reads the page at token in the chosen order; false when the
    // page was left meanwhile.
    function pageQuery(token) {
      return siteQuery({ path: folder, limit: PAGE, next: token, sortBy: SORT_BY[o.sort], sort: o.dir === "desc" ? "DESC" : "ASC" });
    }
    async function load(token) {
      const out = await api("GET", "/folders", { query: pageQuery(token) });
      if (ctx.stale()) return false;
      thumbTries = 0;
      list.docs = entries(out);
      list.next = out.next || null;
      list.sorted = out.sorted !== false;
      list.total = typeof out.totalCount === "number" ? out.totalCount : null;
      o.page = list.tokens.length - 1;
      return true;
    }

    async function go(step) {
      if (step > 0 && list.next) list.tokens.push(list.next);
      else if (step < 0 && list.tokens.length > 1) list.tokens.pop();
      else return;
      try {
        if (await load(list.tokens[list.tokens.length - 1])) draw();
      } catch (e) { status(errorText(e), "error"); }
    }

    function sortHeader(col, label) {
      const active = list.sorted && o.sort === col;
      const th = h("th", { scope: "col", "aria-sort": active ? (o.dir === "asc" ? "ascending" : "descending") : null });
      if (!list.sorted) { th.append(label); return th; }
      th.append(h("button.sort", { type: "button", dataset: { sort: col }, onclick: async () => {
        o.dir = o.sort === col && o.dir === "asc" ? "desc" : "asc";
        o.sort = col;
        list.tokens = [""];
        setHash();
        try {
          if (!(await load(""))) return;
        } catch (e) { status(errorText(e), "error"); return; }
        draw();
        const b = body.querySelector(`button.sort[data-sort="${col}"]`);
        if (b) b.focus();
      } }, label, h("span.arrow", { "aria-hidden": "true" }, active ? (o.dir === "asc" ? " ▲" : " ▼") : "")));
      return th;
    }

    // entries are a listing's rows with their name and full path (the API
    // gives a folder's name, and a document's full path, as `path`).
    function entries(out) {
      return (out.documents || []).map((d) => ({ ...d, name: d.folder ? d.path : d.path.split("/").pop(), full: d.folder ? here(d.path) : d.path }));
    }

    function entryHref(d) {
      return d.folder ? folderHref(d.full) : "#/doc/" + enc(d.documentId);
    }

    function item(d) { return { id: d.documentId, path: d.full }; }

    function draw() {
      const shown = rows();
      sel.rows();
      if (o.view === "grid") {
        clear(body, sel.size || shown.some((d) => !d.folder) ? h("div.grid-head", h("label.check", sel.headerBox, " ", t("select.page"))) : null,
          h("ul.grid#grid", { "aria-label": t("browse.caption", { folder: folder || "/" }) }, shown.map((d) => card(d))));
        if (!shown.length) body.append(h("p#empty-folder", t("browse.empty")));
        awaitThumbs();
      } else {
        const tbody = h("tbody", shown.map((d) => row(d)));
        if (!shown.length) tbody.append(h("tr", h("td", { colspan: 5 }, t("browse.empty"))));
        clear(body, h("table.list#entries", h("caption.sr", t("browse.caption", { folder: folder || "/" })),
          h("thead", h("tr", h("th.check", { scope: "col" }, h("span.sr", t("select.column")), sel.headerBox),
            sortHeader("name", t("browse.name")), sortHeader("kind", t("browse.kind")), sortHeader("size", t("browse.size")), sortHeader("modified", t("browse.modified")))),
          tbody));
      }
      sel.refresh();
      const n = pages();
      prev.disabled = list.tokens.length < 2;
      next.disabled = !list.next;
      pageEl.textContent = n ? t("common.pageOf", { n: o.page + 1, of: n }) : t("common.page", { n: o.page + 1 });
      pagerEl.hidden = list.tokens.length < 2 && !list.next;
      countEl.textContent = list.total !== null ? t("browse.count", { n: list.total }) : !list.sorted ? t("browse.countMany", { n: SERVER_MAX }) : "";
    }

    function icon(d) {
      return h("img.icon", { src: d.folder ? "icons/folder.svg" : "icons/file.svg", alt: "", width: 16, height: 16 });
    }

    function row(d) {
      const name = d.name;
      const tr = h("tr", { class: d.folder ? "folder" : "doc", dataset: { name, id: d.documentId } },
        h("td.check", d.folder ? null : sel.box(item(d))),
        h("td.name", h("a", { href: entryHref(d), draggable: write ? "true" : null }, icon(d), " ", name)),
        h("td", d.folder ? t("browse.folder") : kindOf(d.contentType)),
        h("td", d.folder ? "" : fmtBytes(d.contentLength)),
        h("td", fmtDate(d.lastModifiedDate || d.insertedDate, lang())));
      wireDrag(tr, d);
      return tr;
    }

    function card(d) {
      const li = h(d.folder ? "li.card-entry.folder" : "li.card-entry.doc", { dataset: { name: d.name, id: d.documentId } },
        h("a.thumb", { href: entryHref(d), "aria-hidden": "true", tabindex: "-1", draggable: write ? "true" : null }, thumb(d)),
        h("div.card-text",
          d.folder ? null : sel.box(item(d)), " ",
          h("a.card-name", { href: entryHref(d), draggable: write ? "true" : null }, d.name)),
        h("p.meta", d.folder ? t("browse.folder") : [kindOf(d.contentType), " · ", fmtBytes(d.contentLength)]));
      wireDrag(li, d);
      return li;
    }

    // thumb: the entry's first-page thumbnail (`thumbnailUrl`, made once
    // by the server's pipeline: API.md "Thumbnails"); until it is made, a
    // small image shows itself (loaded when scrolled to) and other
    // documents their kind's icon.
    function thumb(d) {
      if (d.thumbnailUrl) return inView(h("img.thumb-img", { alt: "", decoding: "async" }), d.thumbnailUrl);
      const big = h("img.thumb-icon", { src: d.folder ? "icons/folder.svg" : "icons/file.svg", alt: "", width: 48, height: 48 });
      if (!d.folder && /^image\/(png|jpeg|gif|webp)$/.test(d.contentType || "") && Number(d.contentLength) <= 1 << 20) {
        lazyImage(big, d);
      }
      return big;
    }

    const seen = typeof IntersectionObserver === "function" ? new IntersectionObserver((list) => {
      for (const e of list) {
        if (!e.isIntersecting) continue;
        seen.unobserve(e.target);
        const d = e.target._doc;
        api("GET", `/documents/${enc(d.documentId)}/url`, { query: siteQuery({ inline: "true" }) })
          .then((out) => { e.target.src = out.url; e.target.className = "thumb-img"; e.target.removeAttribute("width"); e.target.removeAttribute("height"); })
          .catch(() => {});
      }
    }) : null;
    function lazyImage(img, d) { if (seen) { img._doc = d; seen.observe(img); } }

    // inView gives a thumbnail its URL once its card is on the screen (or
    // about to be): a first load asks for the thumbnails a person sees
    // first, not all 50 of the page at once, six at a time, in page order
    // (issue 47's first-load goal).
    const shown = typeof IntersectionObserver === "function" ? new IntersectionObserver((list) => {
      for (const e of list) {
        if (!e.isIntersecting) continue;
        shown.unobserve(e.target);
        e.target.src = e.target._src;
      }
    }, { rootMargin: "0px 0px 100px 0px" }) : null;
    function inView(img, url) {
      if (!shown) { img.src = url; return img; }
      img._src = url;
      shown.observe(img);
      return img;
    }

    // Thumbnails still being made (a PDF or an image the pipeline has not
    // rendered yet; a listing never makes one): the grid asks for the same
    // page again every few seconds, ten times at most, and each card whose
    // thumbnail has come shows it.
    const THUMBABLE = /^(application\/pdf|image\/(png|jpeg|gif|tiff))\b/;
    function awaitThumbs() {
      clearTimeout(thumbTimer);
      const waiting = list.docs.some((d) => !d.folder && !d.thumbnailUrl && THUMBABLE.test(d.contentType || ""));
      if (o.view !== "grid" || !waiting || thumbTries >= 10) return;
      const token = list.tokens[list.tokens.length - 1];
      thumbTimer = setTimeout(async () => {
        thumbTries++;
        if (ctx.stale() || o.view !== "grid") return;
        let out;
        try { out = await api("GET", "/folders", { query: pageQuery(token) }); } catch (_) { return; }
        if (ctx.stale() || token !== list.tokens[list.tokens.length - 1]) return;
        const got = new Map((out.documents || []).filter((d) => d.thumbnailUrl).map((d) => [d.documentId, d.thumbnailUrl]));
        for (const d of list.docs) {
          const u = got.get(d.documentId);
          if (!u || d.thumbnailUrl) continue;
          d.thumbnailUrl = u;
          const a = body.querySelector(`#grid li[data-id="${CSS.escape(d.documentId)}"] a.thumb`);
          if (a) clear(a, thumb(d));
        }
        awaitThumbs();
      }, 3000);
    }

    // Dragging a document (or the selection it belongs to) or a folder
    // onto a folder row, a folder card or a breadcrumb moves it there.
    function wireDrag(el, d) {
      if (!write) return;
      el.addEventListener("dragstart", (e) => {
        const docs = !d.folder && sel.has(d.documentId) ? sel.list() : d.folder ? [] : [item(d)];
        dragging = { docs, folder: d.folder ? d.full : null };
        e.dataTransfer.effectAllowed = "move";
        e.dataTransfer.setData("text/plain", d.full);
      });
      el.addEventListener("dragend", () => { dragging = null; });
      if (d.folder) dropTarget(el, d.full);
    }

    if (!(await load(""))) return;

    const parts = [crumbs(folder, dropTarget), h("div.titlebar", h("h1", folder ? folder.split("/").pop() : t("browse.title")), folderTools())];
    if (write) {
      parts.push(uploader(folder, () => reload()));
      const input = h("input#newfolder", { type: "text", "aria-label": t("browse.newFolder"), placeholder: t("browse.newFolder") });
      const add = h("form.inline#newfolder-form", input, h("button", { type: "submit" }, t("browse.createFolder")));
      add.addEventListener("submit", async (e) => {
        e.preventDefault();
        const name = input.value.trim().replace(/\//g, "");
        if (!name) return;
        try {
          await api("POST", "/folders", { query: siteQuery(), body: { path: here(name) } });
          navigate(folderHref(here(name)));
        } catch (ex) { status(errorText(ex), "error"); }
      });
      parts.push(add);
    }
    const viewBtn = (v, key) => h("button.small", { type: "button", "aria-pressed": String(o.view === v), dataset: { view: v }, onclick: (e) => {
      o.view = v;
      try { localStorage.setItem("quire.view", v); } catch (_) { /* storage off */ }
      for (const b of e.currentTarget.parentNode.querySelectorAll("button")) b.setAttribute("aria-pressed", String(b.dataset.view === v));
      draw();
    } }, t(key));
    const selectAll = h("button.small.link#select-folder", { type: "button", onclick: selectFolder }, t("select.folder"));
    parts.push(h("div.listbar", h("div.views", { role: "group", "aria-label": t("browse.view") }, viewBtn("table", "browse.table"), viewBtn("grid", "browse.grid")),
      countEl, selectAll), bar.el, body, pagerEl);
    clear(main, parts);
    draw();
    bar.update();

    // reload reads the page shown again (after an upload, a move...); a
    // page that no longer exists starts the listing over.
    async function reload() {
      try {
        if (!(await load(list.tokens[list.tokens.length - 1]))) return;
      } catch (_) {
        list.tokens = [""];
        if (!(await load(""))) return;
      }
      if (!list.docs.length && list.tokens.length > 1) {
        list.tokens = [""];
        if (!(await load(""))) return;
      }
      draw();
    }

    // selectFolder selects every document of the folder (not of its
    // subfolders), page by page.
    async function selectFolder() {
      try {
        const docs = [];
        let token = "";
        do {
          const out = await api("GET", "/folders", { query: siteQuery({ path: folder, limit: 1000, next: token }) });
          docs.push(...entries(out));
          token = out.next || "";
        } while (token);
        sel.add(docs.filter((d) => !d.folder).map(item));
      } catch (e) { status(errorText(e), "error"); }
    }

    // knownFolders offers the folders around as move targets.
    function knownFolders() { return nearFolders(folder); }

    function dropTarget(el, target) {
      if (!write) return;
      el.addEventListener("dragover", (e) => {
        if (!dragging || dragging.folder === target) return;
        e.preventDefault();
        e.dataTransfer.dropEffect = "move";
        el.classList.add("drop");
      });
      el.addEventListener("dragleave", () => el.classList.remove("drop"));
      el.addEventListener("drop", async (e) => {
        e.preventDefault();
        el.classList.remove("drop");
        const d = dragging;
        dragging = null;
        if (!d) return;
        if (d.folder) await moveFolder(d.folder, target);
        else await moveDocs(d.docs, target);
      });
    }

    async function moveDocs(docs, target) {
      if (!docs.length) return;
      const panel = progressPanel("drop-progress");
      body.before(panel.el);
      const notes = [];
      const failed = await runBulk(panel, t("bulk.moving"), docs, (d) => moveDoc(d, target, notes), (d) => d.path);
      panel.finish(docs.length, failed, t("browse.moved", { n: docs.length - failed.length, folder: target || t("browse.root") }), notes);
      sel.remove(docs.filter((d) => !failed.some((f) => f.item.id === d.id)).map((d) => d.id));
      await reload();
    }

    async function moveFolder(source, target) {
      try {
        await api("POST", "/indices/folder/move", { query: siteQuery(), body: { source, target: target || "/" } });
        status(t("browse.folderMoved", { name: source.split("/").pop(), folder: target || t("browse.root") }), "info");
        await reload();
      } catch (e) { status(errorText(e), "error"); }
    }

    // folderTools: rename, move, delete (an empty folder). The API moves
    // a folder with what it holds (POST /indices/folder/move) and renames
    // one (POST /folders/{indexKey}/moves with name), keeping its
    // permissions either way.
    function folderTools() {
      if (!folder || !write) return null;
      const name = folder.split("/").pop();
      const parent = folder.split("/").slice(0, -1).join("/");
      const out = h("div.actions.folder-tools");
      const slot = h("div#folder-form");
      const form = (id, title, fields, submit, act) => {
        const f = h("form.panel", { id, "aria-labelledby": id + "-title" }, h("h2", { id: id + "-title" }, title), fields,
          h("div.actions", h("button.primary", { type: "submit" }, submit), h("button", { type: "button", onclick: () => clear(slot) }, t("admin.cancel"))));
        f.addEventListener("submit", async (e) => {
          e.preventDefault();
          try { await act(); } catch (ex) { status(errorText(ex), "error"); }
        });
        clear(slot, f);
        const first = f.querySelector("input");
        if (first) { first.focus(); first.select(); }
      };
      out.append(
        h("button.small#rename-folder", { type: "button", onclick: () => {
          const input = h("input#rename-folder-name", { type: "text", value: name, required: true, autocomplete: "off" });
          form("rename-folder-form", t("browse.renameFolder"), h("div.field", h("label", { for: "rename-folder-name" }, t("browse.newName")), input,
            h("small.meta", t("browse.renameFolderHint"))), t("browse.rename"), async () => {
            const to = input.value.trim().replace(/\//g, "");
            if (!to || to === name) { clear(slot); return; }
            const target = (parent ? parent + "/" : "") + to;
            // A rename is a move into its own parent under the new name
            // (POST /folders/{indexKey}/moves with name): the folder keeps
            // its documents and permissions. The move runs in steps; the
            // page waits (up to a minute) until the old name is gone.
            await api("POST", `/folders/${enc(await indexKeyOf(folder))}/moves`, { query: siteQuery(), body: { path: parent || "/", name: to } });
            status(t("browse.renaming", { name: to }), "info");
            let done = false;
            for (const end = Date.now() + 60000; Date.now() < end;) {
              if (!(await folderThere(folder))) { done = true; break; }
              await new Promise((ok) => setTimeout(ok, 250));
            }
            flash(t(done ? "browse.renamed" : "browse.stillRenaming", { name: to }), "info");
            navigate(folderHref(target));
          });
        } }, t("browse.rename")),
        h("button.small#move-folder", { type: "button", onclick: async () => {
          const known = (await knownFolders()).filter((f) => f !== folder && !f.startsWith(folder + "/"));
          const input = h("input#move-folder-to", { type: "text", list: "move-folder-list", autocomplete: "off", placeholder: t("bulk.moveExample") });
          form("move-folder-form", t("browse.moveFolder", { name }), [h("div.field", h("label", { for: "move-folder-to" }, t("bulk.moveTo")), input,
            h("small.meta", t("bulk.moveHint"))), h("datalist#move-folder-list", known.map((f) => h("option", { value: f })))], t("bulk.moveButton"), async () => {
            const target = input.value.trim().replace(/^\/+|\/+$/g, "");
            await api("POST", "/indices/folder/move", { query: siteQuery(), body: { source: folder, target: target || "/" } });
            flash(t("browse.folderMoved", { name, folder: target || t("browse.root") }), "info");
            navigate(folderHref((target ? target + "/" : "") + name));
          });
        } }, t("bulk.move")),
        can("DELETE") ? h("button.small.danger#delete-folder", { type: "button", onclick: async () => {
          if (!confirm(t("browse.deleteFolderConfirm", { name }))) return;
          try {
            await api("DELETE", `/folders/${enc(await indexKeyOf(folder))}`, { query: siteQuery() });
            flash(t("browse.folderDeleted", { name }), "info");
            navigate(folderHref(parent));
          } catch (ex) { status(errorText(ex), "error"); }
        } }, t("browse.deleteFolder")) : null);
      return h("div.folder-bar", out, slot);
    }

    // folderThere says whether a folder is still in its parent's listing.
    async function folderThere(path) {
      try { await indexKeyOf(path); return true; } catch (e) { if (e.plain === "err.notFound") return false; throw e; }
    }

    // indexKeyOf finds a folder's indexKey in its parent's listing.
    async function indexKeyOf(path) {
      const parent = path.split("/").slice(0, -1).join("/");
      const name = path.split("/").pop();
      let token = "";
      do {
        const out = await api("GET", "/folders", { query: siteQuery({ path: parent, limit: 1000, next: token }) });
        const f = (out.documents || []).find((d) => d.folder && d.path === name);
        if (f) return f.indexKey;
        token = out.next || "";
      } while (token);
      throw Object.assign(new Error("folder not found"), { plain: "err.notFound" });
    }
  },
};

function crumbs(folder, dropTarget) {
  const parts = folder.split("/").filter(Boolean);
  const root = h("a", { href: "#/browse" }, t("browse.root"));
  dropTarget(root, "");
  const items = [h("li", root)];
  parts.forEach((p, i) => {
    const last = i === parts.length - 1;
    if (last) { items.push(h("li", h("span", { "aria-current": "page" }, p))); return; }
    const a = h("a", { href: folderHref(parts.slice(0, i + 1).join("/")) }, p);
    dropTarget(a, parts.slice(0, i + 1).join("/"));
    items.push(h("li", a));
  });
  return h("nav.crumbs", { "aria-label": t("browse.breadcrumbs") }, h("ol", items));
}
