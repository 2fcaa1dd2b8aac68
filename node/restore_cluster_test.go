package node_test

import (
	"bytes"
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"quire/backup"
	"quire/quiretest"
)

// TestCluster_BackupRestoresToANewSingleNodeCluster: an online backup
// taken from a follower restores into a new data dir, which bootstraps a
// new one-node cluster (its own CA; the old members are not in it) holding
// every document, and takes writes.
func TestCluster_BackupRestoresToANewSingleNodeCluster(t *testing.T) {
	t.Parallel() // in-process cluster of its own: see TestMain
	leader, fs := startCluster(t)
	f := fs[0]
	tok := f.Admin()
	var ids []string
	for range 3 {
		r := f.Do(http.MethodPost, "/documents", map[string]any{"path": "b/doc.txt", "content": "kept", "contentType": "text/plain"}, tok)
		if r.Status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		ids = append(ids, quiretest.Str(t, r.JSON(t), "documentId"))
	}
	req, err := http.NewRequest(http.MethodGet, f.URL+"/system/backup", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", tok)
	resp, err := f.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	archive, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("backup from a follower: %d %v", resp.StatusCode, err)
	}
	dir := filepath.Join(t.TempDir(), "restored")
	if _, err := backup.Restore(bytes.NewReader(archive), dir, nil); err != nil {
		t.Fatalf("restore: %v", err)
	}
	r := quiretest.StartServer(t, dir, clusterOpt("r1", true))
	waitFor(t, "the restored node to lead", 20*time.Second, func() bool { return r.Node.Cluster.IsLeader() })
	if n := len(r.Node.Cluster.Status().Servers); n != 1 {
		t.Fatalf("the restored cluster has %d members, want 1", n)
	}
	if r.Node.Cluster.Status().Servers[0].ID == leader.Node.Cluster.ID() {
		t.Fatal("the restored node took an old member's id")
	}
	rtok := r.Admin()
	for _, id := range ids {
		g := r.Do(http.MethodGet, "/documents/"+id+"/content", nil, rtok)
		if g.Status != http.StatusOK || quiretest.Str(t, g.JSON(t), "content") != "kept" {
			t.Fatalf("restored %s: %d %s", id, g.Status, g.Body)
		}
	}
	if w := r.Do(http.MethodPost, "/documents", map[string]any{"path": "b/new.txt", "content": "new"}, rtok); w.Status != http.StatusCreated {
		t.Fatalf("write to the restored cluster: %d %s", w.Status, w.Body)
	}
}
