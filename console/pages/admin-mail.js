// Mail (issue 47): the server's two mail settings in one place, each
// said plainly with what goes through it.
//
// - Password mail (temporary passwords, reset codes: mail that grants
//   access) goes only through the server's own settings, the
//   configuration file's [smtp] (SECURITY.md "governor → directory
//   mail"): never through a site's, which its governors change. The page
//   shows them read-only (an Admin: GET /system/health "serverMail"; a
//   governor only whether the server can send it, GET /login/oidc/info
//   "passwordReset") and an Admin can send a test mail that way (POST
//   /system/mail/test).
// - The current site's mail server (GOVERN; the site configuration's
//   `notification`, API.md "Site configuration") carries the site's
//   notifications, test mail and e-signature links; without one they go
//   through the server's. Edited here (PATCH replaces only the sections
//   it names: `notification` and `notificationEmail`), with a test mail.
//   The password is masked and sent back as it is, which the API keeps
//   while the host and port stay.
import { h, clear } from "../js/dom.js";
import { api, signInOptions } from "../js/api.js";
import { state, status } from "../js/ctx.js";
import { explain } from "../js/errors.js";
import { isAdmin, canGovern, tabNav, field, submitting } from "../js/admin.js";
import { t } from "../i18n/index.js";

const enc = encodeURIComponent;

function text(value, attrs) {
  return h("input", { type: "text", autocomplete: "off", value: value ?? "", ...(attrs || {}) });
}

// failure is a failed test mail in words, the mail server's own answer
// (a diagnostic for whoever set it up) behind "Details".
function failure(id, e, what) {
  const body = (e && e.body) || {};
  const reason = ((body.errors || [])[0] || {}).error || "";
  const plain = e && e.status === 400 && reason ? t(what) : explain(e);
  return h("div.msg.error", { id, role: "alert" }, h("p", plain),
    reason ? h("details", h("summary", t("doc.details")), h("span.meta", reason.replace(/^test (notification|mail) not sent: /, ""))) : null);
}

// testForm is an address and a "Send a test mail" button.
function testForm(id, label, send) {
  const to = h("input", { type: "email", autocomplete: "email", required: true, value: (state.user && /@/.test(state.user.username)) ? state.user.username : "" });
  const out = h("div", { id: id + "-out", "aria-live": "polite" });
  const form = h("form.inline", { id }, field(id + "-to", label, to),
    h("div.actions", h("button", { type: "submit" }, t("admin.mail.sendTest"))));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const btn = form.querySelector("button[type=submit]");
    btn.disabled = true;
    clear(out);
    try { clear(out, await send(to.value.trim())); } finally { btn.disabled = false; }
  });
  return [form, out];
}

const page = {
  path: /^\/admin\/mail$/,
  async render(ctx, main) {
    if (!canGovern()) { clear(main, tabNav(""), h("p.msg.error", { role: "alert" }, t("admin.denied"))); return; }
    const site = state.site;
    const path = `/sites/${enc(site)}/configuration`;
    const [c, health, info] = await Promise.all([
      api("GET", path),
      isAdmin() ? api("GET", "/system/health") : Promise.resolve(null),
      isAdmin() ? Promise.resolve(null) : signInOptions(),
    ]);
    if (ctx.stale()) return;

    // Password mail: the server's own settings, read-only here.
    const sm = health ? (health.serverMail || {}) : { configured: !!(info && info.passwordReset) };
    const where = sm.host ? (sm.port ? `${sm.host}:${sm.port}` : sm.host) : "";
    const serverPart = h("section.panel#mail-server", { "aria-labelledby": "mail-server-title" },
      h("h2#mail-server-title", t("admin.mail.serverTitle")),
      h("p", t("admin.mail.serverWhat")),
      h("p#mail-server-state", { dataset: { configured: String(!!sm.configured) } },
        h(sm.configured ? "span.state.good" : "span.state.bad",
          sm.configured ? (where ? t("admin.mail.serverOk", { where, from: sm.from || "" }) : t("admin.mail.serverOkShort"))
            : t("admin.mail.serverMissing"))),
      sm.configured ? null : h("p.meta", t("admin.mail.serverHowTo")),
      h("p.meta", t("admin.mail.serverNever")),
      health && sm.configured ? testForm("mail-server-test", t("admin.mail.testTo"), async (to) => {
        try {
          await api("POST", "/system/mail/test", { body: { to } });
          return h("p.msg.info#mail-server-result", t("admin.mail.serverTestSent", { to }));
        } catch (e) {
          return failure("mail-server-result", e, "admin.mail.serverTestFailed");
        }
      }) : null);

    // The site's mail server: edited here.
    const n = c.notification || {};
    const smtp = n.smtp || {};
    const f = {
      notificationEmail: h("input", { type: "email", value: c.notificationEmail || "" }),
      sender: h("input", { type: "email", value: n.email || "" }),
      host: text(smtp.host),
      port: h("input", { type: "number", min: 1, max: 65535, value: smtp.port || "" }),
      security: h("select", ["", "STARTTLS", "IMPLICIT_TLS", "NONE"].map((v) =>
        h("option", { value: v, selected: (smtp.connectionSecurity || "") === v }, t("admin.config.security." + (v || "default"))))),
      smtpUser: text(smtp.username),
      smtpPassword: h("input", { type: "password", autocomplete: "new-password", value: smtp.password || "" }),
    };
    const siteState = h("p#mail-site-state", { dataset: { own: String(!!smtp.host) } },
      smtp.host ? t("admin.mail.siteOwn", { site, where: smtp.port ? `${smtp.host}:${smtp.port}` : smtp.host })
        : t(sm.configured ? "admin.mail.siteServers" : "admin.mail.siteNone", { site }));
    const form = submitting(h("form#mail-form", { "aria-labelledby": "mail-site-title" },
      h("fieldset", h("legend", t("admin.mail.siteServer")),
        field("mail-host", t("admin.config.smtpHost"), f.host, t("admin.mail.hostHint")),
        field("mail-port", t("admin.config.smtpPort"), f.port),
        field("mail-security", t("admin.config.smtpSecurity"), f.security),
        field("mail-user", t("admin.config.smtpUser"), f.smtpUser),
        field("mail-password", t("admin.config.smtpPassword"), f.smtpPassword, t("admin.mail.passwordHint"))),
      h("fieldset", h("legend", t("admin.mail.addresses")),
        field("mail-sender", t("admin.config.sender"), f.sender, t("admin.mail.senderHint")),
        field("mail-notifyto", t("admin.config.notificationEmail"), f.notificationEmail, t("admin.mail.notifyHint"))),
      h("div.actions", h("button.primary", { type: "submit" }, t("common.save")))), async () => {
      const body = { notificationEmail: f.notificationEmail.value.trim() };
      const note = {};
      if (f.sender.value.trim()) note.email = f.sender.value.trim();
      if (f.host.value.trim()) {
        note.provider = "SMTP";
        note.smtp = { host: f.host.value.trim(), port: Number(f.port.value) || 0, connectionSecurity: f.security.value,
          username: f.smtpUser.value, password: f.smtpPassword.value };
      }
      body.notification = Object.keys(note).length ? note : null;
      await api("PATCH", path, { body });
      status(t("admin.mail.saved", { site }), "info");
      await page.render(ctx, main);
    });
    const sitePart = h("section.panel#mail-site", { "aria-labelledby": "mail-site-title" },
      h("h2#mail-site-title", t("admin.mail.siteTitle", { site })),
      h("p", t("admin.mail.siteWhat")),
      siteState,
      form,
      h("p.meta", t("admin.mail.testSaved")),
      testForm("mail-site-test", t("admin.mail.testTo"), async (to) => {
        try {
          await api("POST", `${path}/notification/test`, { body: { to } });
          return h("p.msg.info#mail-site-result", t("admin.mail.siteTestSent", { to }));
        } catch (e) {
          return failure("mail-site-result", e, "admin.mail.siteTestFailed");
        }
      }));
    clear(main, tabNav("#/admin/mail"), h("h1#mail-title", t("admin.mail.heading")),
      h("p.lead", t("admin.mail.intro")), serverPart, sitePart);
  },
};

export default page;
