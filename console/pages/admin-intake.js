// Scanner intake (GOVERN; API.md "Scanner intake"): the current site's
// intake profiles, where each takes files (the POST address, the
// watched folder), and the recent failures each recorded (a file moved
// to failed/ with its .error.txt, a refused mail attachment or POST
// part): GET /sites/{siteId}/intakeProfiles and, per profile,
// GET /sites/{siteId}/intakeProfiles/{name}/errors (the newest 100,
// newest first). Read-only: profiles are set up through the API.
import { h, clear, fmtDate } from "../js/dom.js";
import { api } from "../js/api.js";
import { state, status, errorText } from "../js/ctx.js";
import { canGovern, tabNav } from "../js/admin.js";
import { t, lang } from "../i18n/index.js";

const enc = encodeURIComponent;
const SOURCES = { FOLDER: "admin.intake.source.folder", POST: "admin.intake.source.post", SMTP: "admin.intake.source.smtp", WEBDAV: "admin.intake.source.webdav" };

function source(s) {
  const k = SOURCES[String(s || "").toUpperCase()];
  return k ? t(k) : String(s || "");
}

export default {
  path: /^\/admin\/intake$/,
  async render(ctx, main) {
    if (!canGovern()) { clear(main, tabNav(""), h("p.msg.error", { role: "alert" }, t("admin.denied"))); return; }
    const site = state.site;
    const base = `/sites/${enc(site)}/intakeProfiles`;
    const body = h("div#intake");

    async function load() {
      const out = await api("GET", base);
      const profiles = out.intakeProfiles || [];
      // At most 4 requests at a time (a site has up to 100 profiles).
      const errors = new Array(profiles.length);
      let next = 0;
      await Promise.all(Array.from({ length: Math.min(4, profiles.length) }, async () => {
        while (next < profiles.length) {
          const i = next++;
          errors[i] = await api("GET", `${base}/${enc(profiles[i].name)}/errors`)
            .then((x) => x.errors || [], (e) => ({ failed: errorText(e) }));
        }
      }));
      if (ctx.stale()) return;
      if (!profiles.length) { clear(body, h("p#intake-empty", t("admin.intake.empty"))); return; }
      clear(body,
        h("table.list#intake-list", h("caption.sr", t("admin.intake.caption", { site })),
          h("thead", h("tr", ["admin.intake.name", "admin.intake.receives", "admin.intake.failures", "admin.intake.lastFailure"]
            .map((k) => h("th", { scope: "col" }, t(k))))),
          h("tbody", profiles.map((p, i) => {
            const errs = Array.isArray(errors[i]) ? errors[i] : [];
            const wf = p.watchFolder && p.watchFolder.enabled !== false && p.watchFolder.path ? p.watchFolder.path : "";
            return h("tr", { dataset: { profile: p.name } },
              h("td", errs.length ? h("a", { href: "#intake-errors-" + i }, p.name) : p.name),
              h("td", h("div", t("admin.intake.post"), " ", h("code", p.intakeUrl || "")),
                wf ? h("div", t("admin.intake.folder"), " ", h("code", wf)) : null),
              h("td", !Array.isArray(errors[i]) ? h("a", { href: "#intake-errors-" + i }, "—")
                : errs.length ? h("span.state.bad", String(errs.length)) : h("span.state.good", "0")),
              h("td", errs.length ? fmtDate(errs[0].insertedDate, lang()) : "—"));
          }))),
        profiles.map((p, i) => {
          const errs = errors[i];
          if (Array.isArray(errs) && !errs.length) return null;
          return h("section.intake-errors", { id: "intake-errors-" + i, dataset: { profile: p.name }, "aria-labelledby": "intake-errors-title-" + i },
            h("h2", { id: "intake-errors-title-" + i }, t("admin.intake.recent", { name: p.name })),
            !Array.isArray(errs) ? h("p.msg.error", errs.failed) :
              h("table.list", h("thead", h("tr", ["admin.intake.when", "admin.intake.source", "admin.intake.file", "admin.intake.error"]
                .map((k) => h("th", { scope: "col" }, t(k))))),
              h("tbody", errs.map((x) => h("tr", h("td", fmtDate(x.insertedDate, lang())), h("td", source(x.source)),
                h("td", x.fileName || "—"), h("td.error", x.error || ""))))));
        }));
    }

    await load();
    if (ctx.stale()) return;
    clear(main, tabNav("#/admin/intake"), h("h1", t("admin.intake.title")), h("p.meta", t("admin.intake.intro", { site })),
      h("div.actions", h("button#intake-refresh", { type: "button", onclick: () => load().catch((e) => status(errorText(e), "error")) }, t("admin.intake.refresh"))), body);
  },
};
