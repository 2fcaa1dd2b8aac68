package server

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"quire/auth"
	"quire/guard"
	"quire/storage"
)

const (
	localRequestID = "requestId"
	localPrincipal = "principal"
	localBody      = "body"
)

// corsHeaders are FormKiQ's CORS response headers, sent on every response.
const corsAllowHeaders = "Content-Type,X-Amz-Date,Authorization,X-Api-Key,x-formkiq-delegation-token,Idempotency-Key"

func (s *Server) cors(c *fiber.Ctx) error {
	h := &c.Response().Header
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Allow-Methods", "*")
	h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
	if c.Method() == http.MethodOptions {
		h.Set("Access-Control-Allow-Headers", "*")
		davOptions(c) // WebDAV's OPTIONS (dav.go)
		return c.SendStatus(http.StatusOK)
	}
	return c.Next()
}

// accessLog logs one line per request: method, route template, status,
// duration and request id. It never logs headers, query strings (signed
// URLs carry signatures), bodies or tokens (SERVICE-SPEC.md §5.11).
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
	// From here on the body is read as the handler needs it: each read
	// gets its own deadline rather than one for the whole body.
	if tc := connOf(c); tc != nil {
		tc.startBody()
		defer tc.endBody()
	}
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
	if p, _ := c.Locals(localPrincipal).(*auth.Principal); p != nil && p.Delegation != nil {
		// Both identities and the reason, for the audit trail.
		d := p.Delegation
		s.log.Info("delegated request", "requestId", id, "actor", d.Actor, "onBehalfOf", d.OnBehalfOf,
			"site", d.Site, "delegatedBy", d.IssuedBy, "reason", d.Reason)
	}
	return nil
}

// recoverPanic turns a handler's panic into a 500 in FormKiQ's shape
// ({"message":"Internal Server Error"}) with the stack logged under the
// request id and counted in quire_panics_total: fasthttp does not recover,
// so without it one request would end the process and every site.
func (s *Server) recoverPanic(c *fiber.Ctx) (err error) {
	defer func() {
		if v := recover(); v != nil {
			guard.Report(s.log, guard.HTTP, v, "requestId", requestID(c), "method", c.Method(), "route", routeName(c))
			err = errHandlerPanic
		}
	}()
	return c.Next()
}

// errHandlerPanic is a recovered panic: a plain 500 to the client.
var errHandlerPanic = errors.New("handler panicked")

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
	if len(c.Request().Header.Peek(auth.DelegationHeader)) == 0 {
		// Site groups: permissions an administrator gave the caller's
		// groups on a site (sitegroups.go).
		if p, err = s.siteGrants(p); err != nil {
			return err
		}
	}
	if tok := c.Request().Header.Peek(auth.DelegationHeader); len(tok) > 0 {
		if p, err = s.deps.Auth.Delegate(p, string(tok)); err != nil {
			return err
		}
	}
	c.Locals(localPrincipal, p)
	return c.Next()
}

// checkURLText refuses a request whose path parameters or query values
// are not valid UTF-8 once percent-decoded: they would reach storage, the
// index or an answer as U+FFFD, a silent change of what the client sent.
func checkURLText(c *fiber.Ctx) error {
	if p, err := url.PathUnescape(string(c.Request().URI().PathOriginal())); err == nil && !utf8.ValidString(p) {
		return invalid("path", "the request path is not valid UTF-8")
	}
	var bad string
	c.Context().QueryArgs().VisitAll(func(k, v []byte) {
		if bad == "" && !(utf8.Valid(k) && utf8.Valid(v)) {
			bad = strings.ToValidUTF8(string(k), "?")
		}
	})
	if bad != "" {
		return invalid(bad, "query parameter '"+bad+"' is not valid UTF-8")
	}
	return nil
}

// reqCtx is what a handler gets: the fiber context, the caller, the site
// the request acts on (already authorized) and the request time.
type reqCtx struct {
	*fiber.Ctx
	p    *auth.Principal
	site string
	now  time.Time
	// public marks an anonymous submission (POST /public/documents).
	public bool

	// pageTok, when set, replaces the request's `next` token (POST
	// /search walking pages for a `previous` link).
	pageTok *string

	// art is the artifactId the request acts on, checked to be an
	// artifact of the path's document (resolveDocument); docID() is then
	// the artifact's record id.
	art string

	// bodySum is the SHA-256 of the body (readBody, bufferBody);
	// implicitKey the key a client-chosen documentId stands for, used
	// by the request's create when it carries no Idempotency-Key
	// (requestkeys.go).
	bodySum     []byte
	implicitKey *storage.Idempotency

	// The site's folder permissions, read on first use.
	fperms   storage.FolderPermissionSet
	fpLoaded bool
	fpErr    bool

	// share is the folder share a request with shareKey acts through
	// (shares.go); shares are the site's shares naming the caller, read
	// on first use.
	share    *storage.Share
	shares   []storage.Share
	shLoaded bool
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
		if err := checkURLText(c); err != nil {
			return err
		}
		r := &reqCtx{Ctx: c, p: p, now: s.now().UTC()}
		shareKey := strings.Clone(c.Query("shareKey"))
		if shareKey != "" && from != siteQuery {
			return invalid("shareKey", "'shareKey' is not supported on this route")
		}
		switch {
		case shareKey != "":
			if err := s.useShare(r, shareKey, perm); err != nil {
				return err
			}
		case from == siteQuery:
			site, err := p.SelectSite(strings.Clone(c.Query("siteId")))
			if err != nil {
				return err
			}
			r.site = site
		case from == sitePath:
			site := siteParam(c)
			if _, err := p.SelectSite(site); err != nil {
				return err
			}
			r.site = site
		}
		if from != siteNone && !storage.CheckSiteID(r.site) {
			return errStatus(http.StatusBadRequest, "invalid siteId")
		}
		if from != siteNone && perm != "" && r.share == nil {
			if err := p.Require(r.site, perm); err != nil {
				return err
			}
		}
		if err := refuseUnsupportedQuery(c); err != nil {
			return err
		}
		run := func() error {
			if err := s.resolveDocument(r, perm); err != nil {
				return err
			}
			return h(r)
		}
		if key, _ := c.Locals(localIdemKey).(string); key != "" {
			return s.serveKeyed(r, key, run)
		}
		return run()
	}
}

// siteParam is the {siteId} path parameter, unescaped: site ids taken from
// group paths hold "/", which URLs carry as %2F.
func siteParam(c *fiber.Ctx) string { return unescapedParam(c, "siteId") }

// unescapedParam is a path parameter, percent-decoded. The result is
// always a copy: fasthttp reuses the request's buffer, and PathUnescape
// returns its input itself when there is nothing to unescape.
func unescapedParam(c *fiber.Ctx, name string) string {
	v := c.Params(name)
	if u, err := url.PathUnescape(v); err == nil {
		v = u
	}
	return strings.Clone(v)
}

// refuseUnsupportedQuery refuses FormKiQ query parameters that name
// another object than the one the route answers for: versionKey (an
// earlier version of a document) outside versionKeyRoutes (versions.go).
// Ignored, it would read, replace or delete the document itself instead.
// artifactId is refused the same way on the routes that do not take it
// (artifactRoutes, artifacts.go).
func refuseUnsupportedQuery(c *fiber.Ctx) error {
	if c.Query("versionKey") != "" && !versionKeyRoutes[queryRouteKey(c)] {
		return invalid("versionKey", msgVersionKeyRoute)
	}
	return nil
}

// queryRouteKey is the route a request matched as artifactRoutes and
// versionKeyRoutes name it: "METHOD path", HEAD as the GET it runs (a
// HEAD answers as its GET would, folder check included).
func queryRouteKey(c *fiber.Ctx) string {
	m := c.Method()
	if m == fiber.MethodHead {
		m = fiber.MethodGet
	}
	return m + " " + c.Route().Path
}
