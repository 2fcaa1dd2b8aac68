package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// ErrNoAPIKey is returned by an APIKeyStore for an unknown key.
var ErrNoAPIKey = errors.New("api key not found")

// DefaultIssuer is the issuer of Quire's own tokens.
const DefaultIssuer = "quire"

// Config configures token verification.
type Config struct {
	// DataDir holds the keys directory. Required.
	DataDir string
	// Issuer is the iss of Quire's own tokens. Default "quire".
	Issuer string
	// JWKSFile is an external identity provider's JWKS document.
	JWKSFile string
	// PEMFile is an external identity provider's public key (PKIX public
	// key, PKCS#1 RSA key or certificate).
	PEMFile string
	// ExternalIssuer is the iss external tokens must carry. Required with
	// JWKSFile or PEMFile.
	ExternalIssuer string
	// Audience, when set, must be in an external token's aud.
	Audience string
	// GroupsClaim names the claim holding groups, a dotted path for nested
	// claims (realm_access.roles). cognito:groups is always honoured too.
	GroupsClaim string
	// UsernameClaim names the claim holding the username. Fallbacks:
	// cognito:username, preferred_username, username, sub.
	UsernameClaim string
	// Leeway is the clock skew allowed on exp and nbf. Default 30s.
	Leeway time.Duration
	// Now is the clock (tests). Default time.Now.
	Now func() time.Time
	// Directory is the built-in user directory, which directory users'
	// tokens are checked against on every request (nil: none).
	Directory Directory
	// AccessTTL is the lifetime of a sign-in's access and ID tokens, and
	// RefreshTTL of its refresh token (0: the defaults; out of bounds:
	// Open fails).
	AccessTTL, RefreshTTL time.Duration
	// IdleTimeout is how long the web console stays signed in without
	// input (auth.console_idle_timeout; 0: DefaultIdleTimeout). The
	// console reads it from GET /system/configuration.
	IdleTimeout time.Duration
	// OIDC names the identity provider the web console signs in
	// through (oidc.go; zero: none).
	OIDC OIDCConfig
}

// Authenticator verifies Authorization header values.
type Authenticator struct {
	cfg      Config
	ks       atomic.Pointer[keySet]      // own keys; swapped whole (UseKeys, ReloadKeys)
	external map[string]crypto.PublicKey // by kid ("" for a single PEM key)
	keys     APIKeyStore
	verified tokenCache
	// oidcSecret is the OIDC client secret (OIDCConfig.ClientSecretFile).
	oidcSecret string
}

// validMethods are the only algorithms accepted: asymmetric ones. HS* is
// refused so a public key can never be used as an HMAC secret, and "none"
// is never valid.
var validMethods = []string{"ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA"}

// Open loads (creating on first start) the signing keys in cfg.DataDir and
// the external provider's keys. keys may be nil when API keys are not used.
func Open(cfg Config, keys APIKeyStore) (*Authenticator, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("auth: data dir is required")
	}
	if cfg.Issuer == "" {
		cfg.Issuer = DefaultIssuer
	}
	if cfg.Leeway == 0 {
		cfg.Leeway = 30 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if err := checkTTLs(&cfg); err != nil {
		return nil, err
	}
	if (cfg.JWKSFile != "" || cfg.PEMFile != "") && cfg.ExternalIssuer == "" {
		return nil, errors.New("auth: an external issuer is required with a JWKS or PEM file")
	}
	k, kid, err := loadSigningKey(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	uk, err := loadURLKey(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	a := &Authenticator{cfg: cfg, keys: keys, external: map[string]crypto.PublicKey{}}
	a.ks.Store(&keySet{key: k, kid: kid, urlKey: uk})
	if cfg.JWKSFile != "" {
		if a.external, err = loadJWKS(cfg.JWKSFile); err != nil {
			return nil, err
		}
	}
	if cfg.PEMFile != "" {
		pk, err := loadPEM(cfg.PEMFile)
		if err != nil {
			return nil, err
		}
		a.external[""] = pk
	}
	if err := a.loadOIDC(); err != nil {
		return nil, err
	}
	return a, nil
}

// URLKey is the HMAC key of signed upload and download URLs.
func (a *Authenticator) URLKey() []byte { return a.ks.Load().urlKey }

// Sign returns a token for username in groups, valid for ttl.
func (a *Authenticator) Sign(username string, groups []string, ttl time.Duration) (string, error) {
	ks := a.ks.Load()
	return sign(ks.key, ks.kid, a.cfg.Issuer, username, groups, a.cfg.Now(), ttl, nil)
}

// SignToken signs a token with the key in dataDir without opening a
// server (quire token). It only reads the key file, creating it if the
// data dir is new, so it works while a server runs on the same dir.
func SignToken(dataDir, issuer, username string, groups []string, ttl time.Duration) (string, error) {
	return SignTokenClaims(dataDir, issuer, username, groups, ttl, nil)
}

// SignTokenClaims is SignToken with extra claims (custom:email, for one);
// they cannot replace the registered ones.
func SignTokenClaims(dataDir, issuer, username string, groups []string, ttl time.Duration, extra map[string]any) (string, error) {
	k, kid, err := loadSigningKey(dataDir)
	if err != nil {
		return "", err
	}
	if issuer == "" {
		issuer = DefaultIssuer
	}
	return sign(k, kid, issuer, username, groups, time.Now(), ttl, extra)
}

func sign(k *ecdsa.PrivateKey, kid, iss, user string, groups []string, now time.Time, ttl time.Duration, extra map[string]any) (string, error) {
	if groups == nil {
		groups = []string{}
	}
	claims := jwt.MapClaims{}
	for c, v := range extra {
		if !registeredClaims[c] && c != "cognito:username" {
			claims[c] = v
		}
	}
	base := jwt.MapClaims{
		"iss":              iss,
		"sub":              user,
		"cognito:username": user,
		"cognito:groups":   groups,
		"iat":              now.Unix(),
		"nbf":              now.Add(-time.Minute).Unix(),
		"exp":              now.Add(ttl).Unix(),
	}
	for c, v := range base {
		claims[c] = v
	}
	t := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
	t.Header["kid"] = kid
	return t.SignedString(k)
}

// Authenticate verifies an Authorization header value: a JWT (with or
// without "Bearer ") or a per-site API key. Every failure is the same 401
// "Unauthorized", so a caller learns nothing about why.
func (a *Authenticator) Authenticate(header string) (*Principal, error) {
	tok := strings.TrimSpace(header)
	if len(tok) > 7 && strings.EqualFold(tok[:7], "bearer ") {
		tok = strings.TrimSpace(tok[7:])
	}
	if tok == "" {
		return nil, errUnauthorized
	}
	if strings.Count(tok, ".") != 2 {
		return a.apiKey(tok)
	}
	if p := a.verified.get(tok, a.cfg.Now()); p != nil {
		if err := a.checkDirectory(p); err != nil {
			return nil, err
		}
		return p, nil
	}
	var external, previous bool
	parsed, err := jwt.Parse(tok, func(t *jwt.Token) (any, error) {
		claims, _ := t.Claims.(jwt.MapClaims)
		iss, _ := claims["iss"].(string)
		kid, _ := t.Header["kid"].(string)
		switch {
		case iss == a.cfg.Issuer:
			k, err := a.ownKey(kid)
			previous = err == nil && kid != "" && kid != a.ks.Load().kid
			return k, err
		case len(a.external) > 0 && iss == a.cfg.ExternalIssuer:
			external = true
			if k, ok := a.external[kid]; ok {
				return k, nil
			}
			if k, ok := a.external[""]; ok {
				return k, nil
			}
			return nil, errors.New("unknown kid")
		}
		return nil, errors.New("unknown issuer")
	}, jwt.WithValidMethods(validMethods), jwt.WithExpirationRequired(), jwt.WithLeeway(a.cfg.Leeway),
		jwt.WithTimeFunc(a.cfg.Now))
	if err != nil || !parsed.Valid {
		return nil, errUnauthorized
	}
	claims := parsed.Claims.(jwt.MapClaims)
	if isDelegation(claims) {
		return nil, errUnauthorized // a delegation token is not a credential of its own
	}
	if external && a.cfg.Audience != "" {
		aud, err := claims.GetAudience()
		if err != nil || !contains(aud, a.cfg.Audience) {
			return nil, errUnauthorized
		}
	}
	p := NewPrincipal(a.username(claims), a.groups(claims))
	p.Claims = customClaims(claims)
	if !external {
		p.dirGen = dirGeneration(claims)
	}
	if err := a.checkDirectory(p); err != nil {
		return nil, err
	}
	if !previous { // a previous key's grace ends before the token may: check it each time
		a.verified.put(tok, p, claims, a.cfg.Now(), a.cfg.Leeway)
	}
	return p, nil
}

func (a *Authenticator) apiKey(key string) (*Principal, error) {
	if a.keys == nil {
		return nil, errUnauthorized
	}
	k, err := a.keys.LookupAPIKey(HashAPIKey(key))
	if errors.Is(err, ErrNoAPIKey) {
		return nil, errUnauthorized
	}
	if err != nil {
		return nil, err
	}
	name := k.UserID
	if name == "" {
		name = k.Name
	}
	p := &Principal{Username: name, Groups: k.Groups, Sites: map[string][]Permission{}, APIKeySite: k.Site, APIKeyName: k.Name, Claims: map[string]any{},
		cred: "apikey:" + HashAPIKey(key)}
	set := map[Permission]bool{}
	for _, pm := range k.Permissions {
		set[pm] = true
	}
	p.Sites[k.Site] = sortedPerms(set)
	return p, nil
}

func (a *Authenticator) username(c jwt.MapClaims) string {
	for _, name := range []string{a.cfg.UsernameClaim, "cognito:username", "preferred_username", "username", "sub"} {
		if name == "" {
			continue
		}
		if v, ok := lookupClaim(c, name).(string); ok && v != "" {
			return v
		}
	}
	return ""
}

func (a *Authenticator) groups(c jwt.MapClaims) []string {
	var out []string
	seen := map[string]bool{}
	for _, name := range []string{a.cfg.GroupsClaim, "cognito:groups"} {
		if name == "" {
			continue
		}
		for _, g := range stringList(lookupClaim(c, name)) {
			if !seen[g] {
				seen[g] = true
				out = append(out, g)
			}
		}
	}
	return out
}

// lookupClaim finds a claim by name, or by a dotted path into nested
// objects (Keycloak's realm_access.roles). An exact name wins, since claim
// names such as cognito:groups may hold dots elsewhere.
func lookupClaim(c map[string]any, name string) any {
	if v, ok := c[name]; ok {
		return v
	}
	head, rest, ok := strings.Cut(name, ".")
	if !ok {
		return nil
	}
	if m, ok := c[head].(map[string]any); ok {
		return lookupClaim(m, rest)
	}
	return nil
}

// stringList accepts an array of strings or one string of comma or space
// separated values.
func stringList(v any) []string {
	switch x := v.(type) {
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok && s != "" {
				out = append(out, s)
			}
		}
		return out
	case string:
		return strings.FieldsFunc(x, func(r rune) bool { return r == ',' || r == ' ' })
	}
	return nil
}

var registeredClaims = map[string]bool{"iss": true, "sub": true, "aud": true, "exp": true, "nbf": true, "iat": true, "jti": true, "cognito:groups": true}

func customClaims(c jwt.MapClaims) map[string]any {
	out := map[string]any{}
	for k, v := range c {
		if !registeredClaims[k] {
			out[k] = v
		}
	}
	return out
}

func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}

// loadJWKS parses a JWKS document into public keys by kid. Keys meant for
// encryption are skipped.
func loadJWKS(path string) (map[string]crypto.PublicKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read jwks: %w", err)
	}
	var doc struct {
		Keys []struct {
			Kty, Kid, Use, Crv, N, E, X, Y string
		} `json:"keys"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("parse jwks %s: %w", path, err)
	}
	out := map[string]crypto.PublicKey{}
	for _, k := range doc.Keys {
		if k.Use == "enc" {
			continue
		}
		var pk crypto.PublicKey
		switch k.Kty {
		case "RSA":
			n, err1 := b64int(k.N)
			e, err2 := b64int(k.E)
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("jwks key %q: bad RSA parameters", k.Kid)
			}
			pk = &rsa.PublicKey{N: n, E: int(e.Int64())}
		case "EC":
			var curve elliptic.Curve
			switch k.Crv {
			case "P-256":
				curve = elliptic.P256()
			case "P-384":
				curve = elliptic.P384()
			case "P-521":
				curve = elliptic.P521()
			default:
				return nil, fmt.Errorf("jwks key %q: unsupported curve %q", k.Kid, k.Crv)
			}
			x, err1 := b64int(k.X)
			y, err2 := b64int(k.Y)
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("jwks key %q: bad EC parameters", k.Kid)
			}
			pk = &ecdsa.PublicKey{Curve: curve, X: x, Y: y}
		case "OKP":
			x, err := base64.RawURLEncoding.DecodeString(k.X)
			if err != nil || k.Crv != "Ed25519" || len(x) != ed25519.PublicKeySize {
				return nil, fmt.Errorf("jwks key %q: bad OKP parameters", k.Kid)
			}
			pk = ed25519.PublicKey(x)
		default:
			continue
		}
		out[k.Kid] = pk
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("jwks %s holds no signing keys", path)
	}
	return out, nil
}

func b64int(s string) (*big.Int, error) {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil || len(b) == 0 {
		return nil, errors.New("bad base64url integer")
	}
	return new(big.Int).SetBytes(b), nil
}

// loadPEM reads a public key from a PEM file: PKIX, PKCS#1 RSA or a
// certificate.
func loadPEM(path string) (crypto.PublicKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read pem: %w", err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, fmt.Errorf("%s holds no PEM block", path)
	}
	switch blk.Type {
	case "PUBLIC KEY":
		return x509.ParsePKIXPublicKey(blk.Bytes)
	case "RSA PUBLIC KEY":
		return x509.ParsePKCS1PublicKey(blk.Bytes)
	case "CERTIFICATE":
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			return nil, err
		}
		return c.PublicKey, nil
	}
	return nil, fmt.Errorf("%s: unsupported PEM block %q", path, blk.Type)
}
