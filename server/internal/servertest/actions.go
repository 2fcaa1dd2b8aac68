package servertest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"quire/quiretest"
)

// PipelineServer starts a server whose pipeline retries quickly and signs
// webhooks with a known secret; its receivers run on loopback, which the
// outbound policy must allow.
func PipelineServer(t *testing.T, opts ...quiretest.Option) *quiretest.Server {
	t.Helper()
	base := func(c *quiretest.Config) {
		c.Pipeline.RetryBase = 50 * time.Millisecond
		c.Pipeline.Engines.WebhookSecret = "test-secret"
	}
	return quiretest.NewServer(t, append([]quiretest.Option{base, quiretest.AllowLoopbackOutbound}, opts...)...)
}

// Actions returns a document's actions.
func Actions(t *testing.T, s *quiretest.Server, tok, site, id string) []map[string]any {
	t.Helper()
	r := s.Do(http.MethodGet, "/documents/"+id+"/actions"+Query(site, "limit=100"), nil, tok)
	MustStatus(t, r, http.StatusOK)
	var out []map[string]any
	for _, a := range quiretest.List(t, r.JSON(t), "actions") {
		out = append(out, quiretest.Obj(t, a))
	}
	return out
}

// NthAction returns the i-th action of a document, failing t (not the
// package, as indexing past the end would) when it has fewer.
func NthAction(t *testing.T, s *quiretest.Server, tok, site, id string, i int) map[string]any {
	t.Helper()
	a := Actions(t, s, tok, site, id)
	if i >= len(a) {
		t.Fatalf("document %s has %d actions, want one at index %d: %v", id, len(a), i, a)
	}
	return a[i]
}

// WaitActions polls until no action of the document is PENDING, RUNNING or
// WAITING_FOR_RETRY, and returns the statuses in order (bounded: 60 s).
func WaitActions(t *testing.T, s *quiretest.Server, tok, site, id string) []string {
	t.Helper()
	var st []string
	for range 1200 {
		st = st[:0]
		busy := false
		for _, a := range Actions(t, s, tok, site, id) {
			st = append(st, quiretest.Str(t, a, "status"))
			switch a["status"] {
			case "PENDING", "RUNNING", "WAITING_FOR_RETRY":
				busy = true
			}
		}
		if !busy {
			return st
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("actions of %s still busy after 60s: %v", id, st)
	return nil
}

func EqualStrings(a, b []string) bool {
	return strings.Join(a, ",") == strings.Join(b, ",")
}

// Receiver is a real HTTP server recording the requests it gets and
// answering with the statuses given, then 200.
type Receiver struct {
	*httptest.Server
	mu       sync.Mutex
	bodies   [][]byte
	headers  []http.Header
	statuses []int
	Calls    atomic.Int32
}

func NewReceiver(t *testing.T, statuses ...int) *Receiver {
	rc := &Receiver{statuses: statuses}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		n := len(rc.bodies)
		rc.bodies = append(rc.bodies, b)
		rc.headers = append(rc.headers, r.Header.Clone())
		code := http.StatusOK
		if n < len(rc.statuses) {
			code = rc.statuses[n]
		}
		rc.mu.Unlock()
		rc.Calls.Add(1)
		w.WriteHeader(code)
	}))
	t.Cleanup(rc.Close)
	return rc
}

// Count is how many requests the receiver has recorded.
func (rc *Receiver) Count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.bodies)
}

// BodiesFrom returns the bodies of the requests after the first n.
func (rc *Receiver) BodiesFrom(n int) [][]byte {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([][]byte(nil), rc.bodies[min(n, len(rc.bodies)):]...)
}

func (rc *Receiver) Last() ([]byte, http.Header) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.bodies) == 0 {
		return nil, nil
	}
	return rc.bodies[len(rc.bodies)-1], rc.headers[len(rc.headers)-1]
}

// WaitActionsOnce returns the current statuses without waiting.
func WaitActionsOnce(t *testing.T, s *quiretest.Server, tok, site, id string) []string {
	var st []string
	for _, a := range Actions(t, s, tok, site, id) {
		st = append(st, quiretest.Str(t, a, "status"))
	}
	return st
}

func (rc *Receiver) HeadersAt(i int) http.Header {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if i >= len(rc.headers) {
		return http.Header{}
	}
	return rc.headers[i]
}
