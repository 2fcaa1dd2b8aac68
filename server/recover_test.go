package server_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/gofiber/fiber/v2"

	"quire/guard"
	"quire/quiretest"
	"quire/server"
	"quire/server/internal/servertest"
)

// TestRecover_HandlerPanic: a handler that panics gets a 500 in FormKiQ's
// shape, the server keeps serving, the panic is counted in /metrics and
// logged with its stack and the request id, and the access log still has
// the request.
func TestRecover_HandlerPanic(t *testing.T) {
	server.SetTestRoutes(func(r fiber.Router) {
		r.Get("/test/panic", func(*fiber.Ctx) error { panicForTest(); return nil })
	})
	t.Cleanup(func() { server.SetTestRoutes(nil) })
	var mu sync.Mutex
	var buf bytes.Buffer
	s := quiretest.NewServer(t, func(c *quiretest.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&lockedWriter{mu: &mu, w: &buf}, nil))
	})
	before := guard.Count(guard.HTTP)
	const id = "panic-test-0001"
	for i := range 3 { // more than once: the server is still there
		r := s.DoHeaders(http.MethodGet, "/test/panic", nil, s.Admin(), map[string]string{"X-Request-Id": id})
		servertest.MustStatus(t, r, http.StatusInternalServerError)
		servertest.MustBody(t, r, `{"message":"Internal Server Error"}`)
		if got := guard.Count(guard.HTTP); got != before+float64(i+1) {
			t.Fatalf("quire_panics_total{where=http} = %v after %d panics, want %v", got, i+1, before+float64(i+1))
		}
	}
	servertest.MustStatus(t, s.Do(http.MethodGet, "/healthz", nil, ""), http.StatusOK)
	if m := string(s.Do(http.MethodGet, "/metrics", nil, "").Body); !strings.Contains(m, `quire_panics_total{where="http"}`) {
		t.Fatalf("/metrics has no quire_panics_total{where=\"http\"}")
	}
	mu.Lock()
	logs := buf.String()
	mu.Unlock()
	var sawPanic, sawAccess bool
	for _, l := range strings.Split(logs, "\n") {
		var e map[string]any
		if json.Unmarshal([]byte(l), &e) != nil || e["requestId"] != id {
			continue
		}
		switch e["msg"] {
		case "panic recovered":
			stack, _ := e["stack"].(string)
			sawPanic = e["where"] == "http" && e["panic"] == "boom for test" && strings.Contains(stack, "panicForTest")
		case "request":
			sawAccess = e["status"] == float64(500) && e["route"] == "/test/panic"
		}
	}
	if !sawPanic || !sawAccess {
		t.Fatalf("panic line with stack %v, access line with 500 %v in:\n%s", sawPanic, sawAccess, logs)
	}
}

func panicForTest() { panic("boom for test") }
