package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func mustOpen(t *testing.T, cfg Config, keys APIKeyStore) *Authenticator {
	t.Helper()
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	a, err := Open(cfg, keys)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return a
}

func signWith(t *testing.T, m jwt.SigningMethod, key any, kid string, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(m, claims)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAuthenticate_OwnTokens(t *testing.T) {
	a := mustOpen(t, Config{}, nil)
	good, err := a.Sign("ann", []string{"finance"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	expired, _ := a.Sign("ann", []string{"finance"}, -time.Hour)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	forged := signWith(t, jwt.SigningMethodES256, other, a.ks.Load().kid, jwt.MapClaims{"iss": "quire", "cognito:username": "m", "exp": time.Now().Add(time.Hour).Unix()})
	pubDER, _ := x509.MarshalPKIXPublicKey(&a.ks.Load().key.PublicKey)
	hs := signWith(t, jwt.SigningMethodHS256, pubDER, "", jwt.MapClaims{"iss": "quire", "cognito:username": "m", "exp": time.Now().Add(time.Hour).Unix()})
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none"}`)) + "." +
		base64.RawURLEncoding.EncodeToString([]byte(`{"iss":"quire","cognito:username":"m","exp":9999999999}`)) + "."
	noExp := signWith(t, jwt.SigningMethodES256, a.ks.Load().key, a.ks.Load().kid, jwt.MapClaims{"iss": "quire", "cognito:username": "m"})
	wrongIss := signWith(t, jwt.SigningMethodES256, a.ks.Load().key, a.ks.Load().kid, jwt.MapClaims{"iss": "other", "cognito:username": "m", "exp": time.Now().Add(time.Hour).Unix()})
	tests := []struct {
		name, header string
		ok           bool
	}{
		{"raw", good, true},
		{"bearer", "Bearer " + good, true},
		{"bearer lower case", "bearer " + good, true},
		{"empty", "", false},
		{"expired", expired, false},
		{"forged", forged, false},
		{"hs256 with public key", hs, false},
		{"alg none", none, false},
		{"no exp", noExp, false},
		{"wrong issuer", wrongIss, false},
		{"truncated", good[:len(good)-5], false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := a.Authenticate(tt.header)
			if tt.ok {
				if err != nil || p.Username != "ann" || !p.Can("finance", PermWrite) {
					t.Fatalf("principal %+v, err %v", p, err)
				}
				return
			}
			wantUnauthorized(t, p, err)
		})
	}
}

// wantUnauthorized fails unless err is the 401 "Unauthorized" every bad
// credential gets (not another error, nor a principal).
func wantUnauthorized(t *testing.T, p *Principal, err error) {
	t.Helper()
	var ae *Error
	if p != nil || !errors.As(err, &ae) || ae.Status != 401 || ae.Msg != "Unauthorized" {
		t.Fatalf("principal %+v, err %#v, want 401 Unauthorized", p, err)
	}
}

func writeJWKS(t *testing.T, dir string, keys ...map[string]string) string {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"keys": keys})
	p := filepath.Join(dir, "jwks.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func TestAuthenticate_ExternalProviders(t *testing.T) {
	dir := t.TempDir()
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	jwks := writeJWKS(t, dir,
		map[string]string{"kty": "RSA", "kid": "rsa1", "use": "sig", "n": b64(rk.N.Bytes()), "e": b64(big.NewInt(int64(rk.E)).Bytes())},
		map[string]string{"kty": "RSA", "kid": "enc1", "use": "enc", "n": b64(rk.N.Bytes()), "e": "AQAB"})
	ek, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	der, _ := x509.MarshalPKIXPublicKey(&ek.PublicKey)
	pemPath := filepath.Join(dir, "idp.pem")
	os.WriteFile(pemPath, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o600)

	iss := "https://keycloak.lan/realms/office"
	exp := time.Now().Add(time.Hour).Unix()
	a := mustOpen(t, Config{JWKSFile: jwks, ExternalIssuer: iss, Audience: "quire", GroupsClaim: "groups", UsernameClaim: "preferred_username"}, nil)
	kc := mustOpen(t, Config{PEMFile: pemPath, ExternalIssuer: iss, GroupsClaim: "realm_access.roles"}, nil)
	// Each rejected token is an accepted one with one thing changed, so
	// its rejection has that reason.
	good := func(change map[string]any) jwt.MapClaims {
		c := jwt.MapClaims{"iss": iss, "aud": "quire", "exp": exp, "preferred_username": "ann", "groups": []string{"finance"}}
		for k, v := range change {
			c[k] = v
		}
		return c
	}
	kcGood := func() jwt.MapClaims {
		return jwt.MapClaims{"iss": iss, "exp": exp, "preferred_username": "cat", "realm_access": map[string]any{"roles": []string{"legal_govern"}}}
	}
	tests := []struct {
		name  string
		a     *Authenticator
		token string
		user  string
		site  string // site expected writable, "" when the token must fail
	}{
		{"jwks rsa", a, signWith(t, jwt.SigningMethodRS256, rk, "rsa1", good(nil)), "ann", "finance"},
		{"groups as a string", a, signWith(t, jwt.SigningMethodRS256, rk, "rsa1", good(map[string]any{"aud": []string{"x", "quire"}, "preferred_username": "bob", "groups": "hr, default"})), "bob", "hr"},
		{"unknown kid", a, signWith(t, jwt.SigningMethodRS256, rk, "nope", good(nil)), "", ""},
		{"encryption key not used", a, signWith(t, jwt.SigningMethodRS256, rk, "enc1", good(nil)), "", ""},
		{"wrong audience", a, signWith(t, jwt.SigningMethodRS256, rk, "rsa1", good(map[string]any{"aud": "other"})), "", ""},
		{"wrong issuer", a, signWith(t, jwt.SigningMethodRS256, rk, "rsa1", good(map[string]any{"iss": "https://evil"})), "", ""},
		{"expired", a, signWith(t, jwt.SigningMethodRS256, rk, "rsa1", good(map[string]any{"exp": time.Now().Add(-time.Hour).Unix()})), "", ""},
		{"pem keycloak roles", kc, signWith(t, jwt.SigningMethodES384, ek, "any", kcGood()), "cat", "legal"},
		{"pem wrong key", kc, signWith(t, jwt.SigningMethodRS256, rk, "any", kcGood()), "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := tt.a.Authenticate(tt.token)
			if tt.site == "" {
				wantUnauthorized(t, p, err)
				return
			}
			if err != nil || p.Username != tt.user || !p.Can(tt.site, PermWrite) {
				t.Fatalf("principal %+v, err %v", p, err)
			}
		})
	}
	if _, err := Open(Config{DataDir: dir, JWKSFile: jwks}, nil); err == nil {
		t.Fatal("a JWKS without an issuer was accepted")
	}
}

func TestPrincipal_GroupsAndSites(t *testing.T) {
	tests := []struct {
		name      string
		groups    []string
		requested string
		site      string // "" when selection fails
		msg       string
		perms     []Permission
	}{
		{"site group", []string{"finance"}, "", "finance", "", []Permission{PermDelete, PermRead, PermWrite}},
		{"read group", []string{"finance_read"}, "finance", "finance", "", []Permission{PermRead}},
		{"govern group", []string{"finance_govern"}, "", "finance", "", []Permission{PermDelete, PermGovern, PermRead, PermWrite}},
		{"admin defaults", []string{"Admins"}, "", "default", "", allPerms},
		{"admin any site", []string{"Admins"}, "anything", "anything", "", allPerms},
		{"authentication_only ignored", []string{"authentication_only"}, "", "", "fkq access denied to siteId (default)", nil},
		{"other site", []string{"finance"}, "hr", "", "fkq access denied to siteId (hr)", nil},
		{"several sites, default among them", []string{"finance", "default"}, "", "default", "", []Permission{PermDelete, PermRead, PermWrite}},
		{"several sites, no default", []string{"finance", "hr"}, "", "", "fkq access denied to siteId (default)", nil},
		{"API_KEY reserved", []string{"Admins"}, "API_KEY", "", "'API_KEY' siteId is reserved", nil},
		{"global only for admins", []string{"finance"}, "global", "", "'global' siteId is reserved", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewPrincipal("ann", tt.groups)
			site, err := p.SelectSite(tt.requested)
			if tt.site == "" {
				var ae *Error
				if !errors.As(err, &ae) || ae.Status != 401 || ae.Msg != tt.msg {
					t.Fatalf("err = %v, want 401 %q", err, tt.msg)
				}
				return
			}
			if err != nil || site != tt.site {
				t.Fatalf("site = %q (%v), want %q", site, err, tt.site)
			}
			if got := p.Permissions(site); !reflect.DeepEqual(got, tt.perms) {
				t.Fatalf("permissions = %v, want %v", got, tt.perms)
			}
		})
	}
	ro := NewPrincipal("ann", []string{"finance_read"})
	if err := ro.Require("finance", PermWrite); err == nil || err.Error() != "fkq access denied (groups: finance (READ))" {
		t.Fatalf("Require = %v", err)
	}
	if err := ro.Require("hr", PermRead); err == nil || err.Error() != "fkq access denied to siteId (hr)" {
		t.Fatalf("Require other site = %v", err)
	}
}

type fakeKeys map[string]APIKey

func (f fakeKeys) LookupAPIKey(hash string) (APIKey, error) {
	k, ok := f[hash]
	if !ok {
		return APIKey{}, ErrNoAPIKey
	}
	return k, nil
}

func TestAuthenticate_APIKey(t *testing.T) {
	key, err := NewAPIKey()
	if err != nil || len(key) < 40 {
		t.Fatalf("key %q, %v", key, err)
	}
	a := mustOpen(t, Config{}, fakeKeys{HashAPIKey(key): {Name: "scanner", Site: "finance", Permissions: []Permission{PermWrite, PermRead}}})
	p, err := a.Authenticate(key)
	if err != nil || p.Username != "scanner" || !p.Can("finance", PermWrite) || p.Can("finance", PermDelete) || p.Can("default", PermRead) {
		t.Fatalf("principal %+v, err %v", p, err)
	}
	if site, _ := p.SelectSite(""); site != "finance" {
		t.Fatalf("API key site = %q", site)
	}
	p, err = a.Authenticate("unknown-key")
	wantUnauthorized(t, p, err)
}

func TestKeys_ConcurrentFirstStart(t *testing.T) {
	dir := t.TempDir()
	const n = 8
	kids := make([]string, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			a, err := Open(Config{DataDir: dir}, nil)
			if err != nil {
				t.Error(err)
				return
			}
			kids[i] = a.ks.Load().kid
		}(i)
	}
	wg.Wait()
	for _, k := range kids {
		if k != kids[0] || k == "" {
			t.Fatalf("different keys created: %v", kids)
		}
	}
	tok, err := SignToken(dir, "", "ann", nil, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	a := mustOpen(t, Config{DataDir: dir}, nil)
	if _, err := a.Authenticate(tok); err != nil {
		t.Fatalf("token of SignToken rejected: %v", err)
	}
	fi, err := os.Stat(filepath.Join(dir, keysDir, signingKeyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode = %v (%v), want 0600", fi.Mode(), err)
	}
}

func TestURLSignature(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	sig := SignURL(key, "PUT", "default", "doc", "123")
	tests := []struct {
		name   string
		fields []string
		ok     bool
	}{
		{"same", []string{"PUT", "default", "doc", "123"}, true},
		{"other method", []string{"GET", "default", "doc", "123"}, false},
		{"shifted fields", []string{"PUT", "defaultdoc", "", "123"}, false},
		{"other expiry", []string{"PUT", "default", "doc", "124"}, false},
	}
	for _, tt := range tests {
		if got := VerifyURL(key, sig, tt.fields...); got != tt.ok {
			t.Errorf("%s: verify = %v, want %v", tt.name, got, tt.ok)
		}
	}
}

// TestAuthenticate_CachedTokenStillExpires verifies a token, moves the
// clock past its expiry and expects the remembered verification to end.
func TestAuthenticate_CachedTokenStillExpires(t *testing.T) {
	now := time.Now()
	a := mustOpen(t, Config{Now: func() time.Time { return now }, Leeway: time.Second}, nil)
	tok, err := a.Sign("ann", []string{"default"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct {
		at time.Duration
		ok bool
	}{{0, true}, {30 * time.Second, true}, {62 * time.Second, false}, {0, true}} {
		now = time.Now().Add(c.at)
		p, err := a.Authenticate(tok)
		if !c.ok {
			wantUnauthorized(t, p, err)
			continue
		}
		if err != nil {
			t.Fatalf("step %d (+%s): err = %v", i, c.at, err)
		}
		if p.Username != "ann" {
			t.Fatalf("step %d: user %q", i, p.Username)
		}
		p.Groups[0] = "changed" // a caller's change must not reach the cache
	}
}
