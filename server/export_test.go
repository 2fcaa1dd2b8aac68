package server

import (
	"reflect"
	"runtime"
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
func KeyedRoute(method, path string) bool { return keyedRoute(tableIndex(), method, path) }
func UnkeyedRoutes() map[string]string {
	return rowsWith(func(r *route) (string, bool) { return r.unkeyed, r.unkeyed != "" })
}
func WritingReads() map[string]bool { return flagged(func(r *route) bool { return r.writingRead }) }

// tableRows are the route table's rows, read from a Server that serves
// nothing (routeRows only names handlers).
func tableRows() []route { return (&Server{}).routeRows() }

func tableIndex() map[string]*route { return indexRows(tableRows()) }

// rowsWith maps "METHOD path" of the rows f picks to f's value.
func rowsWith(f func(*route) (string, bool)) map[string]string {
	out := map[string]string{}
	for _, r := range tableRows() {
		if v, ok := f(&r); ok {
			out[r.method+" "+r.path] = v
		}
	}
	return out
}

func flagged(f func(*route) bool) map[string]bool {
	out := map[string]bool{}
	for k := range rowsWith(func(r *route) (string, bool) { return "", f(r) }) {
		out[k] = true
	}
	return out
}

// LimitClasses is the rate-limit class of every route that needs no
// token ("METHOD /path"), as the route table declared them (tests only).
func (s *Server) LimitClasses() map[string]string { return s.limitClass }

// ArtifactRoutes and VersionKeyRoutes are the routes that take the
// artifactId and versionKey query parameters, as "METHOD path" (tests
// only).
func ArtifactRoutes() map[string]bool   { return flagged(func(r *route) bool { return r.artifactID }) }
func VersionKeyRoutes() map[string]bool { return flagged(func(r *route) bool { return r.versionKey }) }

// RefusedRoutes are the routes refused on purpose with 501, as "METHOD
// path" mapped to the reason (tests only).
func RefusedRoutes() map[string]string {
	return rowsWith(func(r *route) (string, bool) { return r.refused, r.refused != "" })
}

// StoredRoutes are the routes that answer with stored bytes, as "GET
// path" mapped to what they serve (tests only).
func StoredRoutes() map[string]string {
	return rowsWith(func(r *route) (string, bool) { return r.stored, r.stored != "" })
}

// ShareRoutes are the routes that take shareKey, as "METHOD path" (tests
// only).
func ShareRoutes() map[string]bool { return flagged(func(r *route) bool { return r.shareKey }) }

// RouteHandlers maps every route of the table ("METHOD path") to its
// handler function's symbol, as the runtime names it:
// "quire/server/documents.(*Handlers).HandleGetDocuments-fm" (tests only:
// the robustness sweep sends a route the query parameters the code its
// handler reaches reads).
func RouteHandlers() map[string]string {
	out := map[string]string{}
	for _, r := range tableRows() {
		var h any = r.h
		if r.public != nil {
			h = r.public
		}
		out[r.method+" "+r.path] = runtime.FuncForPC(reflect.ValueOf(h).Pointer()).Name()
	}
	return out
}
