package server

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"quire/server/internal/api"
	"quire/storage"
)

// Which routes honour the key is a property of the route table
// (routes.go): every POST, PUT, PATCH and DELETE route does, and so do
// the GET routes whose row says writingRead, except the routes whose row
// gives an unkeyed reason, which refuse the header (400).
// TestKeyedRoutes_EveryWriteRoute checks the lists against the routes.

// routeKey is "METHOD path" of a registered route.
func routeKey(method, path string) string { return method + " " + path }

// keyedRoute says whether the route of method and path honours an
// Idempotency-Key (reads that are not writingRead take it without effect;
// the webhook intake routes keep their own keys, server/intake/webhooks.go).
func keyedRoute(rows map[string]*route, method, path string) bool {
	rt := rows[routeKey(method, path)]
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	case http.MethodGet:
		return rt != nil && rt.writingRead
	default:
		return false
	}
	return rt == nil || rt.unkeyed == ""
}

// routeTable matches a request to the route fiber serves it with: the
// first route of its method, in registration order, whose pattern
// matches (":name" one segment, "*" the rest), case-insensitively and
// without a trailing slash, as fiber's default routing does.
type routeTable struct {
	routes map[string][]routePattern
}

type routePattern struct {
	segs  []string
	keyed bool
}

func newRouteTable(routes []fiber.Route, rows map[string]*route) *routeTable {
	t := &routeTable{routes: map[string][]routePattern{}}
	for _, r := range routes {
		t.routes[r.Method] = append(t.routes[r.Method], routePattern{
			segs:  splitPath(r.Path),
			keyed: keyedRoute(rows, r.Method, r.Path),
		})
	}
	return t
}

func splitPath(p string) []string {
	p = strings.Trim(strings.ToLower(p), "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// match says whether method and path name a route, and whether it
// honours the Idempotency-Key.
func (t *routeTable) match(method, path string) (found, keyed bool) {
	segs := splitPath(path)
	for _, r := range t.routes[method] {
		if matchSegs(r.segs, segs) {
			return true, r.keyed
		}
	}
	return false, false
}

func matchSegs(pat, segs []string) bool {
	for i, p := range pat {
		if p == "*" {
			return true
		}
		if i >= len(segs) {
			return false
		}
		if strings.HasPrefix(p, ":") {
			if segs[i] == "" {
				return false
			}
			continue
		}
		if p != segs[i] {
			return false
		}
	}
	return len(pat) == len(segs)
}

// idempotencyKey checks a request's Idempotency-Key before anything else
// runs: a malformed key, or one sent to a write route that cannot honour
// it, is refused (400) before any write.
func (s *Server) idempotencyKey(c *fiber.Ctx) error {
	raw := c.Request().Header.Peek(api.HeaderIdempotencyKey)
	if raw == nil {
		return c.Next()
	}
	path := c.Path()
	switch c.Method() {
	case http.MethodGet:
		if found, keyed := s.routeTable.match(c.Method(), path); !found || !keyed {
			return c.Next() // a read: the header has no effect
		}
	case http.MethodHead, http.MethodOptions:
		return c.Next()
	}
	lower := strings.ToLower(path)
	if strings.HasPrefix(lower, "/public/webhooks/") || strings.HasPrefix(lower, "/private/webhooks/") {
		return c.Next() // the webhooks' own keys (server/intake/webhooks.go)
	}
	key := string(raw)
	if !storage.CheckIdempotencyKey(key) {
		return api.Invalid(api.HeaderIdempotencyKey, fmt.Sprintf("'Idempotency-Key' must be 1 to %d printable ASCII characters", storage.MaxIdempotencyKeyBytes))
	}
	found, keyed := s.routeTable.match(c.Method(), path)
	if !found {
		return c.Next() // FormKiQ's 404 follows
	}
	if !keyed {
		return api.Invalid(api.HeaderIdempotencyKey, fmt.Sprintf("'Idempotency-Key' is not supported on %s %s: send the request without it (API.md, \"Exactly-once writes\")", c.Method(), path))
	}
	c.Locals(api.LocalIdemKey, key)
	return c.Next()
}
