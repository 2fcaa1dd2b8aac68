// API keys of the current site for scanners and apps (GOVERN; FormKiQ's
// /sites/{siteId}/apiKeys): the key is shown once, right after it is
// made (the API keeps only its hash and lists it masked), and can be
// revoked.
import { h, clear, fmtDate } from "../js/dom.js";
import { api } from "../js/api.js";
import { state, status } from "../js/ctx.js";
import { canGovern, tabNav, field, submitting, run } from "../js/admin.js";
import { named } from "../js/words.js";
import { t, lang } from "../i18n/index.js";

const enc = encodeURIComponent;
const PERMS = ["READ", "WRITE", "DELETE", "GOVERN"];

export default {
  path: /^\/admin\/keys$/,
  async render(ctx, main) {
    if (!canGovern()) { clear(main, tabNav(""), h("p.msg.error", { role: "alert" }, t("admin.denied"))); return; }
    const site = state.site;
    const base = `/sites/${enc(site)}/apiKeys`;
    const tbody = h("tbody");
    const shown = h("div#new-key");

    async function load() {
      const out = await api("GET", base);
      if (ctx.stale()) return;
      clear(tbody, (out.apiKeys || []).map((k) => h("tr", { dataset: { key: k.name } },
        h("td", k.name), h("td", h("code", k.apiKey)), h("td", (k.permissions || []).map((p) => named("perm.", p)).join(", ")),
        h("td", fmtDate(k.insertedDate, lang())),
        h("td", h("button.small.danger.revoke", { type: "button", "aria-label": t("admin.keys.revokeNamed", { name: k.name }), onclick: async () => {
          if (!confirm(t("admin.keys.revokeConfirm", { name: k.name }))) return;
          await run(() => api("DELETE", `${base}/${enc(k.apiKey)}`), t("admin.keys.revoked", { name: k.name }))();
          clear(shown);
          await load();
        } }, t("admin.keys.revoke"))))));
      if (!tbody.children.length) tbody.append(h("tr", h("td", { colspan: 5 }, t("admin.keys.empty"))));
    }

    const name = h("input", { type: "text", required: true, autocomplete: "off" });
    const boxes = PERMS.map((p) => h("input", { type: "checkbox", id: "perm-" + p, value: p, checked: p !== "GOVERN" }));
    const form = submitting(h("form.panel#key-form", { "aria-labelledby": "key-form-title" },
      h("h2#key-form-title", t("admin.keys.create")),
      field("key-name", t("admin.keys.name"), name, t("admin.keys.nameHint")),
      h("fieldset.perms", h("legend", t("admin.keys.permissions")),
        boxes.map((b) => h("label.check", b, " ", named("perm.", b.value)))),
      h("div.actions", h("button.primary", { type: "submit" }, t("admin.keys.create")))), async () => {
      const permissions = boxes.filter((b) => b.checked).map((b) => b.value);
      const out = await api("POST", base, { body: { name: name.value.trim(), permissions } });
      const keyText = h("input#new-key-value", { type: "text", readonly: true, value: out.apiKey, "aria-label": t("admin.keys.value") });
      clear(shown, h("div.msg.info.once", { role: "status" },
        h("p", h("strong", t("admin.keys.once", { name: name.value.trim() }))),
        h("div.inline", keyText, " ",
          h("button.small", { type: "button", onclick: async () => {
            keyText.select();
            try { await navigator.clipboard.writeText(out.apiKey); status(t("admin.keys.copied"), "info"); } catch (_) { /* selected: copy by hand */ }
          } }, t("admin.keys.copy")),
          " ", h("button.small", { type: "button", onclick: () => clear(shown) }, t("admin.keys.done")))));
      keyText.focus();
      keyText.select();
      name.value = "";
      await load();
    });

    await load();
    if (ctx.stale()) return;
    clear(main, tabNav("#/admin/keys"), h("h1", t("admin.keys.title")), h("p.meta", t("admin.keys.intro", { site })),
      form, shown,
      h("table.list#key-list", h("caption.sr", t("admin.keys.caption", { site })),
        h("thead", h("tr", ["admin.keys.name", "admin.keys.masked", "admin.keys.permissions", "admin.keys.created", "admin.actions"]
          .map((k) => h("th", { scope: "col" }, t(k))))), tbody));
  },
};
