package console_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"quire/pipeline/mailer"
	"quire/quiretest"
)

// TestConsole_SignInFirstPassword: a new user signs in with the
// temporary password, chooses their own, stays signed in across a reload
// through the HttpOnly refresh cookie (no token in web storage), signs
// out, and a reload then shows the sign-in page (the refresh token is
// revoked on the server).
func TestConsole_SignInFirstPassword(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.user(t, "nora", "default", "temporary-1", false)
	b := newBrowser(t, "en-US")
	var storage string
	b.run(
		step{"open the server's address", navigate(e.s.URL + "/")},
		step{"redirected to the console's sign-in", chromedp.Tasks{visible("#login"), shot("sign-in")}},
		step{"at /console/", wait(`location.pathname === "/console/"`)},
		step{"type the temporary password", chromedp.Tasks{setValue("#username", "nora"), setValue("#password", "temporary-1")}},
		step{"sign in", click("#login button[type=submit]")},
		step{"asked for a new password", chromedp.Tasks{visible("#newpw"), shot("first-password")}},
		step{"two different passwords are refused", chromedp.Tasks{setValue("#newpassword", password), setValue("#newpassword2", "other-pass-1"),
			click("#newpw button[type=submit]"), textOf("#newpw .msg.error", "differ")}},
		step{"choose a password", chromedp.Tasks{setValue("#newpassword2", password), click("#newpw button[type=submit]")}},
		step{"signed in", textOf("#user", "nora")},
		step{"the start page", textOf("main h1", "Start")},
		step{"the refresh cookie is HttpOnly and SameSite=Strict", chromedp.ActionFunc(func(ctx context.Context) error {
			cookies, err := network.GetCookies().WithURLs([]string{e.s.URL + "/login/refresh"}).Do(ctx)
			if err != nil {
				return err
			}
			for _, c := range cookies {
				if c.Name == "quire_refresh" {
					if !c.HTTPOnly || c.SameSite != network.CookieSameSiteStrict || c.Path != "/login" {
						return fmt.Errorf("cookie %+v", c)
					}
					return nil
				}
			}
			return fmt.Errorf("no refresh cookie in %v", cookies)
		})},
		step{"no token in web storage", chromedp.Tasks{js(`JSON.stringify([localStorage, sessionStorage, document.cookie])`, &storage),
			check(func() error {
				if strings.Contains(storage, "eyJ") || strings.Contains(storage, "quire_refresh") {
					return fmt.Errorf("web storage holds a token: %s", storage)
				}
				return nil
			})}},
		step{"reload: still signed in", chromedp.Tasks{chromedp.Reload(), textOf("#user", "nora")}},
		step{"an access token the server no longer takes is refreshed through the cookie", chromedp.Tasks{
			js(`import("/console/js/api.js").then(m => { m.useTokens({AccessToken: "expired.token.x", ExpiresIn: 900}); return true; })`, nil),
			click(`nav a[href="#/trash"]`), textOf("main h1", "Trash"), textOf("#trash-list", "The trash is empty"), textOf("#user", "nora")}},
		step{"sign out", click("#signout")},
		step{"the sign-in page", visible("#login")},
		step{"reload: still signed out (refresh token revoked)", chromedp.Tasks{chromedp.Reload(), visible("#login"), absent("#user")}},
		step{"sign in with the new password", chromedp.Tasks{setValue("#username", "nora"), setValue("#password", password),
			click("#login button[type=submit]"), textOf("#user", "nora")}},
	)
	_ = http.StatusOK
}

// TestConsole_IdleTimeout: without input the console signs out by itself
// after the server's auth.console_idle_timeout (the test shortens the 15
// minutes in the server's configuration, not in the page) and says why.
func TestConsole_IdleTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *quiretest.Config) { c.Auth.IdleTimeout = 2 * time.Second })
	e.user(t, "ida", "default", "temporary-1", true)
	b := newBrowser(t, "en-US")
	steps := append([]step{{"open the console", navigate(e.s.URL + "/console/")}}, signIn("ida", password)...)
	steps = append(steps,
		step{"idle: signed out", visible("#login")},
		step{"told why", textOf("#login", "inactivity")},
		step{"reload: still signed out", chromedp.Tasks{chromedp.Reload(), visible("#login")}},
	)
	b.run(steps...)
}

// TestConsole_German: a browser in German gets the German console, and
// the switch turns it to English.
func TestConsole_German(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := newBrowser(t, "de-DE", `Object.defineProperty(navigator, "languages", {get: () => ["de-DE", "de"]});`)
	b.run(
		step{"open the console", navigate(e.s.URL + "/console/")},
		step{"German sign-in", textOf("#login h1", "Bei Quire anmelden")},
		step{"switch to English", chromedp.Tasks{setValue("#lang", "en"),
			js(`document.getElementById("lang").dispatchEvent(new Event("change")), true`, nil)}},
		step{"English sign-in", textOf("#login h1", "Sign in to Quire")},
		step{"the choice stays after a reload", chromedp.Tasks{chromedp.Reload(), textOf("#login h1", "Sign in to Quire")}},
	)
}

// TestConsole_ForgottenPassword: a user who forgot their password asks
// for a code, gets it by mail, sets a new password with it and signs in.
func TestConsole_ForgottenPassword(t *testing.T) {
	t.Parallel()
	mail := quiretest.NewMailServer(t)
	e := newEnv(t, func(c *quiretest.Config) {
		c.Pipeline.Engines.SMTP = mailer.Config{Host: mail.Host, Port: mail.Port, From: "quire@example.com"}
	})
	e.user(t, "fay@example.com", "default", "temporary-1", true)
	var code string
	b := newBrowser(t, "en-US")
	b.run(
		step{"open the console", navigate(e.s.URL + "/console/")},
		step{"the server can mail: \"Forgot your password?\"", chromedp.Tasks{visible(`#login[data-reset="yes"]`), visible("#forgot")}},
		step{"forgot the password", chromedp.Tasks{click("#forgot"), visible("#forgotpw"), axeAll(axeFile(), "forgotten password")}},
		step{"ask for a code", chromedp.Tasks{setValue("#forgotpw #username", "fay@example.com"), click("#forgotpw button[type=submit]"),
			visible("#resetpw")}},
		step{"the code arrives by mail", check(func() error {
			re := regexp.MustCompile(`Code: (\S+)`)
			for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
				for _, m := range mail.Messages() {
					if len(m.To) == 1 && m.To[0] == "fay@example.com" {
						if sub := re.FindStringSubmatch(m.Data); sub != nil {
							code = sub[1]
							return nil
						}
					}
				}
			}
			return fmt.Errorf("no reset code mailed: %d messages", len(mail.Messages()))
		})},
		step{"a wrong code is refused", chromedp.Tasks{setValue("#code", "000000"), setValue("#resetpw #newpassword", "brand-new-pass-2"),
			click("#resetpw button[type=submit]"), wait(`!document.querySelector("#resetpw .msg.error").hidden`)}},
		step{"the right code sets the password", chromedp.ActionFunc(func(ctx context.Context) error {
			return chromedp.Tasks{setValue("#code", code), click("#resetpw button[type=submit]"), textOf("#login", "Your password is set")}.Do(ctx)
		})},
		step{"sign in with it", chromedp.Tasks{setValue("#username", "fay@example.com"), setValue("#password", "brand-new-pass-2"),
			click("#login button[type=submit]"), textOf("#user", "fay@example.com")}},
	)
}
