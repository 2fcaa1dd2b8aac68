package server

// The web console (issue 31): its files, embedded by package console, are
// served at /console/ on the API's listener, and GET / leads there. The
// sign-in routes take a refresh cookie for it (refreshCookie below), so
// the console never holds a refresh token in script.

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"quire/auth"
	"quire/console"
	"quire/storage"
)

// Console routes, and the refresh cookie's name, path and header.
const (
	consolePath = "/console/"
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

// consoleHeaders are the security headers of every console file.
func consoleHeaders(c *fiber.Ctx) {
	c.Set("Content-Security-Policy", console.CSP)
	c.Set("X-Content-Type-Options", "nosniff")
	c.Set("X-Frame-Options", "DENY")
	c.Set("Referrer-Policy", "no-referrer")
	c.Set("Cross-Origin-Opener-Policy", "same-origin")
	c.Set("Cross-Origin-Resource-Policy", "same-origin")
	c.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=()")
	if c.Protocol() == "https" || strings.HasPrefix(strings.ToLower(c.Get("X-Forwarded-Proto")), "https") {
		c.Set("Strict-Transport-Security", "max-age=31536000")
	}
}

// handleConsoleRoot serves GET /: the console.
func (s *Server) handleConsoleRoot(c *fiber.Ctx) error {
	consoleHeaders(c)
	return c.Redirect(consolePath, http.StatusFound)
}

// handleConsole serves GET /console/*: an embedded file, gzip-compressed
// for clients that take it, revalidated by ETag (index.html is never
// cached: it names the modules).
func (s *Server) handleConsole(c *fiber.Ctx) error {
	if !strings.HasPrefix(c.Path(), consolePath) {
		return s.handleConsoleRoot(c) // "/console"
	}
	name := strings.TrimPrefix(c.Path(), consolePath)
	a, ok := console.Lookup(name)
	if !ok {
		return fiber.ErrNotFound
	}
	consoleHeaders(c)
	c.Set(fiber.HeaderContentType, a.ContentType)
	c.Set(fiber.HeaderETag, a.ETag)
	c.Set(fiber.HeaderVary, "Accept-Encoding")
	c.Set(fiber.HeaderCacheControl, "no-cache")
	if c.Get(fiber.HeaderIfNoneMatch) == a.ETag {
		return c.SendStatus(http.StatusNotModified)
	}
	body := a.Body
	if strings.Contains(c.Get(fiber.HeaderAcceptEncoding), "gzip") {
		c.Set(fiber.HeaderContentEncoding, "gzip")
		body = a.Gzip
	}
	if c.Method() == http.MethodHead {
		c.Set(fiber.HeaderContentLength, strconv.Itoa(len(body)))
		return nil
	}
	return c.Send(body)
}

// consoleRequest checks a request that uses or asks for the refresh
// cookie: the console header, and an Origin (browsers send one with every
// POST) of this server. SameSite=Strict keeps the cookie off cross-site
// requests already; these keep it off same-site, cross-origin ones
// (another port of the same host) and off forms.
func (s *Server) consoleRequest(c *fiber.Ctx) error {
	if c.Get(ConsoleHeader) == "" {
		return errStatus(http.StatusForbidden, "the refresh cookie needs the "+ConsoleHeader+" header")
	}
	origin := strings.TrimSuffix(c.Get(fiber.HeaderOrigin), "/")
	if origin == "" {
		return nil
	}
	self := c.Protocol() + "://" + string(c.Request().Host())
	if strings.EqualFold(origin, self) || strings.EqualFold(origin, strings.TrimSuffix(s.deps.PublicURL, "/")) ||
		strings.EqualFold(origin, strings.TrimSuffix(s.linkBase(c), "/")) {
		return nil
	}
	return errStatus(http.StatusForbidden, "the refresh cookie is for this server's own pages (Origin "+origin+" refused)")
}

// setRefreshCookie hands a refresh token to the browser as an HttpOnly
// cookie instead of in the answer.
func (s *Server) setRefreshCookie(c *fiber.Ctx, token string, ttl time.Duration) {
	c.Cookie(&fiber.Cookie{Name: RefreshCookie, Value: token, Path: refreshCookiePath, HTTPOnly: true,
		SameSite: fiber.CookieSameSiteStrictMode, Secure: s.secureCookie(c), MaxAge: int(ttl / time.Second)})
}

func (s *Server) clearRefreshCookie(c *fiber.Ctx) {
	c.Cookie(&fiber.Cookie{Name: RefreshCookie, Value: "", Path: refreshCookiePath, HTTPOnly: true,
		SameSite: fiber.CookieSameSiteStrictMode, Secure: s.secureCookie(c), MaxAge: -1,
		Expires: time.Unix(0, 0)})
}

// secureCookie: over TLS, or behind a proxy whose public URL is https.
func (s *Server) secureCookie(c *fiber.Ctx) bool {
	return c.Protocol() == "https" || strings.HasPrefix(s.deps.PublicURL, "https://")
}

// handleLogout serves POST /login/logout: the refresh token (the body's
// refreshToken, or the console's cookie) ends and the cookie is cleared.
// Access tokens already issued live out their lifetime (auth.access_token_ttl).
func (s *Server) handleLogout(c *fiber.Ctx) error {
	var in struct {
		RefreshToken string `json:"refreshToken"`
	}
	r := s.publicCtx(c, "")
	if err := r.readBody(&in, 16<<10); err != nil {
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
		return invalid("refreshToken", "'refreshToken' is required")
	}
	if _, err := s.apply(r, storage.OpRevokeRefresh, storage.RevokeRefresh{RefreshHash: auth.SecretHash(tok)}); err != nil {
		return err
	}
	return r.JSON(map[string]string{"message": "Signed out"})
}
