package server

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"quire/console"
	"quire/server/directory"
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
	return c.Redirect(directory.ConsolePath, http.StatusFound)
}

// handleConsole serves GET /console/*: an embedded file, gzip-compressed
// for clients that take it, revalidated by ETag (index.html is never
// cached: it names the modules).
func (s *Server) handleConsole(c *fiber.Ctx) error {
	if !strings.HasPrefix(c.Path(), directory.ConsolePath) {
		return s.handleConsoleRoot(c) // "/console"
	}
	name := strings.TrimPrefix(c.Path(), directory.ConsolePath)
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
