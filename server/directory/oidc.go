package directory

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"quire/auth"
	"quire/server/internal/api"
	"quire/storage"
)

const (
	// oidcCookie carries one sign-in's flow (state, nonce, PKCE
	// verifier, redirect URI), signed with the server's URL key, from
	// GET /login/oidc to its callback. SameSite=Lax: the IdP's redirect
	// back is a cross-site top-level GET, on which a Strict cookie is not
	// sent; Lax sends it there and on nothing cross-site that writes.
	oidcCookie     = "quire_oidc"
	oidcStartPath  = "/login/oidc"
	oidcCallback   = "/login/oidc/callback"
	oidcFlowTTL    = 10 * time.Minute
	maxOIDCCodeLen = 4096
	// maxOIDCSeen bounds the remembered states of finished sign-ins.
	maxOIDCSeen = 100000
)

// The codes the console's sign-in page turns into a message
// (?signin_error=<code>, i18n "login.oidc.<code>").
const (
	oidcErrUnavailable = "unavailable" // no identity provider is configured
	oidcErrIdP         = "idp"         // the IdP answered with an error (idp_error=<its code>)
	oidcErrState       = "state"       // no, an expired or another sign-in's state cookie
	oidcErrReplay      = "replay"      // this sign-in's callback came before
	oidcErrUnreachable = "unreachable" // the token endpoint did not answer
	oidcErrRefused     = "refused"     // the token endpoint refused the code
	oidcErrToken       = "token"       // the ID token is not valid (signature, iss, aud, exp)
	oidcErrNonce       = "nonce"       // the ID token is of another sign-in
	oidcErrUser        = "user"        // the ID token's user cannot be signed in
)

// idpErrorCode is the shape of an OAuth error code worth repeating.
var idpErrorCode = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// HandleOIDCInfo serves GET /login/oidc/info: what a sign-in page needs
// before anyone signs in. Whether the console offers the identity
// provider, its button's name, and whether it goes there by itself (the
// global webui.ssoAutomaticSignIn); and Quire's (issue 47): whether a
// password can be reset by mail (passwordReset: the server has mail
// settings of its own) and the global branding without secrets
// (api.PublicBranding: title, colours, logoUrl), so a fresh tab's
// sign-in page is branded.
func (s *Handlers) HandleOIDCInfo(c *fiber.Ctx) error {
	o, on := s.Deps.Auth.OIDC()
	c.Set(fiber.HeaderCacheControl, "no-store")
	sc, err := s.DB.SystemConfig()
	if err != nil {
		return err
	}
	out := map[string]any{"enabled": false, "automaticSignIn": false, "passwordReset": s.serverMail() == nil}
	if b := api.PublicBranding(sc.Branding); b != nil {
		out["branding"] = b
	}
	if !on {
		return c.JSON(out)
	}
	auto := false
	if sc.WebUI != nil && sc.WebUI.SsoAutomaticSignIn != nil {
		auto = *sc.WebUI.SsoAutomaticSignIn
	}
	out["enabled"], out["displayName"], out["automaticSignIn"], out["start"] = true, o.DisplayName, auto, oidcStartPath
	return c.JSON(out)
}

// HandleOIDCStart serves GET /login/oidc: a new flow in the state cookie
// and a redirect to the IdP's authorization endpoint.
func (s *Handlers) HandleOIDCStart(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("Referrer-Policy", "no-referrer")
	if _, on := s.Deps.Auth.OIDC(); !on {
		return s.oidcFail(c, oidcErrUnavailable, "", nil)
	}
	if c.Method() == http.MethodHead {
		return c.SendStatus(http.StatusOK) // a HEAD starts nothing (no state cookie)
	}
	f := s.Deps.Auth.NewOIDCFlow(strings.TrimSuffix(s.LinkBase(c), "/")+oidcCallback, oidcFlowTTL)
	c.Cookie(&fiber.Cookie{Name: oidcCookie, Value: s.Deps.Auth.SealOIDCFlow(f), Path: oidcCallback, HTTPOnly: true,
		SameSite: fiber.CookieSameSiteLaxMode, Secure: s.secureCookie(c), MaxAge: int(oidcFlowTTL / time.Second)})
	return c.Redirect(s.Deps.Auth.AuthorizationURL(f), http.StatusFound)
}

// HandleOIDCCallback serves GET /login/oidc/callback: the IdP's answer.
// Every refusal lands on the console's sign-in page with a code (never
// a 500, never a session); a success stores the session's refresh token
// (OpExternalSignIn), sets the refresh cookie and opens the console.
func (s *Handlers) HandleOIDCCallback(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("Referrer-Policy", "no-referrer") // the code is in this URL
	if c.Method() == http.MethodHead {
		return c.SendStatus(http.StatusOK) // a HEAD neither spends nor finishes a sign-in
	}
	sealed := c.Cookies(oidcCookie)
	// The flow is spent whatever happens next.
	c.Cookie(&fiber.Cookie{Name: oidcCookie, Value: "", Path: oidcCallback, HTTPOnly: true,
		SameSite: fiber.CookieSameSiteLaxMode, Secure: s.secureCookie(c), MaxAge: -1, Expires: time.Unix(0, 0)})
	if _, on := s.Deps.Auth.OIDC(); !on {
		return s.oidcFail(c, oidcErrUnavailable, "", nil)
	}
	if e := c.Query("error"); e != "" {
		code := ""
		if idpErrorCode.MatchString(e) {
			code = e
		}
		return s.oidcFail(c, oidcErrIdP, code, errors.New("the identity provider answered "+e+": "+c.Query("error_description")))
	}
	f, ok := s.Deps.Auth.OpenOIDCFlow(sealed)
	if !ok {
		return s.oidcFail(c, oidcErrState, "", errors.New("no valid state cookie (none, expired or forged)"))
	}
	if !auth.SameState(f, c.Query("state")) {
		return s.oidcFail(c, oidcErrState, "", errors.New("the state does not match the browser's"))
	}
	if !s.oidcSeen.first(f.State, time.Unix(f.Expires, 0), s.Now()) {
		return s.oidcFail(c, oidcErrReplay, "", errors.New("this sign-in's callback came before"))
	}
	code := c.Query("code")
	if code == "" || len(code) > maxOIDCCodeLen {
		return s.oidcFail(c, oidcErrIdP, "", errors.New("no code in the callback"))
	}
	id, err := s.Deps.Auth.ExchangeOIDCCode(context.Background(), f, code)
	if err != nil {
		kind := oidcErrToken
		switch {
		case errors.Is(err, auth.ErrOIDCUnreachable):
			kind = oidcErrUnreachable
		case errors.Is(err, auth.ErrOIDCTokenRefused):
			kind = oidcErrRefused
		case errors.Is(err, auth.ErrOIDCNonce):
			kind = oidcErrNonce
		case errors.Is(err, auth.ErrOIDCNoUser):
			kind = oidcErrUser
		}
		return s.oidcFail(c, kind, "", err)
	}
	r := s.PublicCtx(c, id.Username)
	refresh, rh := auth.NewSecret(32)
	in := storage.ExternalSignIn{RefreshHash: rh, Refresh: storage.RefreshToken{Username: id.Username, External: true,
		Groups: id.Groups, Email: id.Email, Expires: r.Now.Add(s.Deps.Auth.RefreshTTL())}}
	if _, err := s.Apply(r, storage.OpExternalSignIn, in); err != nil {
		var ve *storage.ValidationError
		if errors.As(err, &ve) {
			return s.oidcFail(c, oidcErrUser, "", err)
		}
		return err // a store that cannot write (507, 503): the API's answer
	}
	s.Log.Info("console sign-in through the identity provider", "user", id.Username, "sub", id.Subject, "groups", len(id.Groups))
	s.setRefreshCookie(c, refresh, s.Deps.Auth.RefreshTTL())
	return c.Redirect(ConsolePath, http.StatusSeeOther)
}

// oidcFail sends the browser to the console's sign-in page with the
// refusal's code, and logs why.
func (s *Handlers) oidcFail(c *fiber.Ctx, kind, idpCode string, why error) error {
	if why != nil {
		s.Log.Warn("console sign-in through the identity provider refused", "code", kind, "err", why)
	}
	q := url.Values{"signin_error": {kind}}
	if idpCode != "" {
		q.Set("idp_error", idpCode)
	}
	return c.Redirect(ConsolePath+"?"+q.Encode(), http.StatusSeeOther)
}

// issueExternal signs an external session's access and ID tokens: the
// server's own tokens for the identity provider's user, its groups and
// e-mail as the ID token gave them (no directory generation: the user is
// not a directory user).
func (s *Handlers) issueExternal(rt *storage.RefreshToken) (map[string]any, error) {
	at, err := s.Deps.Auth.SignUser("access", rt.Username, rt.Email, rt.Groups, 0)
	if err != nil {
		return nil, err
	}
	it, err := s.Deps.Auth.SignUser("id", rt.Username, rt.Email, rt.Groups, 0)
	if err != nil {
		return nil, err
	}
	return map[string]any{"AuthenticationResult": authResult{AccessToken: at, IdToken: it,
		ExpiresIn: int(s.Deps.Auth.AccessTTL() / time.Second), TokenType: "Bearer"}}, nil
}

// oidcSeen holds the states of finished sign-ins until their flow
// expires, so a callback is taken once even by a browser (or a thief)
// that kept the state cookie. The IdP refuses a code used twice as well;
// this refuses it before the code is sent again.
type oidcSeen struct {
	mu   sync.Mutex
	seen map[string]time.Time
}

// first records state and reports whether it was new.
func (o *oidcSeen) first(state string, until, now time.Time) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.seen == nil {
		o.seen = map[string]time.Time{}
	}
	if _, dup := o.seen[state]; dup {
		return false
	}
	if len(o.seen) >= maxOIDCSeen/2 {
		for k, t := range o.seen {
			if now.After(t) {
				delete(o.seen, k)
			}
		}
		if len(o.seen) >= maxOIDCSeen {
			return false // a flood of sign-ins: refuse rather than forget
		}
	}
	o.seen[state] = until
	return true
}
