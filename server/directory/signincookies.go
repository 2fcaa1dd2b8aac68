package directory

import (
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"quire/auth"
	"quire/server/internal/api"
	"quire/storage"
)

// Console routes, and the refresh cookie's name, path and header.
const (
	ConsolePath = "/console/"
	// RefreshCookie holds a console's refresh token: HttpOnly,
	// SameSite=Strict, Secure over TLS, sent only to /login/... .
	RefreshCookie     = "quire_refresh"
	refreshCookiePath = "/login"
	// ConsoleHeader must be on every request that uses the refresh
	// cookie (refresh, sign-out) or asks for one (sign-in): a cross-origin
	// page cannot add it without a CORS preflight, which a credentialed
	// request does not pass (Access-Control-Allow-Origin is *).
	ConsoleHeader = "X-Quire-Console"
)

// consoleRequest checks a request that uses or asks for the refresh
// cookie: the console header, and an Origin (browsers send one with every
// POST) of this server. SameSite=Strict keeps the cookie off cross-site
// requests already; these keep it off same-site, cross-origin ones
// (another port of the same host) and off forms.
func (s *Handlers) consoleRequest(c *fiber.Ctx) error {
	if c.Get(ConsoleHeader) == "" {
		return api.ErrStatus(http.StatusForbidden, "the refresh cookie needs the "+ConsoleHeader+" header")
	}
	origin := strings.TrimSuffix(c.Get(fiber.HeaderOrigin), "/")
	if origin == "" {
		return nil
	}
	self := c.Protocol() + "://" + string(c.Request().Host())
	if strings.EqualFold(origin, self) || strings.EqualFold(origin, strings.TrimSuffix(s.Deps.PublicURL, "/")) ||
		strings.EqualFold(origin, strings.TrimSuffix(s.LinkBase(c), "/")) {
		return nil
	}
	return api.ErrStatus(http.StatusForbidden, "the refresh cookie is for this server's own pages (Origin "+origin+" refused)")
}

// setRefreshCookie hands a refresh token to the browser as an HttpOnly
// cookie instead of in the answer.
func (s *Handlers) setRefreshCookie(c *fiber.Ctx, token string, ttl time.Duration) {
	c.Cookie(&fiber.Cookie{Name: RefreshCookie, Value: token, Path: refreshCookiePath, HTTPOnly: true,
		SameSite: fiber.CookieSameSiteStrictMode, Secure: s.secureCookie(c), MaxAge: int(ttl / time.Second)})
}

func (s *Handlers) clearRefreshCookie(c *fiber.Ctx) {
	c.Cookie(&fiber.Cookie{Name: RefreshCookie, Value: "", Path: refreshCookiePath, HTTPOnly: true,
		SameSite: fiber.CookieSameSiteStrictMode, Secure: s.secureCookie(c), MaxAge: -1,
		Expires: time.Unix(0, 0)})
}

// secureCookie: over TLS, or behind a proxy whose public URL is https.
func (s *Handlers) secureCookie(c *fiber.Ctx) bool {
	return c.Protocol() == "https" || strings.HasPrefix(s.Deps.PublicURL, "https://")
}

// HandleLogout serves POST /login/logout: the refresh token (the body's
// refreshToken, or the console's cookie) ends and the cookie is cleared.
// Access tokens already issued live out their lifetime (auth.access_token_ttl).
func (s *Handlers) HandleLogout(c *fiber.Ctx) error {
	var in struct {
		RefreshToken string `json:"refreshToken"`
	}
	r := s.PublicCtx(c, "")
	if err := r.ReadBody(&in, 16<<10); err != nil {
		return err
	}
	tok := in.RefreshToken
	if tok == "" {
		if err := s.consoleRequest(c); err != nil {
			return err
		}
		tok = c.Cookies(RefreshCookie)
		s.clearRefreshCookie(c)
	}
	if tok == "" || len(tok) > 256 {
		return api.Invalid("refreshToken", "'refreshToken' is required")
	}
	if _, err := s.Apply(r, storage.OpRevokeRefresh, storage.RevokeRefresh{RefreshHash: auth.SecretHash(tok)}); err != nil {
		return err
	}
	return r.JSON(map[string]string{"message": "Signed out"})
}
