// The current site's configuration (GOVERN; API.md "Site configuration"):
// limits and AI (an OpenAI-compatible endpoint). The site's mail server
// and addresses are on the Mail page (admin-mail.js); a PATCH here names
// only its own sections, so it leaves them as they are. Secrets come back masked; sent back
// unchanged they keep their stored value while their destination stays
// (the API's rule), so the form can show and resend them as they are.
import { h, clear } from "../js/dom.js";
import { api } from "../js/api.js";
import { state, status } from "../js/ctx.js";
import { canGovern, tabNav, field, submitting } from "../js/admin.js";
import { t } from "../i18n/index.js";

const enc = encodeURIComponent;

function text(value, attrs) {
  return h("input", { type: "text", autocomplete: "off", value: value ?? "", ...(attrs || {}) });
}

export default {
  path: /^\/admin\/config$/,
  async render(ctx, main) {
    if (!canGovern()) { clear(main, tabNav(""), h("p.msg.error", { role: "alert" }, t("admin.denied"))); return; }
    const site = state.site;
    const path = `/sites/${enc(site)}/configuration`;
    const c = await api("GET", path);
    if (ctx.stale()) return;
    const llm = c.llm || {};
    const f = {
      maxContentLengthBytes: text(c.maxContentLengthBytes, { inputmode: "numeric" }),
      maxDocuments: text(c.maxDocuments, { inputmode: "numeric" }),
      maxWebhooks: text(c.maxWebhooks, { inputmode: "numeric" }),
      llmURL: h("input", { type: "url", value: llm.url || "", placeholder: "http://127.0.0.1:11434/v1" }),
      llmKey: h("input", { type: "password", autocomplete: "new-password", value: llm.apiKey || "" }),
      llmModel: text(llm.modelId),
    };
    const form = submitting(h("form#config-form", { "aria-labelledby": "config-title" },
      h("fieldset", h("legend", t("admin.config.limits")),
        field("cfg-maxlen", t("admin.config.maxContentLengthBytes"), f.maxContentLengthBytes, t("admin.config.limitHint")),
        field("cfg-maxdocs", t("admin.config.maxDocuments"), f.maxDocuments, t("admin.config.limitHint")),
        field("cfg-maxhooks", t("admin.config.maxWebhooks"), f.maxWebhooks, t("admin.config.limitHint"))),
      h("p.meta#cfg-mail-moved", t("admin.config.mailMoved"), " ", h("a", { href: "#/admin/mail" }, t("admin.mail.title"))),
      h("fieldset", h("legend", t("admin.config.ai")),
        field("cfg-llmurl", t("admin.config.llmURL"), f.llmURL),
        field("cfg-llmkey", t("admin.config.llmKey"), f.llmKey),
        field("cfg-llmmodel", t("admin.config.llmModel"), f.llmModel)),
      h("div.actions", h("button.primary", { type: "submit" }, t("common.save")))), async () => {
      const body = {
        maxContentLengthBytes: f.maxContentLengthBytes.value.trim(),
        maxDocuments: f.maxDocuments.value.trim(),
        maxWebhooks: f.maxWebhooks.value.trim(),
      };
      const ai = { url: f.llmURL.value.trim(), apiKey: f.llmKey.value, modelId: f.llmModel.value.trim() };
      body.llm = ai.url || ai.apiKey || ai.modelId ? ai : null;
      await api("PATCH", path, { body });
      status(t("admin.config.saved", { site }), "info");
    });
    clear(main, tabNav("#/admin/config"), h("h1#config-title", t("admin.config.heading", { site })), form);
  },
};
