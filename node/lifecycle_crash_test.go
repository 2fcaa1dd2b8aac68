package node_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"quire/auth"
	"quire/quiretest"
	"quire/storage"
)

// TestCrash_PromoteAndVersionRestoreAreAllOrNothing kills a serving
// process with SIGKILL while clients promote artifacts and set documents
// back to their first version, and checks every document after a
// restart: it is either before or after each change, never between. Its
// promoted artifact is none or the one asked for (the one asked for when
// the request was answered 2xx); its content is the first or the second
// (the first when the restore was answered); and its content with its
// versions are exactly the two contents it ever had, each readable.
func TestCrash_PromoteAndVersionRestoreAreAllOrNothing(t *testing.T) {
	t.Parallel() // quire serve children: see TestMain
	const n = 300
	dir := t.TempDir()
	cmd, addr := startCrashChild(t, dir)
	base := "http://" + addr
	tok, err := auth.SignToken(dir, "", "crash", []string{"Admins"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	type doc struct{ id, art, first string }
	docs := make([]doc, n)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				d, err := setupLifecycleDoc(client, base, tok, i)
				if err != nil {
					errs <- err
					return
				}
				docs[i] = d
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal(err)
	}

	// Each document gets a promote and a restore, from 16 clients; the
	// process dies once a third of them were answered.
	var answered atomic.Int64
	promoted := make([]atomic.Bool, n)
	restored := make([]atomic.Bool, n)
	var work sync.WaitGroup
	next := make(chan int)
	for range 16 {
		work.Add(1)
		go func() {
			defer work.Done()
			for k := range next {
				i, restore := k/2, k%2 == 1
				var err error
				if restore {
					body, _ := json.Marshal(map[string]any{"versionKey": docs[i].first})
					err = call(client, http.MethodPut, base+"/documents/"+docs[i].id+"/versions", tok, body, nil, http.StatusOK)
					if err == nil {
						restored[i].Store(true)
					}
				} else {
					body, _ := json.Marshal(map[string]any{"artifactId": docs[i].art})
					err = call(client, http.MethodPut, base+"/documents/"+docs[i].id+"/artifacts/promoteArtifact", tok, body, nil, http.StatusOK)
					if err == nil {
						promoted[i].Store(true)
					}
				}
				if err == nil {
					answered.Add(1)
				}
			}
		}()
	}
	killed := make(chan struct{})
	go func() {
		for i := 0; answered.Load() < 2*n/3 && i < 30000; i++ {
			time.Sleep(time.Millisecond)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		close(killed)
	}()
feed:
	for k := range 2 * n {
		select {
		case next <- k:
		case <-killed:
			break feed
		}
	}
	close(next)
	work.Wait()
	<-killed
	cmd.Wait()
	got := answered.Load()
	if got == 0 || got == 2*n {
		t.Fatalf("%d of %d changes answered at the kill; it must land half-way", got, 2*n)
	}

	// The store as the kill left it, read directly.
	db, err := storage.Open(storage.Config{Dir: filepath.Join(dir, "db")})
	if err != nil {
		t.Fatal(err)
	}
	read := func(sha string) string {
		t.Helper()
		cr, err := db.OpenManifest(sha)
		if err != nil {
			t.Fatalf("content %s: %v", sha, err)
		}
		defer cr.Close()
		b, err := io.ReadAll(cr)
		if err != nil {
			t.Fatalf("content %s: %v", sha, err)
		}
		return string(b)
	}
	for i, d := range docs {
		doc, err := db.GetDocument("default", d.id)
		if err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		if p := doc.PromotedArtifactID; p != "" && p != d.art {
			t.Errorf("document %d promotes %q, want none or %s", i, p, d.art)
		}
		if promoted[i].Load() && doc.PromotedArtifactID != d.art {
			t.Errorf("document %d: the promote was answered 200 but is lost", i)
		}
		cur := read(doc.ContentSHA256)
		if cur != contentV(i, 1) && cur != contentV(i, 2) {
			t.Errorf("document %d content %q is neither version", i, cur)
		}
		if restored[i].Load() && cur != contentV(i, 1) {
			t.Errorf("document %d: the restore was answered 200 but its content is %q", i, cur)
		}
		page, err := db.ListVersions("default", d.id, "", 100)
		if err != nil {
			t.Fatalf("versions of %d: %v", i, err)
		}
		seen := map[string]int{cur: 1}
		for _, v := range page.Versions {
			if v.HasContent {
				seen[read(v.ContentSHA256)]++
			}
		}
		if seen[contentV(i, 1)] == 0 || seen[contentV(i, 2)] == 0 || len(seen) != 2 {
			t.Errorf("document %d: current %q, with its versions %v; want exactly both contents", i, cur, seen)
		}
		if int(doc.VersionCount)+1 != len(page.Versions) { // the listing starts with the current state
			t.Errorf("document %d counts %d earlier versions, lists %d states", i, doc.VersionCount, len(page.Versions))
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// And the server starts on it.
	s := quiretest.StartServer(t, dir)
	if r := s.Do(http.MethodGet, "/documents/"+docs[0].id, nil, s.Admin()); r.Status != http.StatusOK {
		t.Fatalf("after restart: %d %s", r.Status, r.Body)
	}
	t.Logf("%d of %d changes were answered before the kill", got, 2*n)
}

func contentV(i, v int) string { return fmt.Sprintf("document %d, version %d", i, v) }

// setupLifecycleDoc makes document i with two contents (so the first is a
// version) and one artifact.
func setupLifecycleDoc(c *http.Client, base, tok string, i int) (d struct{ id, art, first string }, err error) {
	body, _ := json.Marshal(map[string]any{"path": fmt.Sprintf("life/d%04d.txt", i), "content": contentV(i, 1), "contentType": "text/plain"})
	var r struct{ DocumentID, ArtifactID string }
	if err := call(c, http.MethodPost, base+"/documents", tok, body, &r, http.StatusCreated); err != nil {
		return d, err
	}
	d.id = r.DocumentID
	body, _ = json.Marshal(map[string]any{"content": contentV(i, 2), "contentType": "text/plain"})
	if err := call(c, http.MethodPatch, base+"/documents/"+d.id, tok, body, nil, http.StatusOK); err != nil {
		return d, err
	}
	var vl struct {
		Documents []struct{ VersionKey string }
	}
	if err := call(c, http.MethodGet, base+"/documents/"+d.id+"/versions", tok, nil, &vl, http.StatusOK); err != nil {
		return d, err
	}
	if len(vl.Documents) != 2 {
		return d, fmt.Errorf("document %d has %d versions, want 2", i, len(vl.Documents))
	}
	d.first = vl.Documents[1].VersionKey // newest first
	body, _ = json.Marshal(map[string]any{"documentId": d.id, "artifacts": true, "content": "artifact", "contentType": "text/plain"})
	if err := call(c, http.MethodPost, base+"/documents", tok, body, &r, http.StatusCreated); err != nil {
		return d, err
	}
	d.art = r.ArtifactID
	return d, nil
}
