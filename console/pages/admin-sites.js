// Sites (Admins; API.md "Sites and locales"): the sites, each with its
// title (changed in place), and a new site.
import { h, clear } from "../js/dom.js";
import { api } from "../js/api.js";
import { state, status } from "../js/ctx.js";
import { isAdmin, tabNav, field, submitting } from "../js/admin.js";
import { t } from "../i18n/index.js";

const enc = encodeURIComponent;

export default {
  path: /^\/admin\/sites$/,
  async render(ctx, main) {
    if (!isAdmin()) { clear(main, tabNav(""), h("p.msg.error", { role: "alert" }, t("admin.denied"))); return; }
    const tbody = h("tbody");

    async function load() {
      const out = await api("GET", "/sites");
      if (ctx.stale()) return;
      state.sites = out.sites || [];
      dispatchEvent(new CustomEvent("quire:sites")); // the header's site switch follows
      clear(tbody, state.sites.map((s, i) => {
        const title = h("input", { type: "text", value: s.title || "", "aria-label": t("admin.sites.titleFor", { site: s.siteId }) });
        const f = submitting(h("form.inline", title, h("button.small", { type: "submit" }, t("common.save"))), async () => {
          await api("PATCH", `/sites/${enc(s.siteId)}`, { body: { site: { title: title.value } } });
          status(t("admin.sites.saved", { site: s.siteId }), "info");
        });
        f.id = "site-title-" + i;
        return h("tr", { dataset: { site: s.siteId } }, h("td", s.siteId), h("td", f),
          h("td", s.branding ? t("common.yes") : t("common.no")));
      }));
    }

    const id = h("input", { type: "text", required: true, autocomplete: "off" });
    const title = h("input", { type: "text", autocomplete: "off" });
    const form = submitting(h("form.panel#site-form", { "aria-labelledby": "site-form-title" },
      h("h2#site-form-title", t("admin.sites.create")),
      field("site-id", t("admin.sites.id"), id, t("admin.sites.idHint")),
      field("site-title", t("admin.sites.titleLabel"), title),
      h("div.actions", h("button.primary", { type: "submit" }, t("admin.sites.create")))), async () => {
      await api("POST", "/sites", { body: { site: { id: id.value.trim(), title: title.value } } });
      status(t("admin.sites.created", { site: id.value.trim() }), "info");
      id.value = ""; title.value = "";
      await load();
    });

    await load();
    if (ctx.stale()) return;
    clear(main, tabNav("#/admin/sites"), h("h1", t("admin.sites.title")), form,
      h("table.list#site-list", h("thead", h("tr", ["admin.sites.id", "admin.sites.titleLabel", "admin.sites.branded"]
        .map((k) => h("th", { scope: "col" }, t(k))))), tbody));
  },
};
