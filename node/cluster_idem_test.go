package node_test

import (
	"bytes"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"quire/quiretest"
)

// A keyed write through one node, sent again with its Idempotency-Key to
// every node, answers the first answer byte for byte and writes once:
// a create that picks its id, a hard delete (whose handler would now
// find nothing), an upload URL request; another request under the key
// is a 409 on every node.
func TestCluster_IdempotencyKeyAnswersOnEveryNode(t *testing.T) {
	t.Parallel() // in-process cluster of its own: see TestMain
	leader, fs := startCluster(t)
	all := []*quiretest.Server{fs[0], fs[1], leader}
	doc := leader.Do(http.MethodPost, "/documents", map[string]any{"path": "idem/hard.txt", "content": "x"}, leader.Admin())
	if doc.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", doc.Status, doc.Body)
	}
	id := quiretest.Str(t, doc.JSON(t), "documentId")
	for _, tt := range []struct {
		name, method, path string
		body, other        any
		status             int
	}{
		{"create, server-picked id", http.MethodPost, "/webhooks", map[string]any{"name": "w"}, map[string]any{"name": "w2"}, http.StatusCreated},
		{"hard delete", http.MethodDelete, "/documents/" + id, nil, map[string]any{"x": 1}, http.StatusOK},
		{"upload URL request", http.MethodPost, "/documents/upload", map[string]any{"path": "idem/up.bin"}, map[string]any{"path": "idem/up2.bin"}, http.StatusCreated},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := map[string]string{"Idempotency-Key": "cluster " + tt.name}
			first := fs[0].DoHeaders(tt.method, tt.path, tt.body, fs[0].Admin(), h)
			if first.Status != tt.status {
				t.Fatalf("through a follower: %d %s, want %d", first.Status, first.Body, tt.status)
			}
			for _, s := range all {
				again := s.DoHeaders(tt.method, tt.path, tt.body, s.Admin(), h)
				if again.Status != first.Status || !bytes.Equal(again.Body, first.Body) {
					t.Fatalf("retry on %s: %d %s, want the first answer %d %s", s.Node.Cluster.ID(), again.Status, again.Body, first.Status, first.Body)
				}
			}
			for _, s := range all {
				if r := s.DoHeaders(tt.method, tt.path, tt.other, s.Admin(), h); r.Status != http.StatusConflict {
					t.Fatalf("another request under the key on %s: %d %s, want 409", s.Node.Cluster.ID(), r.Status, r.Body)
				}
			}
		})
	}
	waitSameState(t, leader, all)
	for _, s := range all {
		r := s.Do(http.MethodGet, "/webhooks", nil, s.Admin())
		if r.Status != http.StatusOK || bytes.Count(r.Body, []byte(`"webhookId"`)) != 1 {
			t.Fatalf("webhooks on %s: %d %s, want exactly one", s.Node.Cluster.ID(), r.Status, r.Body)
		}
		r = s.Do(http.MethodGet, "/documents?limit=100", nil, s.Admin())
		if n := bytes.Count(r.Body, []byte(`"documentId"`)); r.Status != http.StatusOK || n != 1 {
			t.Fatalf("documents on %s: %d, %d of them, want 1 (the upload's): %s", s.Node.Cluster.ID(), r.Status, n, r.Body)
		}
	}
}

// Resends of a keyed create race its first run on every node (issue 44:
// 3 of 1,097 resends answered without Idempotent-Replayed, as if the
// request ran again): each key is sent nine times, three to each node,
// 4 ms apart. Exactly one document is created per key, every answer is the
// same 201 and body, and every answer but the one of the run that
// created the document carries Idempotent-Replayed: true. A run that
// found the first run's commands applied and its answer not yet
// recorded used to run the handler again and answer without the header.
func TestCluster_KeyedResendsRacingTheFirstRunAreMarkedReplayed(t *testing.T) {
	t.Parallel() // in-process cluster of its own: see TestMain
	leader, fs := startCluster(t)
	all := []*quiretest.Server{leader, fs[0], fs[1]}
	const keys = 12
	type answer struct {
		node   string
		status int
		body   []byte
		replay string
	}
	for k := range keys {
		key := fmt.Sprintf("race-%d", k)
		body := map[string]any{"path": "race/" + key + ".txt", "content": key}
		answers := make([]answer, 9)
		var wg sync.WaitGroup
		for i := range answers {
			s := all[i%3]
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Spread over the first run's commit and the recording of
				// its answer (stimulus, not synchronisation).
				time.Sleep(time.Duration(i) * 4 * time.Millisecond)
				r := s.DoHeaders(http.MethodPost, "/documents", body, s.Admin(), map[string]string{"Idempotency-Key": key})
				a := answer{node: s.Node.Cluster.ID(), status: r.Status, body: r.Body}
				if r.Header != nil {
					a.replay = r.Header.Get("Idempotent-Replayed")
				}
				answers[i] = a
			}()
		}
		wg.Wait()
		fresh := 0
		for _, a := range answers {
			if a.status != http.StatusCreated || !bytes.Equal(a.body, answers[0].body) {
				t.Fatalf("key %s: answers differ: %+v", key, answers)
			}
			if a.replay != "true" {
				fresh++
			}
		}
		if fresh != 1 {
			for _, a := range answers {
				t.Logf("key %s on %s: %d replayed=%q %s", key, a.node, a.status, a.replay, a.body)
			}
			t.Fatalf("key %s: %d answers without Idempotent-Replayed: true, want exactly the first run's", key, fresh)
		}
	}
	waitSameState(t, leader, all)
	for _, s := range all {
		r := s.Do(http.MethodGet, "/documents?limit=100", nil, s.Admin())
		if n := bytes.Count(r.Body, []byte(`"documentId"`)); r.Status != http.StatusOK || n != keys {
			t.Fatalf("documents on %s: %d, %d of them, want %d", s.Node.Cluster.ID(), r.Status, n, keys)
		}
	}
}
