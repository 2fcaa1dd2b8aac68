package quiretest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"quire/auth"
)

// Hydra is a real OpenID provider for sign-in tests: ory/hydra v2.3.0
// (built by `make hydra` into build/tools/hydra; QUIRE_HYDRA names
// another binary) serving on loopback with its in-memory database, PKCE
// enforced, and a login and consent app of the test's own (a sign-in form
// that accepts any user name but the disabled ones, and a consent that
// grants what was asked with the user's groups in the ID token).
//
// Everything listens on 127.0.0.2, another site than a Quire server on
// 127.0.0.1, so a browser treats the provider as cross-site, as a real one.
type Hydra struct {
	Public   string // http://127.0.0.2:port, the OAuth 2.0 endpoints
	Admin    string // the admin API
	Issuer   string // as the discovery document says
	JWKSFile string // the provider's signing keys, for auth.jwks_file
	// CodeTTL is how long an authorization code lives.
	CodeTTL time.Duration

	mu       sync.Mutex
	disabled map[string]bool
	groups   map[string][]string
	client   *http.Client
}

// hydraBinary finds the hydra program: QUIRE_HYDRA, or build/tools/hydra
// of the repository the test runs in.
func hydraBinary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("QUIRE_HYDRA"); p != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	dir, _ := os.Getwd()
	for range 8 {
		p := filepath.Join(dir, "build", "tools", "hydra")
		if _, err := os.Stat(p); err == nil {
			return p
		}
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		dir = filepath.Dir(dir)
	}
	SkipUnlessCI(t, "ory/hydra not found: `make hydra` builds it into build/tools/hydra (make test does)")
	return ""
}

// freeAddr is a free TCP port on ip (closed again for the program to take).
func freeAddr(t testing.TB, ip string) string {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatalf("listen %s: %v", ip, err)
	}
	a := ln.Addr().String()
	ln.Close()
	return a
}

// NewHydra starts Hydra with authorization codes living codeTTL, stopped
// when the test ends.
func NewHydra(t testing.TB, codeTTL time.Duration) *Hydra {
	t.Helper()
	bin := hydraBinary(t)
	dir := t.TempDir()
	h := &Hydra{CodeTTL: codeTTL, disabled: map[string]bool{}, groups: map[string][]string{},
		client: &http.Client{Timeout: 30 * time.Second}}
	// The login and consent app.
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	app := "http://" + ln.Addr().String()
	mux := http.NewServeMux()
	mux.HandleFunc("/login", h.login)
	mux.HandleFunc("/consent", h.consent)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	pub, adm := freeAddr(t, "127.0.0.2"), freeAddr(t, "127.0.0.2")
	h.Public, h.Admin = "http://"+pub, "http://"+adm
	pubHost, pubPort, _ := net.SplitHostPort(pub)
	admHost, admPort, _ := net.SplitHostPort(adm)
	cfg := fmt.Sprintf(`dsn: memory
serve:
  public: {host: %s, port: %s}
  admin: {host: %s, port: %s}
urls:
  self: {issuer: %s/}
  login: %s/login
  consent: %s/consent
oauth2:
  pkce: {enforced: true}
ttl:
  auth_code: %s
secrets:
  system: [quire-test-system-secret-of-32-bytes]
log: {level: warn}
`, pubHost, pubPort, admHost, admPort, h.Public, app, app, codeTTL)
	cfgFile := filepath.Join(dir, "hydra.yml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "hydra.log"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "serve", "all", "--dev", "--sqa-opt-out", "-c", cfgFile)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start hydra: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		cmd.Wait()
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("hydra's log:\n%s", b)
		}
	})
	Eventually(t, "hydra is ready", 60*time.Second, func() bool {
		resp, err := h.client.Get(h.Admin + "/health/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	var disc struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	h.getJSON(t, h.Public+"/.well-known/openid-configuration", &disc)
	h.Issuer = disc.Issuer
	var jwks json.RawMessage
	h.getJSON(t, disc.JWKSURI, &jwks)
	h.JWKSFile = filepath.Join(dir, "hydra-jwks.json")
	if err := os.WriteFile(h.JWKSFile, jwks, 0o600); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *Hydra) getJSON(t testing.TB, u string, out any) {
	t.Helper()
	resp, err := h.client.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %d %s", u, resp.StatusCode, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}

// admin calls Hydra's admin API and decodes the answer into out.
func (h *Hydra) admin(method, path string, in, out any) error {
	b, _ := json.Marshal(in)
	req, err := http.NewRequest(method, h.Admin+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := h.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return fmt.Errorf("hydra %s %s: %d %s", method, path, resp.StatusCode, body)
	}
	if out != nil {
		return json.Unmarshal(body, out)
	}
	return nil
}

// AddClient registers a confidential client (client_secret_basic) with
// its redirect URIs.
func (h *Hydra) AddClient(t testing.TB, id, secret string, redirects ...string) {
	t.Helper()
	err := h.admin(http.MethodPost, "/admin/clients", map[string]any{
		"client_id": id, "client_secret": secret, "redirect_uris": redirects,
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
		"scope": "openid profile email", "token_endpoint_auth_method": "client_secret_basic",
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
}

// SetUser gives a user name its groups, and disables it or not (the
// login app refuses a disabled user's sign-in).
func (h *Hydra) SetUser(name string, disabled bool, groups ...string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.disabled[name], h.groups[name] = disabled, groups
}

// Configure points a node at Hydra as its identity provider, with the
// client id and secret given (AddClient registers it).
func (h *Hydra) Configure(t testing.TB, clientID, secret string) Option {
	f := filepath.Join(t.TempDir(), "oidc-secret")
	if err := os.WriteFile(f, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return func(c *Config) {
		c.Auth.JWKSFile = h.JWKSFile
		c.Auth.ExternalIssuer = h.Issuer
		c.Auth.GroupsClaim = "groups"
		c.Auth.OIDC = auth.OIDCConfig{AuthorizationURL: h.Public + "/oauth2/auth", TokenURL: h.Public + "/oauth2/token",
			ClientID: clientID, ClientSecretFile: f, DisplayName: "Hydra"}
	}
}

// login is the login app: GET shows a sign-in form, POST signs the user
// named in it in (accept) or, for a disabled user, refuses (reject with
// access_denied).
func (h *Hydra) login(w http.ResponseWriter, r *http.Request) {
	challenge := r.FormValue("login_challenge")
	if r.Method == http.MethodGet {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!DOCTYPE html><html><body><form method="post" action="/login">
<input type="hidden" name="login_challenge" value="%s"><label>User <input id="username" name="username"></label>
<button id="signin" type="submit">Sign in</button></form></body></html>`, html.EscapeString(challenge))
		return
	}
	user := r.FormValue("username")
	h.mu.Lock()
	disabled := h.disabled[user]
	h.mu.Unlock()
	q := "?login_challenge=" + url.QueryEscape(challenge)
	var out struct {
		RedirectTo string `json:"redirect_to"`
	}
	var err error
	if disabled {
		err = h.admin(http.MethodPut, "/admin/oauth2/auth/requests/login/reject"+q,
			map[string]any{"error": "access_denied", "error_description": "the account is disabled"}, &out)
	} else {
		err = h.admin(http.MethodPut, "/admin/oauth2/auth/requests/login/accept"+q, map[string]any{"subject": user}, &out)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	http.Redirect(w, r, out.RedirectTo, http.StatusFound)
}

// consent grants the scopes asked, with the user's name and groups in
// the ID token.
func (h *Hydra) consent(w http.ResponseWriter, r *http.Request) {
	challenge := r.FormValue("consent_challenge")
	q := "?consent_challenge=" + url.QueryEscape(challenge)
	var req struct {
		Subject        string   `json:"subject"`
		RequestedScope []string `json:"requested_scope"`
	}
	if err := h.admin(http.MethodGet, "/admin/oauth2/auth/requests/consent"+q, nil, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	h.mu.Lock()
	groups := append([]string{}, h.groups[req.Subject]...)
	h.mu.Unlock()
	var out struct {
		RedirectTo string `json:"redirect_to"`
	}
	err := h.admin(http.MethodPut, "/admin/oauth2/auth/requests/consent/accept"+q, map[string]any{
		"grant_scope": req.RequestedScope,
		"session": map[string]any{"id_token": map[string]any{"preferred_username": req.Subject, "email": req.Subject,
			"groups": groups}},
	}, &out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	http.Redirect(w, r, out.RedirectTo, http.StatusFound)
}

// SignInForm is the login app's form action, for a client that posts it
// without a browser.
func (h *Hydra) SignInForm(loginURL, user string) (string, url.Values, error) {
	u, err := url.Parse(loginURL)
	if err != nil {
		return "", nil, err
	}
	if !strings.HasSuffix(u.Path, "/login") {
		return "", nil, fmt.Errorf("not the login app: %s", loginURL)
	}
	return u.Scheme + "://" + u.Host + "/login", url.Values{"login_challenge": {u.Query().Get("login_challenge")}, "username": {user}}, nil
}
