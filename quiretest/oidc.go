package quiretest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"quire/auth"
)

// IdP is an OpenID Connect provider on a loopback port for tests of the
// console's sign-in through an identity provider: its authorize endpoint
// consents at once and redirects back with a code; its token endpoint
// checks the code (once), the client id and secret, the redirect URI and
// the PKCE verifier (S256), and answers an ID token signed with a key
// whose JWKS is written to JWKSFile for Quire's configuration.
//
// It listens on 127.0.0.2, another site than a Quire server on
// 127.0.0.1 (cookies' SameSite looks at the host, not the port), so a
// browser treats the redirect back as cross-site, as with a real IdP.
type IdP struct {
	URL      string // http://127.0.0.2:port
	Issuer   string
	ClientID string
	Secret   string
	JWKSFile string

	key   *ecdsa.PrivateKey
	other *ecdsa.PrivateKey // signs when Behaviour.WrongKey
	srv   *http.Server

	mu     sync.Mutex
	codes  map[string]*idpGrant
	b      IdPBehaviour
	tokens int // token requests answered
}

// IdPBehaviour is what the IdP does next; a test changes it with Set.
type IdPBehaviour struct {
	User   string   // preferred_username (default "ines@example.com")
	Groups []string // the groups claim
	// Deny makes the authorize endpoint answer error=Deny.
	Deny string
	// Claims change the ID token's claims (a wrong nonce, aud, iss, exp);
	// a nil value removes the claim.
	Claims map[string]any
	// WrongKey signs the ID token with a key not in the JWKS.
	WrongKey bool
	// Hang makes the token endpoint drop the connection unanswered.
	Hang bool
	// NoPKCECheck turns off the verifier check (to prove a test needs it).
	NoPKCECheck bool
}

type idpGrant struct {
	clientID, redirect, challenge, nonce string
	used                                 bool
}

// NewIdP starts an IdP for the client quire-console, stopped when the
// test ends.
func NewIdP(t testing.TB) *IdP {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatalf("idp listen: %v", err)
	}
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	o, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	i := &IdP{URL: "http://" + ln.Addr().String(), ClientID: "quire-console", Secret: "idp-client-secret-1",
		key: k, other: o, codes: map[string]*idpGrant{}}
	i.Issuer = i.URL + "/realms/office"
	dir := t.TempDir()
	i.JWKSFile = filepath.Join(dir, "idp-jwks.json")
	b64 := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	jwks, _ := json.Marshal(map[string]any{"keys": []map[string]string{{"kty": "EC", "crv": "P-256", "kid": "idp-1", "use": "sig",
		"x": b64(k.X.FillBytes(make([]byte, 32))), "y": b64(k.Y.FillBytes(make([]byte, 32)))}}})
	if err := os.WriteFile(i.JWKSFile, jwks, 0o600); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/authorize", i.authorize)
	mux.HandleFunc("/token", i.token)
	i.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go i.srv.Serve(ln)
	t.Cleanup(func() { i.srv.Close() })
	return i
}

// Set changes what the IdP does next.
func (i *IdP) Set(b IdPBehaviour) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.b = b
}

// TokenRequests is how many token requests the IdP answered.
func (i *IdP) TokenRequests() int {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.tokens
}

// Configure points a node at the IdP: its keys and issuer verify the ID
// tokens, groups come from the "groups" claim, and the client secret is
// in a file.
func (i *IdP) Configure(t testing.TB) Option {
	secret := filepath.Join(t.TempDir(), "oidc-secret")
	if err := os.WriteFile(secret, []byte(i.Secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return func(c *Config) {
		c.Auth.JWKSFile = i.JWKSFile
		c.Auth.ExternalIssuer = i.Issuer
		c.Auth.GroupsClaim = "groups"
		c.Auth.OIDC = auth.OIDCConfig{AuthorizationURL: i.URL + "/authorize", TokenURL: i.URL + "/token",
			ClientID: i.ClientID, ClientSecretFile: secret, DisplayName: "Office SSO"}
	}
}

func (i *IdP) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	redirect := q.Get("redirect_uri")
	back, err := url.Parse(redirect)
	if err != nil || redirect == "" || q.Get("client_id") != i.ClientID || q.Get("response_type") != "code" ||
		q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("state") == "" || q.Get("nonce") == "" {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	i.mu.Lock()
	deny := i.b.Deny
	code := randomText()
	if deny == "" {
		i.codes[code] = &idpGrant{clientID: q.Get("client_id"), redirect: redirect, challenge: q.Get("code_challenge"), nonce: q.Get("nonce")}
	}
	i.mu.Unlock()
	v := url.Values{"state": {q.Get("state")}}
	if deny != "" {
		v.Set("error", deny)
		v.Set("error_description", "The user said no")
	} else {
		v.Set("code", code)
	}
	back.RawQuery = v.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (i *IdP) token(w http.ResponseWriter, r *http.Request) {
	i.mu.Lock()
	b := i.b
	i.mu.Unlock()
	if b.Hang {
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				c.Close()
				return
			}
		}
	}
	fail := func(code, desc string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
	}
	if r.Method != http.MethodPost || r.ParseForm() != nil || r.PostForm.Get("grant_type") != "authorization_code" {
		fail("invalid_request", "want a POSTed authorization_code grant")
		return
	}
	id, secret, basic := r.BasicAuth()
	id, _ = url.QueryUnescape(id)
	secret, _ = url.QueryUnescape(secret)
	if !basic || id != i.ClientID || secret != i.Secret || r.PostForm.Get("client_id") != i.ClientID {
		fail("invalid_client", "client authentication failed")
		return
	}
	i.mu.Lock()
	g := i.codes[r.PostForm.Get("code")]
	replay := g != nil && g.used
	if g != nil {
		g.used = true
	}
	i.tokens++
	i.mu.Unlock()
	sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
	switch {
	case g == nil || replay:
		fail("invalid_grant", "unknown or used code")
		return
	case g.redirect != r.PostForm.Get("redirect_uri"):
		fail("invalid_grant", "redirect_uri differs")
		return
	case !b.NoPKCECheck && base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge:
		fail("invalid_grant", "PKCE verification failed")
		return
	}
	user := b.User
	if user == "" {
		user = "ines@example.com"
	}
	now := time.Now()
	claims := jwt.MapClaims{"iss": i.Issuer, "aud": i.ClientID, "azp": i.ClientID, "sub": "sub-" + user,
		"preferred_username": user, "email": user, "groups": b.Groups, "nonce": g.nonce,
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix()}
	for k, v := range b.Claims {
		if v == nil {
			delete(claims, k)
		} else {
			claims[k] = v
		}
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
	tok.Header["kid"] = "idp-1"
	key := i.key
	if b.WrongKey {
		key = i.other
	}
	signed, err := tok.SignedString(key)
	if err != nil {
		fail("server_error", err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"access_token": randomText(), "token_type": "Bearer", "expires_in": 300, "id_token": signed})
}

func randomText() string {
	b := make([]byte, 24)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
