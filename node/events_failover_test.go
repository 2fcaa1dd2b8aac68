package node_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"quire/quiretest"
)

// TestLeader_EventsOutliveTheLeader: a document event its subscriber
// refused while the leader ran is in every member's outbox (it came from
// the log); the leader is stopped abruptly, and the new leader delivers
// it, with the same id.
func TestLeader_EventsOutliveTheLeader(t *testing.T) {
	t.Parallel() // in-process cluster of its own: see TestMain
	var down atomic.Bool
	down.Store(true)
	var mu sync.Mutex
	var got []map[string]any
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var ev map[string]any
		json.Unmarshal(b, &ev)
		mu.Lock()
		got = append(got, ev)
		mu.Unlock()
		if down.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(rc.Close)
	events := func() []map[string]any { mu.Lock(); defer mu.Unlock(); return append([]map[string]any(nil), got...) }

	leader, fs := startLoopbackCluster(t)
	tok := leader.Admin()
	if r := leader.Do(http.MethodPost, "/sites/default/eventSubscriptions", map[string]any{"url": rc.URL, "eventTypes": []string{"quire.document.created"}}, tok); r.Status != http.StatusCreated {
		t.Fatalf("subscribe: %d %s", r.Status, r.Body)
	}
	r := leader.Do(http.MethodPost, "/documents", map[string]any{"path": "failover.txt", "content": "x"}, tok)
	if r.Status != http.StatusCreated {
		t.Fatalf("add document: %d %s", r.Status, r.Body)
	}
	id, _ := r.JSON(t)["documentId"].(string)
	waitFor(t, "a refused post", 20*time.Second, func() bool { return len(events()) >= 1 })
	if err := leader.Node.Cluster.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the old leader to stop its pipeline", 10*time.Second, func() bool {
		running, _, _ := leader.Node.Pipeline.Status()
		return !leader.Node.Leading() && !running
	})
	leader.Close()
	refused := events()
	down.Store(false)
	var next *quiretest.Server
	waitFor(t, "a new leader", 30*time.Second, func() bool {
		for _, f := range fs {
			if f.Node.Leading() {
				next = f
				return true
			}
		}
		return false
	})
	waitFor(t, "the event from the new leader", 30*time.Second, func() bool { return len(events()) > len(refused) })
	all := events()
	last := all[len(all)-1]
	if last["subject"] != id || last["type"] != "quire.document.created" || last["id"] != refused[0]["id"] || last["id"] == nil {
		t.Fatalf("delivered after the failover %v, refused before %v", last, refused[0])
	}
	// Recorded as delivered on the survivors: nothing more arrives.
	waitFor(t, "the outbox to drain", 20*time.Second, func() bool { return next.Node.Pipeline.EventStats().Pending == 0 })
}
