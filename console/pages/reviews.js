// The reviews inbox: open reviews the user could decide (GET /reviews,
// approval groups honoured by the API), each approved or rejected with a
// comment (POST /documents/{id}/reviews/{reviewId}/decisions).
import { h, clear, fmtDate } from "../js/dom.js";
import { api } from "../js/api.js";
import { can, siteQuery, pager, status, errorText } from "../js/ctx.js";
import { named } from "../js/words.js";
import { t, lang } from "../i18n/index.js";

const enc = encodeURIComponent;

export default {
  path: /^\/reviews$/,
  nav: "nav.reviews",
  href: "#/reviews",
  async render(ctx, main) {
    const list = h("ul.reviews#review-list");
    const pg = pager(load);
    let current = "";
    async function load(token) {
      current = token;
      const out = await api("GET", "/reviews", { query: siteQuery({ limit: 20, next: token }) });
      if (ctx.stale()) return;
      clear(list, (out.reviews || []).map((rv, i) => {
        const comment = h("textarea", { id: "comment-" + i, rows: 2 });
        const decide = (decision) => async () => {
          const q = siteQuery(rv.artifactId ? { artifactId: rv.artifactId } : {});
          try {
            await api("POST", `/documents/${enc(rv.documentId)}/reviews/${enc(rv.reviewId)}/decisions`,
              { query: q, body: { decision: { type: "APPROVAL", decision, comment: comment.value } } });
            status(t(decision === "APPROVED" ? "reviews.approved" : "reviews.rejected", { name: rv.path }), "info");
            await load(current);
          } catch (ex) { status(errorText(ex), "error"); }
        };
        return h("li.review", { dataset: { review: rv.reviewId } },
          h("h2", h("a", { href: "#/doc/" + enc(rv.documentId) }, rv.path || rv.documentId)),
          h("p.meta", rv.reviewCategory, " · ", t("reviews.by", { user: rv.userId || "", date: fmtDate(rv.insertedDate, lang()) }),
            " · ", named("reviews.status.", rv.reviewStatus)),
          rv.comments ? h("p", rv.comments) : null,
          can("WRITE") ? h("div.decide",
            h("label", { for: "comment-" + i }, t("reviews.comment")), comment,
            h("div.actions",
              h("button.primary.approve", { type: "button", onclick: decide("APPROVED") }, t("reviews.approve")),
              h("button.danger.reject", { type: "button", onclick: decide("REJECTED") }, t("reviews.reject")))) : null);
      }));
      if (!list.children.length) list.append(h("li", t("reviews.empty")));
      pg.update(out.next);
    }
    await load("");
    if (ctx.stale()) return;
    clear(main, h("h1", t("reviews.title")), list, pg.el);
  },
};
