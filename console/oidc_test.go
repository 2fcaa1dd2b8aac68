package console_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"quire/quiretest"
)

// TestConsole_SignInWithIdP: the sign-in page offers the identity
// provider; its button signs in through it (the IdP is another site, on
// 127.0.0.2) and the console shows the IdP's user. With automatic sign-in
// the console goes there by itself; a refused sign-in shows why and does
// not loop, and /console/?local keeps the password form.
func TestConsole_SignInWithIdP(t *testing.T) {
	t.Parallel()
	idp := quiretest.NewIdP(t)
	e := newEnv(t, idp.Configure(t))
	idp.Set(quiretest.IdPBehaviour{User: "ines@example.com", Groups: []string{"default"}})
	b := newBrowser(t, "en-US")
	fresh := js(`sessionStorage.clear(), true`, nil)
	b.run(
		step{"open the console", navigate(e.s.URL + "/console/")},
		step{"the IdP's button", chromedp.Tasks{textOf("#login #oidc", "Sign in with Office SSO"), shot("sign-in-idp")}},
		step{"click it", click("#login #oidc")},
		step{"signed in as the IdP's user", chromedp.Tasks{arrive(`document.querySelector("#user") && document.querySelector("#user").textContent.includes("ines@example.com")`), textOf("main h1", "Start")}},
		step{"sign out", chromedp.Tasks{click("#signout"), visible("#login #oidc")}},
		step{"switch automatic sign-in on", check(func() error {
			e.must(t, http.MethodPatch, "/system/configuration", map[string]any{"webui": map[string]any{"ssoAutomaticSignIn": true}}, http.StatusOK)
			return nil
		})},
		step{"a new visit signs in by itself", chromedp.Tasks{fresh, navigate(e.s.URL + "/console/"),
			arrive(`location.pathname === "/console/" && document.querySelector("#user") && document.querySelector("#user").textContent.includes("ines@example.com")`)}},
		// The IdP's button shows once the signed-out page has read its
		// flags; clearing them before that lets the old page go to the
		// IdP by itself, racing the navigation below (net::ERR_ABORTED).
		step{"the IdP refuses the next one", chromedp.Tasks{click("#signout"), visible("#login #oidc"),
			check(func() error { idp.Set(quiretest.IdPBehaviour{Deny: "access_denied"}); return nil }),
			fresh, navigate(e.s.URL + "/console/")}},
		step{"told why, on the sign-in page, without going round again", chromedp.Tasks{
			arrive(`document.querySelector("#signin-error")`), textOf("#signin-error", "did not sign you in. (access_denied)"), textOf("#login #oidc", "Office SSO"),
			wait(`location.pathname === "/console/" && location.search === ""`)}},
		step{"?local keeps the password form", chromedp.Tasks{fresh, navigate(e.s.URL + "/console/?local"),
			textOf("#login #oidc", "Office SSO"), visible("#password"), absent("#oidc-redirect")}},
	)
}

// arrive waits, across the navigations to the IdP and back (which end
// the page's script context under a running poll), until cond holds on
// the page the browser lands on.
func arrive(cond string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		var last error
		for deadline := time.Now().Add(25 * time.Second); time.Now().Before(deadline); {
			var ok bool
			err := chromedp.Evaluate("(() => { try { return !!("+cond+"); } catch (e) { return false; } })()", &ok).Do(ctx)
			if err == nil && ok {
				return nil
			}
			last = err
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(100 * time.Millisecond): // a poll's interval, not a proof
			}
		}
		return fmt.Errorf("never arrived at %s (last error %v)", cond, last)
	})
}
