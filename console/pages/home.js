// The start page: the user's saved views (js/views.js), the documents
// added most recently (GET /documents, newest first) and the reviews
// waiting for the user (GET /reviews), each a short list with a link on.
import { h, clear, fmtDate } from "../js/dom.js";
import { api } from "../js/api.js";
import { siteQuery, errorText } from "../js/ctx.js";
import { views, viewList } from "../js/views.js";
import { t, lang } from "../i18n/index.js";

const enc = encodeURIComponent;

export default {
  path: /^\/home$/,
  nav: "nav.home",
  href: "#/home",
  async render(ctx, main) {
    const safe = (p) => p.then((v) => ({ v }), (e) => ({ e }));
    const [vs, docs, revs] = await Promise.all([
      safe(views()),
      safe(api("GET", "/documents", { query: siteQuery({ limit: 10 }) })),
      safe(api("GET", "/reviews", { query: siteQuery({ limit: 10 }) })),
    ]);
    if (ctx.stale()) return;
    const err = (r) => h("p.msg.error", errorText(r.e));
    const viewBox = h("div#home-views-list");
    const drawViews = (list) => clear(viewBox, viewList(list, { removable: true, changed: () => views().then(drawViews, () => {}) }));
    if (vs.e) clear(viewBox, err(vs)); else drawViews(vs.v);
    const docList = docs.e ? err(docs) : (docs.v.documents || []).length
      ? h("ul.recent", docs.v.documents.map((d) => h("li", h("a", { href: "#/doc/" + enc(d.documentId) }, d.path || d.documentId),
        h("span.meta", " · ", fmtDate(d.insertedDate, lang())))))
      : h("p", t("home.noDocuments"));
    const revList = revs.e ? err(revs) : (revs.v.reviews || []).length
      ? h("ul.recent", revs.v.reviews.map((rv) => h("li", h("a", { href: "#/doc/" + enc(rv.documentId) }, rv.path || rv.documentId),
        h("span.meta", " · ", rv.reviewCategory || ""))))
      : h("p", t("reviews.empty"));
    clear(main, h("h1", t("home.title")),
      h("div.dashboard",
        h("section#home-views", { "aria-labelledby": "home-views-title" }, h("h2#home-views-title", t("views.title")), viewBox,
          h("p.meta", t("home.viewsHint"), " ", h("a", { href: "#/search" }, t("nav.search")))),
        h("section#home-recent", { "aria-labelledby": "home-recent-title" }, h("h2#home-recent-title", t("home.recent")), docList,
          h("p", h("a", { href: "#/browse" }, t("home.allDocuments")))),
        h("section#home-reviews", { "aria-labelledby": "home-reviews-title" }, h("h2#home-reviews-title", t("home.reviews")), revList,
          h("p", h("a", { href: "#/reviews" }, t("home.allReviews"))))));
  },
};
