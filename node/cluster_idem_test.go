package node_test

import (
	"bytes"
	"net/http"
	"testing"

	"quire/quiretest"
)

// A keyed write through one node, sent again with its Idempotency-Key to
// every node, answers the first answer byte for byte and writes once:
// a create that picks its id, a hard delete (whose handler would now
// find nothing), an upload URL request; another request under the key
// is a 409 on every node.
func TestCluster_IdempotencyKeyAnswersOnEveryNode(t *testing.T) {
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
