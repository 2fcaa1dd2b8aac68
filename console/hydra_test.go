package console_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"quire/auth"
	"quire/quiretest"
)

// TestOIDC_Hydra signs in through a real OpenID provider, ory/hydra
// v2.3.0 (make hydra builds it; issue 43), with its in-memory database,
// PKCE enforced and a login app of the test's: the authorization code flow
// with PKCE through headless Chromium from the console's button, then, as
// an HTTP client playing the browser, every refusal a real provider
// brings: a nonce that is not the sign-in's, an expired code, a replayed
// code, a code and an ID token of another client (wrong audience), and a
// disabled account. Each refusal lands on the console's sign-in page with
// its code and no session.
func TestOIDC_Hydra(t *testing.T) {
	t.Parallel()
	const codeTTL = 4 * time.Second
	h := quiretest.NewHydra(t, codeTTL)
	e := newEnv(t, h.Configure(t, "quire-console", "quire-console-secret"))
	callback := e.s.URL + "/login/oidc/callback"
	h.AddClient(t, "quire-console", "quire-console-secret", callback)
	h.AddClient(t, "other-app", "other-app-secret", callback, "http://127.0.0.2:9/cb")
	h.SetUser("ines@example.com", false, "default")
	h.SetUser("dora@example.com", true, "default")

	t.Run("code flow with PKCE in Chromium", func(t *testing.T) {
		b := newBrowser(t, "en-US")
		b.run(
			step{"open the console", navigate(e.s.URL + "/console/")},
			step{"the provider's button", textOf("#login #oidc", "Sign in with Hydra")},
			step{"click it", click("#login #oidc")},
			step{"Hydra's login app asks who", chromedp.Tasks{arrive(`location.host !== "` + strings.TrimPrefix(e.s.URL, "http://") + `" && document.querySelector("#username")`),
				sendKeys("#username", "ines@example.com"), click("#signin")}},
			step{"signed in as Hydra's user", chromedp.Tasks{arrive(`document.querySelector("#user") && document.querySelector("#user").textContent.includes("ines@example.com")`),
				textOf("main h1", "Start")}},
			step{"the session is the user's, with Hydra's groups", chromedp.Tasks{
				js(`fetch("/login/refresh", {method: "POST", headers: {"X-Quire-Console": "1", "Content-Type": "application/json"}, body: "{}"}).then(r => r.json()).then(j => window.__tok = j.AuthenticationResult.AccessToken)`, nil),
				wait(`!!window.__tok`)}},
		)
		var tok string
		b.run(step{"read the token", js(`window.__tok`, &tok)})
		p, err := e.s.Node.Auth.Authenticate(tok)
		if err != nil || p.Username != "ines@example.com" || !p.Can("default", auth.PermWrite) {
			t.Fatalf("the console's token: %+v %v", p, err)
		}
	})

	t.Run("nonce of another sign-in", func(t *testing.T) {
		c := newFlowClient(t, e.s.URL, h)
		cb := c.authorize(t, c.start(t, func(q url.Values) { q.Set("nonce", strings.Repeat("n", 43)) }), "ines@example.com")
		c.want(t, cb, "nonce")
	})

	t.Run("expired code", func(t *testing.T) {
		c := newFlowClient(t, e.s.URL, h)
		cb := c.authorize(t, c.start(t, nil), "ines@example.com")
		// The code outlives its TTL before the browser brings it back
		// (a wait for the provider's clock, not a proof).
		time.Sleep(codeTTL + 2*time.Second)
		c.want(t, cb, "refused")
	})

	t.Run("replayed code", func(t *testing.T) {
		c := newFlowClient(t, e.s.URL, h)
		first := c.authorize(t, c.start(t, nil), "ines@example.com")
		c.want(t, first, "")
		code := mustQuery(t, first, "code")
		// The same callback again: the sign-in is spent.
		if got := c.finish(t, first); got == "" {
			t.Errorf("the same callback twice signed in again")
		}
		// The code in a new sign-in: Hydra refuses it (used, and the new
		// flow's PKCE verifier is not its own).
		c2 := newFlowClient(t, e.s.URL, h)
		second := c2.authorize(t, c2.start(t, nil), "ines@example.com")
		c2.want(t, withQuery(t, second, "code", code), "refused")
	})

	t.Run("wrong audience", func(t *testing.T) {
		// A code Hydra gave another client, brought to Quire's callback in
		// a sign-in of Quire's: Hydra refuses it to Quire's client.
		c := newFlowClient(t, e.s.URL, h)
		quire := c.authorize(t, c.start(t, nil), "ines@example.com")
		other, _ := c.otherClientCode(t, callback, "n-"+strings.Repeat("a", 40))
		c.want(t, withQuery(t, quire, "code", other), "refused")
		// An ID token Hydra signed for the other client: Quire's check of
		// the audience refuses it, although its signature, issuer and
		// nonce hold.
		nonce := "n-" + strings.Repeat("b", 40)
		code, verifier := c.otherClientCode(t, "http://127.0.0.2:9/cb", nonce)
		idToken := c.exchange(t, code, verifier, "http://127.0.0.2:9/cb")
		if _, err := e.s.Node.Auth.VerifyIDToken(idToken, nonce); !errors.Is(err, auth.ErrOIDCBadIDToken) || !strings.Contains(err.Error(), "aud") {
			t.Errorf("another client's ID token: %v, want the audience refused", err)
		}
	})

	t.Run("disabled account", func(t *testing.T) {
		c := newFlowClient(t, e.s.URL, h)
		cb := c.authorize(t, c.start(t, nil), "dora@example.com")
		c.want(t, cb, "idp:access_denied")
	})
}

// flowClient plays the browser of a sign-in over HTTP: cookies per host,
// each redirect looked at.
type flowClient struct {
	c     *http.Client
	quire string
	h     *quiretest.Hydra
}

func newFlowClient(t *testing.T, quire string, h *quiretest.Hydra) *flowClient {
	jar, _ := cookiejar.New(nil)
	return &flowClient{quire: quire, h: h, c: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// start begins a sign-in at Quire and answers the authorization URL
// (changed by edit when given).
func (f *flowClient) start(t *testing.T, edit func(url.Values)) string {
	t.Helper()
	resp, err := f.c.Get(f.quire + "/login/oidc")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	u, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || err != nil || u.Query().Get("code_challenge_method") != "S256" {
		t.Fatalf("GET /login/oidc: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if edit != nil {
		q := u.Query()
		edit(q)
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// authorize follows the provider's redirects from u, signing in as user
// at the login app, until the browser is sent back to a client's
// redirect URI: that URL.
func (f *flowClient) authorize(t *testing.T, u, user string) string {
	t.Helper()
	for range 20 {
		p, _ := url.Parse(u)
		if p.Path == "/login/oidc/callback" || p.Path == "/cb" {
			return u
		}
		var resp *http.Response
		var err error
		if p.Path == "/login" && p.Query().Get("login_challenge") != "" {
			action, form, ferr := f.h.SignInForm(u, user)
			if ferr != nil {
				t.Fatal(ferr)
			}
			resp, err = f.c.PostForm(action, form)
		} else {
			resp, err = f.c.Get(u)
		}
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		resp.Body.Close()
		loc := resp.Header.Get("Location")
		if resp.StatusCode < 300 || resp.StatusCode >= 400 || loc == "" {
			t.Fatalf("%s: %d, no redirect", u, resp.StatusCode)
		}
		next, err := p.Parse(loc)
		if err != nil {
			t.Fatal(err)
		}
		u = next.String()
	}
	t.Fatalf("no way back from the provider")
	return ""
}

// finish brings the callback to Quire and answers the sign-in page's
// signin_error ("" for a session; "idp:<code>" for the provider's).
func (f *flowClient) finish(t *testing.T, cb string) string {
	t.Helper()
	resp, err := f.c.Get(cb)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	land, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusSeeOther || land == nil || land.Path != "/console/" {
		t.Fatalf("callback: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	code := land.Query().Get("signin_error")
	if idp := land.Query().Get("idp_error"); idp != "" {
		code += ":" + idp
	}
	return code
}

// want finishes the sign-in and checks its outcome, and that a refused
// one has no session (the console's refresh answers 401).
func (f *flowClient) want(t *testing.T, cb, code string) {
	t.Helper()
	if got := f.finish(t, cb); got != code {
		t.Fatalf("sign-in outcome %q, want %q", got, code)
	}
	req, _ := http.NewRequest(http.MethodPost, f.quire+"/login/refresh", strings.NewReader("{}"))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Quire-Console", "1")
	resp, err := f.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if session := resp.StatusCode == http.StatusOK; session != (code == "") {
		t.Fatalf("outcome %q: refresh answered %d", code, resp.StatusCode)
	}
}

// otherClientCode runs a sign-in of the client other-app (with its own
// PKCE verifier and the nonce given) to redirect, and answers its code
// and verifier.
func (f *flowClient) otherClientCode(t *testing.T, redirect, nonce string) (code, verifier string) {
	t.Helper()
	b := make([]byte, 32)
	rand.Read(b)
	verifier = base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"client_id": {"other-app"}, "response_type": {"code"}, "scope": {"openid profile email"},
		"redirect_uri": {redirect}, "state": {strings.Repeat("s", 40)}, "nonce": {nonce},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}}
	cb := f.authorize(t, f.h.Public+"/oauth2/auth?"+q.Encode(), "ines@example.com")
	return mustQuery(t, cb, "code"), verifier
}

// exchange trades other-app's code for its ID token.
func (f *flowClient) exchange(t *testing.T, code, verifier, redirect string) string {
	t.Helper()
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect}, "code_verifier": {verifier}}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, f.h.Public+"/oauth2/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("other-app", "other-app-secret")
	resp, err := f.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		IDToken string `json:"id_token"`
		Error   string `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.IDToken == "" {
		t.Fatalf("other-app's token: %d %v %s", resp.StatusCode, err, out.Error)
	}
	return out.IDToken
}

func mustQuery(t *testing.T, u, key string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil || p.Query().Get(key) == "" {
		t.Fatalf("no %s in %s", key, u)
	}
	return p.Query().Get(key)
}

func withQuery(t *testing.T, u, key, val string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	q := p.Query()
	q.Set(key, val)
	p.RawQuery = q.Encode()
	return p.String()
}
