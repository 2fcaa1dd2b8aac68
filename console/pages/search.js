// Fulltext search: results with highlighted snippets, narrowed by filters
// (folder and below, a tag, an attribute, a range of dates added) through
// POST /queryFulltext's bool query (API.md, "Fulltext search filters"),
// paged by from/size. The query and filters are in the hash, so Back and
// a reload work; typing searches as you go (the hash is replaced, not
// pushed, and only the results are drawn again).
import { h, clear, highlight, fmtDate } from "../js/dom.js";
import { api } from "../js/api.js";
import { siteQuery, navigate, errorText } from "../js/ctx.js";
import { selection } from "../js/select.js";
import { bulkBar } from "../js/bulkbar.js";
import { saveForm, viewsAside } from "../js/views.js";
import { t, lang } from "../i18n/index.js";

const SIZE = 20;
const FIELDS = ["q", "folder", "tag", "tagv", "attr", "attrv", "after", "before"];
// TYPING_MS is the pause after a key before the search is sent: short, so
// the results follow the last key within 150 ms (make bench's search as you
// type); an answer overtaken by a later key's is dropped (seq).
const TYPING_MS = 60;

// body is the /queryFulltext request of a query and its filters.
export function searchBody(p, from) {
  const filter = [];
  if (p.folder) filter.push({ term: { folder: p.folder } });
  if (p.tag) filter.push(p.tagv ? { term: { ["tags." + p.tag]: p.tagv } } : { exists: { field: "tags." + p.tag } });
  if (p.attr) filter.push(p.attrv ? { term: { ["attributes." + p.attr]: p.attrv } } : { exists: { field: "attributes." + p.attr } });
  if (p.after || p.before) {
    const r = {};
    if (p.after) r.gte = p.after;
    if (p.before) r.lte = p.before;
    filter.push({ range: { insertedDate: r } });
  }
  const must = p.q ? { match: { _all: p.q } } : { match_all: {} };
  const query = filter.length ? { bool: { must, filter } } : must;
  return { query, from, size: SIZE };
}

function hashOf(p, from) {
  const u = new URLSearchParams();
  for (const k of FIELDS) if (p[k]) u.set(k, p[k]);
  if (from) u.set("from", String(from));
  return "#/search?" + u.toString();
}

export default {
  path: /^\/search$/,
  nav: "nav.search",
  href: "#/search",
  async render(ctx, main) {
    const p = Object.fromEntries(FIELDS.map((k) => [k, ctx.query.get(k) || ""]));
    const from = Math.max(0, Number(ctx.query.get("from")) || 0);
    const box = h("input#q", { type: "search", value: p.q, "aria-label": t("search.label"), placeholder: t("search.placeholder"), autocomplete: "off" });
    const field = (id, key, type, label) => {
      const el = h("input", { id, type, value: p[key] });
      return [el, h("span.field", h("label", { for: id }, label), el)];
    };
    const [folder, folderF] = field("f-folder", "folder", "text", t("search.folder"));
    const [tag, tagF] = field("f-tag", "tag", "text", t("search.tag"));
    const [tagv, tagvF] = field("f-tagv", "tagv", "text", t("search.tagValue"));
    const [attr, attrF] = field("f-attr", "attr", "text", t("search.attribute"));
    const [attrv, attrvF] = field("f-attrv", "attrv", "text", t("search.attrValue"));
    const [after, afterF] = field("f-after", "after", "date", t("search.after"));
    const [before, beforeF] = field("f-before", "before", "date", t("search.before"));
    const current = () => ({ q: box.value.trim(), folder: folder.value.trim(), tag: tag.value.trim(), tagv: tagv.value.trim(),
      attr: attr.value.trim(), attrv: attrv.value.trim(), after: after.value, before: before.value });
    const filters = h("fieldset.filters#filters",
      h("legend", t("search.filters")),
      h("div.filtergrid", folderF, tagF, tagvF, attrF, attrvF, afterF, beforeF),
      h("button#clear-filters", { type: "button", onclick: () => {
        for (const el of [folder, tag, tagv, attr, attrv, after, before]) el.value = "";
        navigate(hashOf(current(), 0));
      } }, t("search.clearFilters")));
    const form = h("form#search-form", { role: "search" },
      h("div.inline", box, h("button.primary", { type: "submit" }, t("search.submit"))), filters);
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      navigate(hashOf(current(), 0));
    });
    const results = h("div#results", { "aria-live": "polite" });
    // Many results at once: a check box per result, all on the page or
    // all the search found (js/bulkbar.js).
    const sel = selection(() => bar.update());
    const bar = bulkBar(sel, () => run(current(), start));
    let start = from;
    // Saved views: this search (its words and filters) saved by name, and
    // the user's views beside the results (js/views.js).
    const aside = viewsAside();
    const saveSlot = h("div#view-slot");
    const saveView = h("button#save-view", { type: "button", onclick: () => {
      const { query } = searchBody(current(), 0);
      clear(saveSlot, saveForm({ query }, aside.draw));
    } }, t("views.save"));
    clear(main, h("h1", t("search.title")), h("div.withside", h("div.mainside", form, h("div.actions", saveView), saveSlot, bar.el, results), aside.el));
    box.focus();
    box.setSelectionRange(box.value.length, box.value.length);

    // Search as you type: the hash follows without a history entry,
    // and only the results are drawn again.
    let typing = 0, seq = 0;
    box.addEventListener("input", () => {
      clearTimeout(typing);
      typing = setTimeout(() => {
        const c = current();
        history.replaceState(null, "", hashOf(c, 0));
        run(c, 0);
      }, TYPING_MS);
    });

    async function run(c, begin) {
      start = begin;
      const mine = ++seq;
      if (!c.q && !FIELDS.slice(1).some((k) => c[k])) { clear(results); return; }
      let out;
      try {
        out = await api("POST", "/queryFulltext", { query: siteQuery(), body: searchBody(c, start) });
      } catch (e) {
        if (mine === seq && !ctx.stale()) clear(results, h("p.msg.error", { role: "alert" }, errorText(e)));
        return;
      }
      if (mine !== seq || ctx.stale()) return;
      const hits = (out.result && out.result.hits) || { hits: [], total: { value: 0 } };
      const total = (hits.total && hits.total.value) || 0;
      const go = (f) => navigate(hashOf(c, f));
      sel.rows();
      const every = h("button.small.link#select-results", { type: "button", onclick: () => selectAll(c, total) }, t("select.results", { n: total }));
      clear(results,
        h("div.listbar", h("p#result-count", t("search.count", { n: total })),
          hits.hits.length ? h("label.check", sel.headerBox, " ", t("select.page")) : null, total ? every : null),
        h("ol.results", { start: start + 1 }, hits.hits.map((hit) => {
          const d = hit._source || {};
          const snip = hit.highlight && hit.highlight.content && hit.highlight.content[0];
          // The pages of a scan or PDF the words are on (API.md, "Pages a
          // search hit matched"), the first eight of them.
          const pages = Array.isArray(hit.matchedPages) ? hit.matchedPages : [];
          const shown = pages.slice(0, 8).join(", ") + (pages.length > 8 ? ", …" : "");
          return h("li", { dataset: { id: hit._id } }, sel.box({ id: hit._id, path: d.path || hit._id }), " ",
            h("a", { href: "#/doc/" + encodeURIComponent(hit._id) }, d.path || hit._id),
            h("span.meta", " · ", fmtDate(d.lastModifiedDate, lang())),
            pages.length ? h("span.meta.pages", " · ", t("search.pages", { n: pages.length, pages: shown })) : null,
            snip ? h("p.snippet", highlight(snip)) : null);
        })),
        total > SIZE ? h("div.pager",
          h("button.prev", { type: "button", disabled: start === 0, onclick: () => go(Math.max(0, start - SIZE)) }, t("common.previous")),
          h("span.page", t("search.range", { from: start + 1, to: Math.min(start + SIZE, total), n: total })),
          h("button.next", { type: "button", disabled: start + SIZE >= total || start + SIZE >= 10000, onclick: () => go(start + SIZE) }, t("common.next"))) : null);
    }
    await run(p, from);

    // selectAll selects every result of the search, page after page (the
    // index serves the first 10,000).
    async function selectAll(c, total) {
      const found = [];
      try {
        for (let f = 0; f < Math.min(total, 10000); f += 1000) {
          const out = await api("POST", "/queryFulltext", { query: siteQuery(), body: { ...searchBody(c, f), size: 1000 } });
          const hits = (out.result && out.result.hits && out.result.hits.hits) || [];
          for (const hit of hits) found.push({ id: hit._id, path: (hit._source || {}).path || hit._id });
          if (hits.length < 1000) break;
        }
        sel.add(found);
      } catch (e) { clear(results, h("p.msg.error", { role: "alert" }, errorText(e))); }
    }
  },
};
