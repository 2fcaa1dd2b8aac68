// Sign-in with the built-in directory: password, the first-password
// challenge, and a forgotten password (a mailed code). The refresh token
// goes to an HttpOnly cookie (refreshCookie: true); the access token
// stays in memory (js/api.js).
import { h, clear } from "../js/dom.js";
import { authCall, useTokens } from "../js/api.js";
import { errorText } from "../js/ctx.js";
import { t } from "../i18n/index.js";

function field(id, label, attrs) {
  return h("div.field", h("label", { for: id }, label), h("input", { id, name: id, required: true, ...attrs }));
}

function form(id, title, fields, submit, onsubmit, extra) {
  const err = h("p.msg.error", { role: "alert", hidden: true });
  const f = h("form.card#" + id, { "aria-labelledby": id + "-title" },
    h("h1", { id: id + "-title" }, title), err, fields,
    h("div.actions", h("button.primary", { type: "submit" }, submit), extra));
  f.addEventListener("submit", async (e) => {
    e.preventDefault();
    err.hidden = true;
    const btn = f.querySelector("button[type=submit]");
    btn.disabled = true;
    try {
      await onsubmit(new FormData(f));
    } catch (ex) {
      err.textContent = errorText(ex);
      err.hidden = false;
    } finally {
      btn.disabled = false;
    }
  });
  return f;
}

export default {
  render(ctx, main) {
    const done = (out) => { useTokens(out.AuthenticationResult); ctx.done(); };
    const show = (el) => { clear(main, el); const first = el.querySelector("input"); if (first) first.focus(); };

    const signIn = (note) => form("login", t("login.title"), [
      note ? h("p.msg.info", { role: "status" }, note) : null,
      field("username", t("login.username"), { autocomplete: "username" }),
      field("password", t("login.password"), { type: "password", autocomplete: "current-password" }),
    ], t("login.submit"), async (fd) => {
      const username = fd.get("username");
      const out = await authCall("/login", { username, password: fd.get("password"), refreshCookie: true });
      if (out.ChallengeName === "NEW_PASSWORD_REQUIRED") show(newPassword(username, out.Session));
      else if (out.AuthenticationResult) done(out);
    }, h("button.link#forgot", { type: "button", onclick: () => show(forgot()) }, t("login.forgot")));

    const newPassword = (username, session) => form("newpw", t("login.newTitle"), [
      h("p", t("login.newIntro")),
      field("newpassword", t("login.newPassword"), { type: "password", autocomplete: "new-password", minlength: 8 }),
      field("newpassword2", t("login.repeatPassword"), { type: "password", autocomplete: "new-password", minlength: 8 }),
    ], t("login.setPassword"), async (fd) => {
      if (fd.get("newpassword") !== fd.get("newpassword2")) throw new Error(t("login.mismatch"));
      done(await authCall("/respondToAuthChallenge", { session, username, newPassword: fd.get("newpassword"), refreshCookie: true }));
    });

    const forgot = () => form("forgotpw", t("login.forgotTitle"), [
      h("p", t("login.forgotIntro")),
      field("username", t("login.username"), { autocomplete: "username" }),
    ], t("login.sendCode"), async (fd) => {
      const username = fd.get("username");
      await authCall("/forgotPassword", { username });
      show(confirm(username));
    }, h("button.link", { type: "button", onclick: () => show(signIn()) }, t("login.back")));

    const confirm = (username) => form("resetpw", t("login.resetTitle"), [
      h("p", t("login.resetIntro")),
      field("code", t("login.code"), { autocomplete: "one-time-code" }),
      field("newpassword", t("login.newPassword"), { type: "password", autocomplete: "new-password", minlength: 8 }),
    ], t("login.setPassword"), async (fd) => {
      await authCall("/forgotPasswordConfirm", { username, code: fd.get("code"), password: fd.get("newpassword") });
      show(signIn(t("login.resetDone")));
    });

    show(signIn(sessionStorage.getItem("quire.idle") ? t("login.idle") : null));
  },
};
