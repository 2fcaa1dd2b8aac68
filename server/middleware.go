package server

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"quire/auth"
	"quire/storage"
)

const (
	localRequestID = "requestId"
	localPrincipal = "principal"
)

// corsHeaders are FormKiQ's CORS response headers, sent on every response.
const corsAllowHeaders = "Content-Type,X-Amz-Date,Authorization,X-Api-Key,x-formkiq-delegation-token"

func (s *Server) cors(c *fiber.Ctx) error {
	h := &c.Response().Header
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Allow-Methods", "*")
	h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
	if c.Method() == http.MethodOptions {
		h.Set("Access-Control-Allow-Headers", "*")
		return c.SendStatus(http.StatusOK)
	}
	return c.Next()
}

// accessLog logs one line per request: method, route template, status,
// duration and request id. It never logs headers, query strings (signed
// URLs carry signatures), bodies or tokens (SERVICE-SPEC.md 5.11).
func (s *Server) accessLog(c *fiber.Ctx) error {
	start := time.Now()
	// A request id from a reverse proxy or client is kept so logs can be
	// joined across hops; anything odd is replaced.
	id := c.Get("X-Request-Id")
	if !validRequestID(id) {
		var b [8]byte
		_, _ = rand.Read(b[:])
		id = hex.EncodeToString(b[:])
	} else {
		id = strings.Clone(id)
	}
	c.Locals(localRequestID, id)
	c.Set("X-Request-Id", id)
	s.metrics.inFlight.Inc()
	defer s.metrics.inFlight.Dec()
	err := c.Next()
	if err != nil {
		// Render the error now so the logged status is the real one.
		if herr := s.app.Config().ErrorHandler(c, err); herr != nil {
			return herr
		}
	}
	// A handler that answered without reading the body (a 401, 404 or a
	// route that takes none) leaves it in the socket; closing the
	// connection on unread bytes resets it before the client reads the
	// answer, so read and discard what is left (bounded).
	drain(c)
	took := time.Since(start)
	s.metrics.observe(c, took)
	s.log.Info("request",
		"requestId", id,
		"method", c.Method(),
		"route", routeName(c),
		"status", c.Response().StatusCode(),
		"durationMs", float64(took.Microseconds())/1000,
	)
	return nil
}

// validRequestID accepts 8 to 64 characters of letters, digits, '-',
// '_' and '.': nothing that could forge a log line.
func validRequestID(id string) bool {
	if len(id) < 8 || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

func requestID(c *fiber.Ctx) string {
	id, _ := c.Locals(localRequestID).(string)
	return id
}

// routeName is the matched route template (never the raw path, which can
// hold document ids or names).
func routeName(c *fiber.Ctx) string {
	if r := c.Route(); r != nil && r.Path != "" && r.Path != "/" {
		return r.Path
	}
	return "unmatched"
}

// authenticate verifies the Authorization header and stores the principal.
func (s *Server) authenticate(c *fiber.Ctx) error {
	p, err := s.deps.Auth.Authenticate(string(c.Request().Header.Peek(fiber.HeaderAuthorization)))
	if err != nil {
		return err
	}
	c.Locals(localPrincipal, p)
	return c.Next()
}

// reqCtx is what a handler gets: the fiber context, the caller, the site
// the request acts on (already authorized) and the request time.
type reqCtx struct {
	*fiber.Ctx
	p    *auth.Principal
	site string
	now  time.Time

	// pageTok, when set, replaces the request's `next` token (POST
	// /search walking pages for a `previous` link).
	pageTok *string

	// The site's folder permissions, read on first use.
	fperms   storage.FolderPermissionSet
	fpLoaded bool
	fpErr    bool
}

// pageToken is the paging token a search starts from.
func (r *reqCtx) pageToken() string {
	if r.pageTok != nil {
		return *r.pageTok
	}
	return r.Query("next")
}

// user is the caller's name as stored in userId fields.
func (r *reqCtx) user() string { return r.p.Username }

type handler func(r *reqCtx) error

// siteFrom says where a route takes its site id from.
type siteFrom int

const (
	siteQuery siteFrom = iota // ?siteId= with FormKiQ's fallback rules
	sitePath                  // the {siteId} path parameter
	siteNone                  // not site scoped (GET /sites, /version)
)

// wrap turns a handler into a fiber handler that resolves the site and
// checks that the caller holds perm on it.
func (s *Server) wrap(from siteFrom, perm auth.Permission, h handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p, _ := c.Locals(localPrincipal).(*auth.Principal)
		if p == nil {
			return &auth.Error{Status: http.StatusUnauthorized, Msg: "Unauthorized"}
		}
		r := &reqCtx{Ctx: c, p: p, now: s.now().UTC()}
		switch from {
		case siteQuery:
			site, err := p.SelectSite(strings.Clone(c.Query("siteId")))
			if err != nil {
				return err
			}
			r.site = site
		case sitePath:
			site := strings.Clone(c.Params("siteId"))
			if _, err := p.SelectSite(site); err != nil {
				return err
			}
			r.site = site
		}
		if from != siteNone && perm != "" {
			if err := p.Require(r.site, perm); err != nil {
				return err
			}
		}
		if err := s.checkDocumentRoute(r); err != nil {
			return err
		}
		if err := refuseUnsupportedQuery(c); err != nil {
			return err
		}
		return h(r)
	}
}

// unsupportedQuery are FormKiQ query parameters that name another object
// than the one the route answers for (an artifact or an older version of
// a document). Quire has neither, and ignoring them would read, replace
// or delete the document itself instead.
var unsupportedQuery = []struct{ key, why string }{
	{"artifactId", "document artifacts are not supported by this server"},
	{"versionKey", "document versions are not supported by this server"},
}

func refuseUnsupportedQuery(c *fiber.Ctx) error {
	for _, u := range unsupportedQuery {
		if c.Query(u.key) != "" {
			return invalid(u.key, u.why)
		}
	}
	return nil
}
