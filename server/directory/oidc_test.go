package directory_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// oidcBrowser is a browser for the sign-in flow: it keeps cookies per
// origin as a browser does and follows no redirect by itself, so each
// hop can be looked at.
type oidcBrowser struct {
	c *http.Client
	// cookies by name, as the server set them (the state cookie and the
	// refresh cookie live on different paths; the test sends each where a
	// browser would).
	cookies map[string]*http.Cookie
}

func newOIDCBrowser() *oidcBrowser {
	return &oidcBrowser{c: &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}, cookies: map[string]*http.Cookie{}}
}

// get fetches u with the cookies a browser sends there, and keeps the
// cookies the answer sets.
func (b *oidcBrowser) get(t *testing.T, u string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	pu, _ := url.Parse(u)
	for _, c := range b.cookies {
		if strings.HasPrefix(pu.Path, c.Path) {
			req.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
		}
	}
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.MaxAge < 0 || c.Value == "" || (!c.Expires.IsZero() && c.Expires.Before(time.Now())) {
			delete(b.cookies, c.Name)
		} else {
			b.cookies[c.Name] = c
		}
	}
	return resp
}

// start begins a sign-in at Quire and takes the IdP's answer: the
// callback URL the browser is sent back to.
func (b *oidcBrowser) start(t *testing.T, s *quiretest.Server) string {
	t.Helper()
	r := b.get(t, s.URL+"/login/oidc")
	if r.StatusCode != http.StatusFound {
		t.Fatalf("GET /login/oidc: %d", r.StatusCode)
	}
	st := b.cookies["quire_oidc"]
	if st == nil || !st.HttpOnly || st.SameSite != http.SameSiteLaxMode || st.Path != "/login/oidc/callback" || st.MaxAge <= 0 || st.MaxAge > 600 {
		t.Fatalf("state cookie %+v", st)
	}
	auth, _ := url.Parse(r.Header.Get("Location"))
	q := auth.Query()
	if q.Get("code_challenge_method") != "S256" || len(q.Get("code_challenge")) != 43 || len(q.Get("state")) < 32 ||
		len(q.Get("nonce")) < 32 || q.Get("redirect_uri") != s.URL+"/login/oidc/callback" || !strings.Contains(q.Get("scope"), "openid") {
		t.Fatalf("authorization request %s", auth)
	}
	if strings.Contains(st.Value, q.Get("code_challenge")) {
		t.Fatal("the state cookie carries the challenge in clear")
	}
	r = b.get(t, auth.String())
	if r.StatusCode != http.StatusFound {
		t.Fatalf("IdP authorize: %d", r.StatusCode)
	}
	return r.Header.Get("Location")
}

// finish follows the callback and reports where the browser lands
// (signin_error, "" on success) and whether it got a session.
func (b *oidcBrowser) finish(t *testing.T, s *quiretest.Server, callback string) (errCode string, session bool) {
	t.Helper()
	r := b.get(t, callback)
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("callback: %d, want 303 to the console", r.StatusCode)
	}
	land, _ := url.Parse(r.Header.Get("Location"))
	if land.Path != "/console/" {
		t.Fatalf("callback sent the browser to %s", land)
	}
	code := land.Query().Get("signin_error")
	if idp := land.Query().Get("idp_error"); idp != "" {
		code += ":" + idp
	}
	rc := b.cookies["quire_refresh"]
	for _, c := range r.Cookies() {
		if c.Name == "quire_refresh" && c.Value != "" && code != "" {
			t.Fatalf("a refused sign-in set a refresh cookie")
		}
	}
	return code, rc != nil && rc.Value != ""
}

// refresh trades the refresh cookie for tokens as the console does.
func (b *oidcBrowser) refresh(t *testing.T, s *quiretest.Server) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/login/refresh", strings.NewReader("{}"))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Quire-Console", "1")
	req.Header.Set("Origin", s.URL)
	if c := b.cookies["quire_refresh"]; c != nil {
		req.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
	}
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// TestOIDC_SignIn: the console's sign-in through an identity provider,
// as a browser does it: Quire's redirect to the IdP (PKCE S256, state,
// nonce), the IdP's redirect back, the code exchange, and then the same
// session a password sign-in gives: the refresh cookie, tokens for the
// IdP's user with the IdP's groups, sign-out.
func TestOIDC_SignIn(t *testing.T) {
	idp := quiretest.NewIdP(t)
	s := quiretest.NewServer(t, idp.Configure(t))

	// What the sign-in page asks before anyone is signed in.
	info := s.Do(http.MethodGet, "/login/oidc/info", nil, "")
	servertest.MustStatus(t, info, http.StatusOK)
	servertest.MustBody(t, info, `{"automaticSignIn":false,"displayName":"Office SSO","enabled":true,"passwordReset":false,"start":"/login/oidc"}`)
	servertest.MustStatus(t, s.Do(http.MethodPatch, "/system/configuration", map[string]any{"webui": map[string]any{"ssoAutomaticSignIn": true}}, s.Admin()), http.StatusOK)
	servertest.MustBody(t, s.Do(http.MethodGet, "/login/oidc/info", nil, ""), `{"automaticSignIn":true,"displayName":"Office SSO","enabled":true,"passwordReset":false,"start":"/login/oidc"}`)

	idp.Set(quiretest.IdPBehaviour{User: "Ines@Example.com", Groups: []string{"default", "finance_read"}})
	b := newOIDCBrowser()
	cb := b.start(t, s)
	// A HEAD of the callback (a link checker) neither spends nor finishes it.
	req, _ := http.NewRequest(http.MethodHead, cb, nil)
	req.AddCookie(&http.Cookie{Name: "quire_oidc", Value: b.cookies["quire_oidc"].Value})
	if r, err := b.c.Do(req); err != nil || r.StatusCode != http.StatusOK || len(r.Cookies()) != 0 {
		t.Fatalf("HEAD callback: %v %v", r, err)
	}
	code, session := b.finish(t, s, cb)
	if code != "" || !session {
		t.Fatalf("sign-in: error %q, session %v", code, session)
	}
	rc := b.cookies["quire_refresh"]
	if !rc.HttpOnly || rc.SameSite != http.SameSiteStrictMode || rc.Path != "/login" {
		t.Fatalf("refresh cookie %+v", rc)
	}
	if b.cookies["quire_oidc"] != nil {
		t.Fatal("the state cookie outlived its callback")
	}
	status, body := b.refresh(t, s)
	res, _ := body["AuthenticationResult"].(map[string]any)
	at, _ := res["AccessToken"].(string)
	if status != http.StatusOK || at == "" || res["RefreshToken"] != nil {
		t.Fatalf("refresh: %d %v", status, body)
	}
	sites := s.Do(http.MethodGet, "/sites", nil, at).JSON(t)
	if sites["username"] != "Ines@Example.com" {
		t.Fatalf("GET /sites as the IdP's user: %v", sites)
	}
	perms := map[string]any{}
	list, _ := sites["sites"].([]any)
	for _, x := range list {
		m, _ := x.(map[string]any)
		id, _ := m["siteId"].(string)
		perms[id] = m["permissions"]
	}
	if len(perms) != 2 || !strings.Contains(jsonText(perms["finance"]), "READ") || strings.Contains(jsonText(perms["finance"]), "WRITE") ||
		!strings.Contains(jsonText(perms["default"]), "WRITE") {
		t.Fatalf("the IdP's groups were not mapped to sites: %v", perms)
	}
	// Sign-out ends the session.
	req, _ = http.NewRequest(http.MethodPost, s.URL+"/login/logout", strings.NewReader("{}"))
	req.Header.Set("X-Quire-Console", "1")
	req.AddCookie(&http.Cookie{Name: "quire_refresh", Value: rc.Value})
	if r, err := b.c.Do(req); err != nil || r.StatusCode != http.StatusOK {
		t.Fatalf("sign out: %v %v", r, err)
	}
	if status, _ := b.refresh(t, s); status == http.StatusOK {
		t.Fatal("the session outlived its sign-out")
	}
}

func jsonText(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestOIDC_Refusals: each way a sign-in through the IdP can go wrong
// lands on the console's sign-in page with its code, never a 500 and
// never a session. One IdP and one server for the table.
func TestOIDC_Refusals(t *testing.T) {
	idp := quiretest.NewIdP(t)
	s := quiretest.NewServer(t, idp.Configure(t))
	tests := []struct {
		name string
		idp  quiretest.IdPBehaviour
		// run does the flow (default: start, then finish in the same
		// browser) and returns where it landed.
		run  func(t *testing.T) (string, bool)
		want string
	}{
		{name: "the IdP says no", idp: quiretest.IdPBehaviour{Deny: "access_denied"}, want: "idp:access_denied"},
		{name: "an IdP error that is not a code is not repeated", idp: quiretest.IdPBehaviour{Deny: "<b>no</b>"}, want: "idp"},
		{name: "state differs from the browser's", want: "state", run: func(t *testing.T) (string, bool) {
			b := newOIDCBrowser()
			cb, _ := url.Parse(b.start(t, s))
			q := cb.Query()
			q.Set("state", strings.Repeat("A", 43))
			cb.RawQuery = q.Encode()
			return b.finish(t, s, cb.String())
		}},
		{name: "another browser's callback (login CSRF)", want: "state", run: func(t *testing.T) (string, bool) {
			cb := newOIDCBrowser().start(t, s)
			return newOIDCBrowser().finish(t, s, cb)
		}},
		{name: "a forged state cookie", want: "state", run: func(t *testing.T) (string, bool) {
			b := newOIDCBrowser()
			cb := b.start(t, s)
			v := b.cookies["quire_oidc"].Value
			b.cookies["quire_oidc"].Value = v[:len(v)-2] + "AA"
			return b.finish(t, s, cb)
		}},
		{name: "a replayed callback (code used twice)", want: "replay", run: func(t *testing.T) (string, bool) {
			b := newOIDCBrowser()
			cb := b.start(t, s)
			kept := *b.cookies["quire_oidc"]
			if code, ok := b.finish(t, s, cb); code != "" || !ok {
				t.Fatalf("first callback: %q", code)
			}
			thief := newOIDCBrowser()
			thief.cookies["quire_oidc"] = &kept
			return thief.finish(t, s, cb)
		}},
		{name: "a code of another sign-in (PKCE)", want: "refused", run: func(t *testing.T) (string, bool) {
			attacker := newOIDCBrowser()
			stolen, _ := url.Parse(attacker.start(t, s))
			victim := newOIDCBrowser()
			cb, _ := url.Parse(victim.start(t, s))
			q := cb.Query()
			q.Set("code", stolen.Query().Get("code"))
			cb.RawQuery = q.Encode()
			return victim.finish(t, s, cb.String())
		}},
		{name: "wrong nonce", idp: quiretest.IdPBehaviour{Claims: map[string]any{"nonce": "another-sign-in"}}, want: "nonce"},
		{name: "no nonce", idp: quiretest.IdPBehaviour{Claims: map[string]any{"nonce": nil}}, want: "nonce"},
		{name: "wrong audience", idp: quiretest.IdPBehaviour{Claims: map[string]any{"aud": "another-client", "azp": nil}}, want: "token"},
		{name: "another client's azp", idp: quiretest.IdPBehaviour{Claims: map[string]any{"aud": []string{"quire-console", "other"}, "azp": "other"}}, want: "token"},
		{name: "wrong issuer", idp: quiretest.IdPBehaviour{Claims: map[string]any{"iss": "http://127.0.0.2:1/realms/evil"}}, want: "token"},
		{name: "expired ID token", idp: quiretest.IdPBehaviour{Claims: map[string]any{"exp": time.Now().Add(-time.Hour).Unix()}}, want: "token"},
		{name: "signed with another key", idp: quiretest.IdPBehaviour{WrongKey: true}, want: "token"},
		{name: "no user in the ID token", idp: quiretest.IdPBehaviour{Claims: map[string]any{"preferred_username": nil, "sub": nil}}, want: "user"},
		{name: "a username the store refuses", idp: quiretest.IdPBehaviour{User: strings.Repeat("u", 200)}, want: "user"},
		{name: "the token endpoint drops the connection", idp: quiretest.IdPBehaviour{Hang: true}, want: "unreachable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idp.Set(tt.idp)
			run := tt.run
			if run == nil {
				run = func(t *testing.T) (string, bool) {
					b := newOIDCBrowser()
					return b.finish(t, s, b.start(t, s))
				}
			}
			code, session := run(t)
			if code != tt.want || session {
				t.Fatalf("landed with signin_error %q (session %v), want %q and no session", code, session, tt.want)
			}
		})
	}
}

// TestOIDC_NotConfigured: without an identity provider the routes say
// so, and automatic sign-in cannot be switched on (system_test.go).
func TestOIDC_NotConfigured(t *testing.T) {
	s := quiretest.NewServer(t)
	servertest.MustBody(t, s.Do(http.MethodGet, "/login/oidc/info", nil, ""), `{"automaticSignIn":false,"enabled":false,"passwordReset":false}`)
	b := newOIDCBrowser()
	for _, p := range []string{"/login/oidc", "/login/oidc/callback?code=x&state=y"} {
		r := b.get(t, s.URL+p)
		if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/console/?signin_error=unavailable" {
			t.Fatalf("GET %s: %d %s", p, r.StatusCode, r.Header.Get("Location"))
		}
	}
}
