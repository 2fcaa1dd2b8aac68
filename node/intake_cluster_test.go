package node_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quire/node"
	"quire/quiretest"
)

// TestCluster_IntakeLeaderOnly: three members share one watched-folder
// root (a network share). Only the leader polls it: each file is one
// document and only the leader counts it; a profile made and a form
// posted through a follower go through the leader's log; after the
// leader stops, the next one takes the folder over.
func TestCluster_IntakeLeaderOnly(t *testing.T) {
	t.Parallel() // in-process cluster of its own: see TestMain
	root := t.TempDir()
	intake := func(c *quiretest.Config) {
		c.Intake = node.IntakeConfig{FolderRoot: root, Poll: 100 * time.Millisecond}
	}
	leader, fs := leaderAndFollowers(t, formCluster(t, []string{"n1", "n2", "n3"}, func(id string, bootstrap bool) []quiretest.Option {
		return []quiretest.Option{clusterOpt(id, bootstrap), intake}
	}, nil))
	f := fs[0]
	tok := f.Admin()
	r := f.Do(http.MethodPost, "/sites/default/intakeProfiles", map[string]any{"intakeProfile": map[string]any{
		"name": "scan", "pathTemplate": "Scans/{filename}", "actions": []any{}, "duplicates": "KEEP_BOTH",
		"watchFolder": map[string]any{"stableSeconds": 1}}}, tok)
	if r.Status != http.StatusCreated {
		t.Fatalf("profile through a follower: %d %s", r.Status, r.Body)
	}
	dir := filepath.Join(root, "default", "scan")
	waitFor(t, "the watched folder", 20*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(dir, "done"))
		return err == nil
	})
	paths := func(s *quiretest.Server) map[string]int {
		r := s.Do(http.MethodGet, "/documents?limit=100", nil, s.Admin())
		out := map[string]int{}
		if r.Status != http.StatusOK {
			return out
		}
		for _, d := range quiretest.List(t, r.JSON(t), "documents") {
			out[quiretest.Str(t, quiretest.Obj(t, d), "path")]++
		}
		return out
	}
	for _, n := range []string{"a.pdf", "b.pdf", "c.pdf"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("%PDF-1.4 "+n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "three files taken", 30*time.Second, func() bool {
		p := paths(f)
		return p["Scans/a.pdf"] == 1 && p["Scans/b.pdf"] == 1 && p["Scans/c.pdf"] == 1
	})
	counted := func(s *quiretest.Server, outcome string) bool {
		m := s.Do(http.MethodGet, "/metrics", nil, "")
		return strings.Contains(string(m.Body), `quire_intake_files_total{outcome="`+outcome+`",profile="scan",source="FOLDER"}`)
	}
	if !counted(leader, "created") {
		t.Errorf("the leader did not take the files")
	}
	for i, s := range fs {
		if counted(s, "created") || counted(s, "repeated") {
			t.Errorf("follower n%d polled the folder", i+2)
		}
	}

	// A form posted to a follower: its intake command goes through the
	// leader's log and the follower answers the result.
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	w, _ := mw.CreateFormFile("file", "posted.pdf")
	w.Write([]byte("%PDF-1.4 posted through n2"))
	mw.Close()
	pr := f.DoHeaders(http.MethodPost, "/sites/default/intake/scan", body.Bytes(), tok, map[string]string{"Content-Type": mw.FormDataContentType()})
	if pr.Status != http.StatusCreated || !strings.Contains(string(pr.Body), `"path":"Scans/posted.pdf"`) {
		t.Fatalf("post through a follower: %d %s", pr.Status, pr.Body)
	}

	// The leader stops: another member leads and polls.
	leader.Close()
	var next *quiretest.Server
	waitFor(t, "a new leader", 30*time.Second, func() bool {
		for _, s := range fs {
			if s.Node.Cluster.IsLeader() {
				next = s
				return true
			}
		}
		return false
	})
	if err := os.WriteFile(filepath.Join(dir, "after.pdf"), []byte("%PDF-1.4 after the failover"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "after.pdf taken by the new leader", 30*time.Second, func() bool { return paths(next)["Scans/after.pdf"] == 1 })
	// Counted where it was taken: the member that leads now, or, when the
	// lead moved again under load after next was seen leading, the other.
	// The count follows the document's commit, which a read can see
	// first (a loaded machine failed a single look).
	waitFor(t, "a member that led after the failover counting the file it took", 10*time.Second, func() bool {
		return counted(fs[0], "created") || counted(fs[1], "created")
	})
	p := paths(next)
	if len(p) != 5 {
		t.Errorf("documents %v, want five, one per file", p)
	}
}
