package server

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"quire/server/internal/api"
)

// SetTestRoutes adds routes to every server built until it is called
// with nil (tests only).
func SetTestRoutes(f func(fiber.Router)) { testRoutes = f }

// SetTestIndexGateLag sets the index lag above which servers built until
// it is called with 0 hold back index-feeding writes (tests only).
func SetTestIndexGateLag(d time.Duration) { api.TestGateLag = d }

// KeyedRoute says whether the route of method and path (as registered)
// honours an Idempotency-Key; UnkeyedRoutes are the write routes that
// refuse it, with their reasons, and WritingReads the GET routes that
// honour it (tests only).
func KeyedRoute(method, path string) bool { return keyedRoute(method, path) }
func UnkeyedRoutes() map[string]string    { return unkeyedRoutes }
func WritingReads() map[string]bool       { return writingReads }

// LimitClasses is the rate-limit class of every route that needs no
// token ("METHOD /path"), as the route table declared them (tests only).
func (s *Server) LimitClasses() map[string]string { return s.limitClass }

// ArtifactRoutes and VersionKeyRoutes are the routes that take the
// artifactId and versionKey query parameters, as "METHOD path" (tests
// only).
func ArtifactRoutes() map[string]bool   { return api.ArtifactRoutes }
func VersionKeyRoutes() map[string]bool { return api.VersionKeyRoutes }

// RefusedRoutes are the routes refused on purpose with 501, as "METHOD
// path" mapped to the reason (tests only).
func RefusedRoutes() map[string]string {
	out := map[string]string{}
	for _, r := range refusedRoutes {
		out[r.method+" "+r.path] = r.reason
	}
	return out
}

// StoredRoutes are the routes that answer with stored bytes, as "GET
// path" mapped to what they serve (tests only).
func StoredRoutes() map[string]string { return api.StoredRoutes }

// ShareRoutes are the routes that take shareKey, as "METHOD path" (tests
// only).
func ShareRoutes() map[string]bool { return api.ShareRoutes }
