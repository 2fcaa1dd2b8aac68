// Sign-in with the built-in directory: password, the first-password
// challenge, and a forgotten password (a mailed code). The refresh token
// goes to an HttpOnly cookie (refreshCookie: true); the access token
// stays in memory (js/api.js).
//
// Where the server names an identity provider (GET /login/oidc/info), a
// "Sign in with <name>" link goes to GET /login/oidc, which does the
// OIDC flow and comes back to /console/ with the refresh cookie set, or
// with ?signin_error=<code> (DESIGN.md "Sign-in through an identity
// provider"). With webui.ssoAutomaticSignIn the page goes there by itself,
// except at /console/?local, after a refused sign-in, a sign-out or an
// idle timeout (so nobody is locked out, and nothing loops).
import { h, clear } from "../js/dom.js";
import { authCall, useTokens, signInOptions } from "../js/api.js";
import { errorText } from "../js/ctx.js";
import { PlainError, explainKey } from "../js/errors.js";
import { t } from "../i18n/index.js";
import { setGlobalBranding, applyBranding } from "../js/brand.js";

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

// The refusals the server's callback names (server/oidc.go); the IdP's
// own error code, when it has the shape of one, is added.
const oidcErrors = {
  unavailable: () => t("login.oidc.unavailable"),
  idp: () => t("login.oidc.idp"),
  state: () => t("login.oidc.state"),
  replay: () => t("login.oidc.replay"),
  unreachable: () => t("login.oidc.unreachable"),
  refused: () => t("login.oidc.refused"),
  token: () => t("login.oidc.token"),
  nonce: () => t("login.oidc.nonce"),
  user: () => t("login.oidc.user"),
};

// The callback's refusal, taken off the address once (a reload does not
// show it again) and kept for this page's life.
let signInError = null;
(function takeSignInError() {
  const q = new URLSearchParams(location.search);
  const code = q.get("signin_error");
  if (!code) return;
  const idp = q.get("idp_error");
  signInError = { code, idp: idp && /^[A-Za-z0-9_.-]{1,64}$/.test(idp) ? idp : "" };
  q.delete("signin_error");
  q.delete("idp_error");
  const rest = q.toString();
  history.replaceState(null, "", location.pathname + (rest ? "?" + rest.replace(/=$/, "") : "") + location.hash);
})();

function signInErrorText() {
  if (!signInError) return null;
  const f = oidcErrors[signInError.code];
  return (f ? f() : t("login.oidc.failed")) + (signInError.idp ? " (" + signInError.idp + ")" : "");
}

// "Forgot your password?" shows only where the server can mail a code:
// GET /login/oidc/info says so (`passwordReset`, true only with the
// server's own mail settings). Until it has answered, and if
// /forgotPassword answers that it cannot mail after all, the link is not
// there.
let resetByMail = false;
function noResetMail() {
  resetByMail = false;
  const link = document.getElementById("forgot");
  if (link) link.remove();
}

export default {
  render(ctx, main) {
    const done = (out) => { useTokens(out.AuthenticationResult); ctx.done(); };
    const show = (el) => { clear(main, el); const first = el.querySelector("input"); if (first) first.focus(); };

    const signIn = (note, warn) => form("login", t("login.title"), [
      note ? h(warn ? "p.msg.error#signin-note" : "p.msg.info#signin-note", { role: warn ? "alert" : "status" }, note) : null,
      field("username", t("login.username"), { autocomplete: "username" }),
      field("password", t("login.password"), { type: "password", autocomplete: "current-password" }),
    ], t("login.submit"), async (fd) => {
      const username = fd.get("username");
      const out = await authCall("/login", { username, password: fd.get("password"), refreshCookie: true });
      if (out.ChallengeName === "NEW_PASSWORD_REQUIRED") show(newPassword(username, out.Session));
      else if (out.AuthenticationResult) done(out);
    }, resetByMail ? forgotLink() : null);
    const forgotLink = () => h("button.link#forgot", { type: "button", onclick: () => show(forgot()) }, t("login.forgot"));

    const newPassword = (username, session) => form("newpw", t("login.newTitle"), [
      h("p", t("login.newIntro")),
      field("newpassword", t("login.newPassword"), { type: "password", autocomplete: "new-password", minlength: 8 }),
      field("newpassword2", t("login.repeatPassword"), { type: "password", autocomplete: "new-password", minlength: 8 }),
    ], t("login.setPassword"), async (fd) => {
      if (fd.get("newpassword") !== fd.get("newpassword2")) throw new PlainError(t("login.mismatch"));
      done(await authCall("/respondToAuthChallenge", { session, username, newPassword: fd.get("newpassword"), refreshCookie: true }));
    });

    const forgot = () => form("forgotpw", t("login.forgotTitle"), [
      h("p", t("login.forgotIntro")),
      field("username", t("login.username"), { autocomplete: "username" }),
    ], t("login.sendCode"), async (fd) => {
      const username = fd.get("username");
      try {
        await authCall("/forgotPassword", { username });
      } catch (e) {
        // A server without mail settings of its own cannot reset by
        // mail: say so, and offer the link no more in this tab.
        if (explainKey(e) === "err.noResetMail") {
          noResetMail();
          show(signIn(t("err.noResetMail"), true));
          return;
        }
        throw e;
      }
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

    const idle = sessionStorage.getItem("quire.idle");
    const disabled = sessionStorage.getItem("quire.disabled");
    const ended = sessionStorage.getItem("quire.ended") || disabled;
    const start = () => {
      const f = signIn(idle ? t("login.idle") : disabled ? t("err.userDisabled") : ended ? t("login.ended") : null, !!ended);
      const err = signInErrorText();
      if (err) f.querySelector("h1").after(h("p.msg.error#signin-error", { role: "alert" }, err));
      return f;
    };
    show(start());
    signInOptions().then((o) => {
      // The global branding, public before anyone signs in: a fresh
      // tab's sign-in page is branded too.
      if (o.branding) { setGlobalBranding(o.branding); applyBranding(); }
      resetByMail = o.passwordReset === true;
      const actions = main.querySelector("#login .actions");
      if (resetByMail && actions && !actions.querySelector("#forgot")) actions.append(forgotLink());
      if (!resetByMail) noResetMail();
      const lf = main.querySelector("#login");
      if (lf) lf.dataset.reset = resetByMail ? "yes" : "no"; // the server has answered
      if (!o.enabled || !main.querySelector("#login")) return;
      const name = o.displayName || "SSO";
      const local = new URLSearchParams(location.search).has("local");
      if (o.automaticSignIn && !local && !signInError && !idle && !ended && !sessionStorage.getItem("quire.signedout")) {
        clear(main, h("div.card#oidc-redirect", h("h1", t("login.title")),
          h("p", { role: "status" }, t("login.oidc.redirecting", { name })),
          h("p", h("a#local-signin", { href: "/console/?local" }, t("login.oidc.local")))));
        location.assign("/login/oidc");
        return;
      }
      main.querySelector("#login").append(h("div.oidc", h("p.or", t("login.or")),
        h("a.button.primary#oidc", { href: "/login/oidc" }, t("login.oidc.button", { name }))));
    });
  },
};
