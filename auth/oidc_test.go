package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOIDCFlow_Cookie: the state cookie's flow comes back only unchanged,
// signed by this server and within its lifetime.
func TestOIDCFlow_Cookie(t *testing.T) {
	dir := t.TempDir()
	ek, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	jwks := writeJWKS(t, dir, map[string]string{"kty": "EC", "crv": "P-256", "kid": "k", "x": b64(ek.X.FillBytes(make([]byte, 32))), "y": b64(ek.Y.FillBytes(make([]byte, 32)))})
	now := time.Now()
	cfg := Config{JWKSFile: jwks, ExternalIssuer: "https://sso", Now: func() time.Time { return now },
		OIDC: OIDCConfig{AuthorizationURL: "https://sso/auth?kc_idp_hint=ad", TokenURL: "https://sso/token", ClientID: "quire"}}
	a := mustOpen(t, cfg, nil)
	f := a.NewOIDCFlow("https://quire.lan/login/oidc/callback", 10*time.Minute)
	sealed := a.SealOIDCFlow(f)
	if g, ok := a.OpenOIDCFlow(sealed); !ok || g != f {
		t.Fatalf("open: %v %+v", ok, g)
	}
	other := mustOpen(t, cfg, nil) // another data dir: another URL key
	for name, s := range map[string]string{"tampered": "x" + sealed, "unsigned": strings.Split(sealed, ".")[0], "another server's": other.SealOIDCFlow(f)} {
		if _, ok := a.OpenOIDCFlow(s); ok {
			t.Errorf("%s flow opened", name)
		}
	}
	now = now.Add(11 * time.Minute)
	if _, ok := a.OpenOIDCFlow(sealed); ok {
		t.Error("an expired flow opened")
	}
	u, err := url.Parse(a.AuthorizationURL(f))
	if err != nil || u.Query().Get("kc_idp_hint") != "ad" || u.Query().Get("state") != f.State || u.Query().Get("scope") != "openid profile email" {
		t.Fatalf("authorization URL %s", u)
	}
	// Half a provider, or one without keys, does not open.
	if _, err := Open(Config{DataDir: dir, OIDC: OIDCConfig{AuthorizationURL: "https://sso/auth", TokenURL: "https://sso/token", ClientID: "q"}}, nil); err == nil {
		t.Error("a provider without keys opened")
	}
	empty := filepath.Join(dir, "secret")
	os.WriteFile(empty, []byte("\n"), 0o600)
	cfg.OIDC.ClientSecretFile, cfg.DataDir = empty, dir
	if _, err := Open(cfg, nil); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("an empty client secret file: %v", err)
	}
}
