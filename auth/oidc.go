package auth

// The web console's sign-in through an external identity provider
// (OpenID Connect, authorization code flow with PKCE; console/DESIGN.md
// "Sign-in through an identity provider"). This file holds what needs
// the provider's settings and keys: the authorization URL, the code
// exchange at the token endpoint and the ID token's verification. The
// browser side (state cookie, callback, session) is the server's
// (server/oidc.go).

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// OIDCConfig names the identity provider the console signs in through.
// AuthorizationURL, TokenURL and ClientID are set together (config
// refuses half of them); its ID tokens are verified with the external
// keys (Config.JWKSFile or PEMFile) and Config.ExternalIssuer.
type OIDCConfig struct {
	AuthorizationURL string
	TokenURL         string
	ClientID         string
	// ClientSecretFile holds the client secret, sent as HTTP Basic auth
	// to the token endpoint (empty: a public client).
	ClientSecretFile string
	Scopes           []string
	DisplayName      string
	// HTTPClient makes the token request (nil: a client with
	// OIDCTimeout and no redirects).
	HTTPClient *http.Client
}

// Enabled reports whether an identity provider is configured.
func (o OIDCConfig) Enabled() bool {
	return o.AuthorizationURL != "" && o.TokenURL != "" && o.ClientID != ""
}

// Bounds of the token request.
const (
	// OIDCTimeout bounds the whole token request.
	OIDCTimeout = 10 * time.Second
	// MaxOIDCResponseBytes bounds the token endpoint's answer.
	MaxOIDCResponseBytes = 1 << 20
	// MaxIDTokenBytes bounds an ID token before it is parsed.
	MaxIDTokenBytes = 64 << 10
)

// OIDC errors: each is shown to the person signing in as a message of
// its kind (server/oidc.go maps them to the console's codes).
var (
	ErrOIDCUnreachable  = errors.New("the identity provider cannot be reached")
	ErrOIDCTokenRefused = errors.New("the identity provider refused the code")
	ErrOIDCBadIDToken   = errors.New("the identity provider's ID token is not valid")
	ErrOIDCNonce        = errors.New("the ID token is not of this sign-in (nonce)")
	ErrOIDCNoUser       = errors.New("the ID token names no user")
)

// loadOIDC checks the provider's settings and reads the client secret.
func (a *Authenticator) loadOIDC() error {
	o := a.cfg.OIDC
	if o.AuthorizationURL == "" && o.TokenURL == "" && o.ClientID == "" {
		return nil
	}
	if !o.Enabled() {
		return errors.New("auth: OIDC sign-in needs the authorization URL, token URL and client id together")
	}
	if len(a.external) == 0 {
		return errors.New("auth: OIDC sign-in needs the identity provider's keys (a JWKS or PEM file) to verify ID tokens")
	}
	for _, u := range []string{o.AuthorizationURL, o.TokenURL} {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return fmt.Errorf("auth: OIDC endpoint %q is not an http(s) URL", u)
		}
	}
	if o.ClientSecretFile != "" {
		b, err := os.ReadFile(o.ClientSecretFile)
		if err != nil {
			return fmt.Errorf("auth: read the OIDC client secret: %w", err)
		}
		a.oidcSecret = strings.TrimSpace(string(b))
		if a.oidcSecret == "" {
			return fmt.Errorf("auth: the OIDC client secret file %s is empty", o.ClientSecretFile)
		}
	}
	if len(o.Scopes) == 0 {
		a.cfg.OIDC.Scopes = []string{"openid", "profile", "email"}
	}
	if o.DisplayName == "" {
		a.cfg.OIDC.DisplayName = "single sign-on"
	}
	if o.HTTPClient == nil {
		a.cfg.OIDC.HTTPClient = &http.Client{Timeout: OIDCTimeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	return nil
}

// OIDC returns the identity provider's settings and whether one is
// configured.
func (a *Authenticator) OIDC() (OIDCConfig, bool) { return a.cfg.OIDC, a.cfg.OIDC.Enabled() }

// OIDCFlow is what one sign-in carries from its start to its callback:
// the state, the nonce, the PKCE verifier and the redirect URI.
type OIDCFlow struct {
	State    string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
	Redirect string `json:"r"`
	Expires  int64  `json:"e"`
}

// NewOIDCFlow returns a fresh flow for redirectURI, valid for ttl.
func (a *Authenticator) NewOIDCFlow(redirectURI string, ttl time.Duration) OIDCFlow {
	rnd := func() string {
		b := make([]byte, 32)
		rand.Read(b)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return OIDCFlow{State: rnd(), Nonce: rnd(), Verifier: rnd(), Redirect: redirectURI, Expires: a.cfg.Now().Add(ttl).Unix()}
}

// AuthorizationURL is where the browser goes to sign in: the provider's
// authorization endpoint with the flow's state, nonce and S256 challenge.
func (a *Authenticator) AuthorizationURL(f OIDCFlow) string {
	o := a.cfg.OIDC
	sum := sha256.Sum256([]byte(f.Verifier))
	q := url.Values{
		"response_type":         {"code"},
		"client_id":             {o.ClientID},
		"redirect_uri":          {f.Redirect},
		"scope":                 {strings.Join(o.Scopes, " ")},
		"state":                 {f.State},
		"nonce":                 {f.Nonce},
		"code_challenge":        {base64.RawURLEncoding.EncodeToString(sum[:])},
		"code_challenge_method": {"S256"},
	}
	u := o.AuthorizationURL
	if strings.Contains(u, "?") {
		return u + "&" + q.Encode()
	}
	return u + "?" + q.Encode()
}

// SealOIDCFlow signs a flow for the browser's state cookie; OpenOIDCFlow
// takes it back when the signature holds and it has not expired.
func (a *Authenticator) SealOIDCFlow(f OIDCFlow) string {
	b, _ := json.Marshal(f)
	enc := base64.RawURLEncoding.EncodeToString(b)
	return enc + "." + SignURL(a.URLKey(), "oidc-flow", enc)
}

// OpenOIDCFlow is SealOIDCFlow's inverse.
func (a *Authenticator) OpenOIDCFlow(sealed string) (OIDCFlow, bool) {
	var f OIDCFlow
	enc, sig, ok := strings.Cut(sealed, ".")
	if !ok || len(sealed) > 4096 || !VerifyURL(a.URLKey(), sig, "oidc-flow", enc) {
		return f, false
	}
	b, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || json.Unmarshal(b, &f) != nil || f.State == "" || f.Nonce == "" || f.Verifier == "" {
		return f, false
	}
	if a.cfg.Now().Unix() > f.Expires {
		return f, false
	}
	return f, true
}

// SameState compares a callback's state with the flow's in constant time.
func SameState(f OIDCFlow, state string) bool {
	return state != "" && subtle.ConstantTimeCompare([]byte(f.State), []byte(state)) == 1
}

// OIDCIdentity is the user an ID token names, mapped as external tokens
// are (username_claim, groups_claim).
type OIDCIdentity struct {
	Username string
	Email    string
	Groups   []string
	// Subject is the provider's sub (for the log).
	Subject string
}

// ExchangeOIDCCode trades the callback's code, with the flow's verifier
// and redirect URI, for an ID token at the token endpoint, and verifies
// it (VerifyIDToken).
func (a *Authenticator) ExchangeOIDCCode(ctx context.Context, f OIDCFlow, code string) (*OIDCIdentity, error) {
	o := a.cfg.OIDC
	form := url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {code},
		"redirect_uri":  {f.Redirect},
		"client_id":     {o.ClientID},
		"code_verifier": {f.Verifier},
	}
	ctx, cancel := context.WithTimeout(ctx, OIDCTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrOIDCUnreachable, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if a.oidcSecret != "" {
		req.SetBasicAuth(url.QueryEscape(o.ClientID), url.QueryEscape(a.oidcSecret)) // RFC 6749 §2.3.1
	}
	resp, err := o.HTTPClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrOIDCUnreachable, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxOIDCResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrOIDCUnreachable, err)
	}
	if len(body) > MaxOIDCResponseBytes {
		return nil, fmt.Errorf("%w: the answer is over %d bytes", ErrOIDCTokenRefused, MaxOIDCResponseBytes)
	}
	var out struct {
		IDToken          string `json:"id_token"`
		Error            string `json:"error"`
		ErrorDescription string `json:"error_description"`
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "application/json" || json.Unmarshal(body, &out) != nil {
		return nil, fmt.Errorf("%w: HTTP %d, not a JSON answer", ErrOIDCTokenRefused, resp.StatusCode)
	}
	if resp.StatusCode != http.StatusOK || out.Error != "" {
		return nil, fmt.Errorf("%w: HTTP %d %s %s", ErrOIDCTokenRefused, resp.StatusCode, trimText(out.Error, 64), trimText(out.ErrorDescription, 200))
	}
	if out.IDToken == "" {
		return nil, fmt.Errorf("%w: no id_token in the answer (is openid among auth.oidc_scopes?)", ErrOIDCBadIDToken)
	}
	return a.VerifyIDToken(out.IDToken, f.Nonce)
}

// VerifyIDToken checks an ID token of the sign-in whose nonce is given:
// the signature with the provider's keys (auth.jwks_file or pem_file),
// iss (auth.issuer), aud holding the client id (and azp, when present,
// naming it), exp (required) and nbf with the usual leeway, and the nonce.
func (a *Authenticator) VerifyIDToken(tok, nonce string) (*OIDCIdentity, error) {
	if len(tok) > MaxIDTokenBytes {
		return nil, fmt.Errorf("%w: over %d bytes", ErrOIDCBadIDToken, MaxIDTokenBytes)
	}
	parsed, err := jwt.Parse(tok, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		if k, ok := a.external[kid]; ok {
			return k, nil
		}
		if k, ok := a.external[""]; ok {
			return k, nil
		}
		return nil, errors.New("unknown kid")
	}, jwt.WithValidMethods(validMethods), jwt.WithExpirationRequired(), jwt.WithLeeway(a.cfg.Leeway),
		jwt.WithTimeFunc(a.cfg.Now), jwt.WithIssuer(a.cfg.ExternalIssuer), jwt.WithAudience(a.cfg.OIDC.ClientID))
	if err != nil || !parsed.Valid {
		return nil, fmt.Errorf("%w: %v", ErrOIDCBadIDToken, err)
	}
	claims := parsed.Claims.(jwt.MapClaims)
	if azp, ok := claims["azp"].(string); ok && azp != a.cfg.OIDC.ClientID {
		return nil, fmt.Errorf("%w: azp %q is not the client id", ErrOIDCBadIDToken, trimText(azp, 64))
	}
	if n, _ := claims["nonce"].(string); nonce == "" || subtle.ConstantTimeCompare([]byte(n), []byte(nonce)) != 1 {
		return nil, ErrOIDCNonce
	}
	id := &OIDCIdentity{Username: a.username(claims), Groups: a.groups(claims)}
	id.Subject, _ = claims["sub"].(string)
	id.Email, _ = claims["email"].(string)
	if id.Username == "" {
		return nil, ErrOIDCNoUser
	}
	return id, nil
}

// trimText keeps a provider's text short and printable for a log line.
func trimText(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return -1
		}
		return r
	}, s)
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}
