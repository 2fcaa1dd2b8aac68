// Fulltext search: results with highlighted snippets, paged by from/size
// (POST /queryFulltext), the query in the hash so Back works.
import { h, clear, highlight, fmtDate } from "../js/dom.js";
import { api } from "../js/api.js";
import { siteQuery, navigate } from "../js/ctx.js";
import { t, lang } from "../i18n/index.js";

const SIZE = 20;

export default {
  path: /^\/search$/,
  nav: "nav.search",
  href: "#/search",
  async render(ctx, main) {
    const q = ctx.query.get("q") || "";
    const from = Math.max(0, Number(ctx.query.get("from")) || 0);
    const box = h("input#q", { type: "search", value: q, "aria-label": t("search.label"), placeholder: t("search.placeholder") });
    const form = h("form.inline#search-form", { role: "search" }, box, h("button.primary", { type: "submit" }, t("search.submit")));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      navigate("#/search?q=" + encodeURIComponent(box.value.trim()));
    });
    const results = h("div#results");
    clear(main, h("h1", t("search.title")), form, results);
    box.focus();
    if (!q) return;
    const out = await api("POST", "/queryFulltext", { query: siteQuery(), body: { query: { match: { _all: q } }, from, size: SIZE } });
    if (ctx.stale()) return;
    const hits = (out.result && out.result.hits) || { hits: [], total: { value: 0 } };
    const total = (hits.total && hits.total.value) || 0;
    const go = (f) => navigate("#/search?q=" + encodeURIComponent(q) + "&from=" + f);
    clear(results,
      h("p#result-count", { role: "status" }, t("search.count", { n: total })),
      h("ol.results", { start: from + 1 }, hits.hits.map((hit) => {
        const d = hit._source || {};
        const snip = hit.highlight && hit.highlight.content && hit.highlight.content[0];
        return h("li", h("a", { href: "#/doc/" + encodeURIComponent(hit._id) }, d.path || hit._id),
          h("span.meta", " · ", fmtDate(d.lastModifiedDate, lang())),
          snip ? h("p.snippet", highlight(snip)) : null);
      })),
      total > SIZE ? h("div.pager",
        h("button.prev", { type: "button", disabled: from === 0, onclick: () => go(Math.max(0, from - SIZE)) }, t("common.previous")),
        h("span.page", t("search.range", { from: from + 1, to: Math.min(from + SIZE, total), n: total })),
        h("button.next", { type: "button", disabled: from + SIZE >= total || from + SIZE >= 10000, onclick: () => go(from + SIZE) }, t("common.next"))) : null);
  },
};
