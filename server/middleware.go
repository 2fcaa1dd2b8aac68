package server

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"quire/auth"
	"quire/guard"
	"quire/server/admin"
	"quire/server/dav"
	"quire/server/internal/api"
)

// msgDiverged answers every request but the cluster's own and the probes
// on a member found to hold other data than the cluster.
const msgDiverged = "This cluster member's data differs from the cluster's (%s): it serves nothing until it is rebuilt with quire cluster rejoin; use another member"

// refuseWhenDiverged answers 503 on a member found to differ from the
// cluster's majority: its store holds other data, so no read of it may
// be served. /cluster/*, /readyz, /healthz, /metrics and /system/health
// still answer, so operators see why.
func (s *Server) refuseWhenDiverged(c *fiber.Ctx) error {
	v, ok := s.Deps.Cluster.(admin.ClusterVerifier)
	if !ok {
		return c.Next()
	}
	reason := v.Diverged()
	if reason == "" {
		return c.Next()
	}
	p := strings.ToLower(c.Path())
	if strings.HasPrefix(p, "/cluster/") || p == "/readyz" || p == "/healthz" || p == "/metrics" || p == "/system/health" {
		return c.Next()
	}
	return c.Status(http.StatusServiceUnavailable).JSON(fiber.Map{"message": fmt.Sprintf(msgDiverged, reason)})
}

// corsHeaders are FormKiQ's CORS response headers, sent on every response.
const corsAllowHeaders = "Content-Type,X-Amz-Date,Authorization,X-Api-Key,x-formkiq-delegation-token,Idempotency-Key"

func (s *Server) cors(c *fiber.Ctx) error {
	h := &c.Response().Header
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Allow-Methods", "*")
	h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
	if c.Method() == http.MethodOptions {
		h.Set("Access-Control-Allow-Headers", "*")
		dav.Options(c) // WebDAV's OPTIONS (server/dav)
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
	c.Locals(api.LocalRequestID, id)
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
	api.Drain(c)
	took := time.Since(start)
	s.metrics.observe(c, took)
	s.Log.Info("request",
		"requestId", id,
		"method", c.Method(),
		"route", api.RouteName(c),
		"status", c.Response().StatusCode(),
		"durationMs", float64(took.Microseconds())/1000,
	)
	if p, _ := c.Locals(api.LocalPrincipal).(*auth.Principal); p != nil && p.Delegation != nil {
		// Both identities and the reason, for the audit trail.
		d := p.Delegation
		s.Log.Info("delegated request", "requestId", id, "actor", d.Actor, "onBehalfOf", d.OnBehalfOf,
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
			guard.Report(s.Log, guard.HTTP, v, "requestId", api.RequestID(c), "method", c.Method(), "route", api.RouteName(c))
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

// authenticate verifies the Authorization header and stores the principal.
func (s *Server) authenticate(c *fiber.Ctx) error {
	p, err := s.Deps.Auth.Authenticate(string(c.Request().Header.Peek(fiber.HeaderAuthorization)))
	if err != nil {
		return err
	}
	if len(c.Request().Header.Peek(auth.DelegationHeader)) == 0 {
		// Site groups: permissions an administrator gave the caller's
		// groups on a site (sitegroups.go).
		if p, err = s.directory.SiteGrants(p); err != nil {
			return err
		}
	}
	if tok := c.Request().Header.Peek(auth.DelegationHeader); len(tok) > 0 {
		if p, err = s.Deps.Auth.Delegate(p, string(tok)); err != nil {
			return err
		}
	}
	c.Locals(api.LocalPrincipal, p)
	return c.Next()
}
