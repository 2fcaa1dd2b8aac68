package server

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"quire/storage"
)

// Exactly-once writes (API.md "Exactly-once writes", cluster/DESIGN.md
// "Consistency"): a write sent with an Idempotency-Key is applied at most
// once per key, site and caller; a retry with the key answers the first
// write's result. The key rides in the request's one command
// (storage.Command.Idem) and the store records it in the transaction that
// applies it (storage/requests.go), so it holds across restarts and
// failover, on every node.

// headerIdempotencyKey is the request header.
const headerIdempotencyKey = "Idempotency-Key"

// localIdemKey holds a request's valid, honoured Idempotency-Key.
const localIdemKey = "idempotencyKey"

// keyedRoute is a route that honours the Idempotency-Key.
type keyedRoute struct{ method, path string }

// keyedRoutes are the routes that honour an Idempotency-Key: each one's
// handler applies exactly one command (besides content chunk commands,
// which are idempotent by their content hash) and answers from that
// command's result and the request, so a retry gets the first answer.
// Every other write route refuses the header (400) rather than ignore it;
// the webhook intake routes keep their own per-webhook keys (webhooks.go);
// reads (GET, HEAD) take the header without effect, being idempotent.
// TestKeyedRoutes_AreRoutes checks that each one is a route.
var keyedRoutes = []keyedRoute{
	{http.MethodPost, "/documents"},
	{http.MethodPatch, "/documents/:documentId"},
	{http.MethodPut, "/documents/:documentId/restore"},
	{http.MethodPost, "/documents/:documentId/tags"},
	{http.MethodPut, "/documents/:documentId/tags"},
	{http.MethodPatch, "/documents/:documentId/tags"},
	{http.MethodPut, "/documents/:documentId/tags/:tagKey"},
	{http.MethodDelete, "/documents/:documentId/tags/:tagKey"},
	{http.MethodDelete, "/documents/:documentId/tags/:tagKey/:tagValue"},
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

func newRouteTable(routes []fiber.Route) *routeTable {
	keyed := map[keyedRoute]bool{}
	for _, k := range keyedRoutes {
		keyed[k] = true
	}
	t := &routeTable{routes: map[string][]routePattern{}}
	for _, r := range routes {
		t.routes[r.Method] = append(t.routes[r.Method], routePattern{
			segs:  splitPath(r.Path),
			keyed: keyed[keyedRoute{r.Method, r.Path}],
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
	raw := c.Request().Header.Peek(headerIdempotencyKey)
	if raw == nil {
		return c.Next()
	}
	switch c.Method() {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return c.Next()
	}
	path := c.Path()
	lower := strings.ToLower(path)
	if strings.HasPrefix(lower, "/public/webhooks/") || strings.HasPrefix(lower, "/private/webhooks/") {
		return c.Next() // the webhooks' own keys (webhooks.go)
	}
	key := string(raw)
	if !storage.CheckIdempotencyKey(key) {
		return invalid(headerIdempotencyKey, fmt.Sprintf("'Idempotency-Key' must be 1 to %d printable ASCII characters", storage.MaxIdempotencyKeyBytes))
	}
	found, keyed := s.routeTable.match(c.Method(), path)
	if !found {
		return c.Next() // FormKiQ's 404 follows
	}
	if !keyed {
		return invalid(headerIdempotencyKey, fmt.Sprintf("'Idempotency-Key' is not supported on %s %s: send the request without it", c.Method(), path))
	}
	c.Locals(localIdemKey, key)
	return c.Next()
}

// requestHash identifies a request for its Idempotency-Key: method, path
// and query (the URI as sent) and the body read by readBody.
func (r *reqCtx) requestHash() string {
	h := sha256.New()
	h.Write([]byte(r.Method()))
	h.Write([]byte{0})
	h.Write(r.Request().Header.RequestURI())
	h.Write([]byte{0})
	h.Write(r.bodySum)
	return hex.EncodeToString(h.Sum(nil))
}

// errKeyReused is a handler that applies a second command under one
// Idempotency-Key: a route listed in keyedRoutes that should not be.
var errKeyReused = errors.New("server: a keyed request applied a second command")

// idempotency is the Idempotency-Key the request's next command carries,
// nil without one. A keyed request carries it in exactly one command.
func (r *reqCtx) idempotency() (*storage.Idempotency, error) {
	key, _ := r.Locals(localIdemKey).(string)
	if key == "" && r.implicitKey == nil {
		return nil, nil
	}
	if r.keyUsed {
		return nil, errKeyReused
	}
	r.keyUsed = true
	if key == "" {
		k := *r.implicitKey
		k.Hash = r.requestHash()
		return &k, nil
	}
	if p := r.Route(); p != nil && !slicesContainsRoute(r.Method(), p.Path) {
		return nil, errKeyReused
	}
	return &storage.Idempotency{Key: key, Hash: r.requestHash()}, nil
}

func slicesContainsRoute(method, path string) bool {
	for _, k := range keyedRoutes {
		if k.method == method && k.path == path {
			return true
		}
	}
	return false
}
