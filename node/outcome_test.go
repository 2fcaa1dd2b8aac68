package node_test

import (
	"bytes"
	"net/http"
	"strings"
	"sync"
	"testing"

	"quire/node"
	"quire/storage"
)

// A plain write (no Idempotency-Key) whose forward broke after the leader
// applied it is resolved, not guessed (issue 44: 137 of 256 plain creates
// answered 504 had been applied): the member sends the command again
// with its id, the leader answers the first result, and the client gets
// the 201 it would have got, with one document on every member. Before,
// the answer was 504 Quire-Write-Outcome: unknown.
func TestCluster_PlainWriteWhoseForwardBrokeIsResolvedByTheLeader(t *testing.T) {
	var mu sync.Mutex
	dropped := 0
	defer node.SetTestDropForwardAnswer(func(c *storage.Command) bool {
		if c.Op != storage.OpAddDocuments || !strings.Contains(string(c.Data), "broken/") {
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		dropped++
		return dropped == 1 // the first answer only
	})()
	leader, fs := startCluster(t)
	f := fs[0]
	r := f.Do(http.MethodPost, "/documents", map[string]any{"path": "broken/one.txt", "content": "x"}, f.Admin())
	if r.Status != http.StatusCreated {
		t.Fatalf("a plain create whose forward broke after the leader applied it: %d %s (%s), want 201", r.Status, r.Body, r.Header.Get("Quire-Write-Outcome"))
	}
	mu.Lock()
	n := dropped
	mu.Unlock()
	if n < 2 || node.ForwardResends(f.Node) == 0 {
		t.Fatalf("the forward was not broken and sent again (%d forwards seen by the leader, %d resends)", n, node.ForwardResends(f.Node))
	}
	waitSameState(t, leader, append(fs, leader))
	for _, s := range append(fs, leader) {
		g := s.Do(http.MethodGet, "/documents?limit=100", nil, s.Admin())
		if c := bytes.Count(g.Body, []byte(`broken/one.txt`)); c != 1 {
			t.Fatalf("%s holds %d documents of the write, want 1: %s", s.Node.Cluster.ID(), c, g.Body)
		}
	}
}
