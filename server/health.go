package server

import (
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"quire/server/internal/api"
)

// handleHealthz serves GET /healthz: the process is up and the store open.
func (s *Server) handleHealthz(c *fiber.Ctx) error {
	return c.Status(http.StatusOK).JSON(fiber.Map{"status": "ok"})
}

// handleReadyz serves GET /readyz (no auth): 200 when the store is open
// and the index has caught up (its oldest queued change younger than
// api.ReadyLag), otherwise 503. The body says where the index stands, so
// tools can wait for an empty queue.
//
// Refused writes (a full or failed disk) do not make the node unready: it
// still serves every read, and a load balancer that took it out would turn
// a full disk into an outage. The body says so ("storage": "read-only" and
// "writes"), and GET /readyz?writes=true answers 503 then, for checks that
// route writes.
func (s *Server) handleReadyz(c *fiber.Ctx) error {
	lag := s.Deps.Indexer.TextLag()
	ready := lag < api.ReadyLag
	ws := s.DB.WriteState()
	storageState, writes := "ok", fiber.Map{"ready": ws.Writable, "freeBytes": ws.Free, "reserveBytes": ws.Reserve}
	if !ws.Writable {
		storageState = "read-only"
		writes["kind"], writes["reason"], writes["since"] = ws.Kind, ws.Reason, ws.Since.UTC().Format(time.RFC3339)
		if c.QueryBool("writes") {
			ready = false
		}
	}
	pipe := fiber.Map{"running": false}
	if s.Deps.Pipeline != nil {
		running, queued, oldest := s.Deps.Pipeline.Status()
		pipe = fiber.Map{"running": running, "queued": queued, "oldestDueSeconds": oldest.Seconds()}
		// In a cluster the pipeline runs on the leader only: a follower's
		// is stopped and that is its normal state.
		ready = ready && (running || !s.bg.leader.Load())
	}
	clusterOK, clusterState := api.ClusterReady(s.Deps.Cluster)
	ready = ready && clusterOK
	status := http.StatusOK
	if !ready {
		status = http.StatusServiceUnavailable
	}
	body := fiber.Map{
		"ready":    ready,
		"storage":  storageState,
		"writes":   writes,
		"index":    fiber.Map{"queued": s.Deps.Indexer.Queued(), "lagSeconds": lag.Seconds()},
		"pipeline": pipe,
	}
	if clusterState != nil {
		body["cluster"] = clusterState
	}
	return c.Status(status).JSON(body)
}

// versionComponents are the FormKiQ component releases Quire's API
// follows (SERVICE-SPEC.md §9), by the module name GET /version gives
// them.
var versionComponents = []struct{ module, release string }{
	{"core", "1.19.1"},
	{"platform", "1.10.1"},
	{"fulltext", "1.10.1"},
	{"antivirus", "1.7.1"},
	{"documentGeneration", "1.2.2"},
	{"esignature", "1.2.1"},
	{"ocr", "1.7.1"},
	{"watermark", "3.0.3"}, // API.md "Watermarks"
}

// handleGetVersion serves GET /version: Quire's own version, the
// modules it ships and (Quire) each module's FormKiQ component release.
func (s *Server) handleGetVersion(r *api.Request) error {
	modules := make([]string, 0, len(versionComponents))
	components := make(map[string]string, len(versionComponents))
	for _, c := range versionComponents {
		modules = append(modules, c.module)
		components[c.module] = c.release
	}
	return r.JSON(fiber.Map{
		"version":        s.Deps.Version,
		"type":           "core",
		"appEnvironment": "quire",
		"modules":        modules,
		"components":     components,
	})
}
