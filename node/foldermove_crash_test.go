package node_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"quire/auth"
	"quire/quiretest"
	"quire/storage"
)

// TestCrash_SyncFolderMoveResumesAfterSIGKILL kills a serving process while
// a synchronous folder move (POST /indices/folder/move, several steps) is
// half-way, and expects the restarted server to finish it: every document
// ends up in the target, none stays behind.
func TestCrash_SyncFolderMoveResumesAfterSIGKILL(t *testing.T) {
	t.Parallel() // quire serve children: see TestMain

	const n = 1200 // six steps of a move
	dir := t.TempDir()
	cmd, addr := startCrashChild(t, dir)
	base := "http://" + addr
	tok, err := auth.SignToken(dir, "", "crash", []string{"Admins"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	ids := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				body, _ := json.Marshal(map[string]any{"path": fmt.Sprintf("src/f%04d.txt", i), "content": "x"})
				var r struct{ DocumentID string }
				if err := call(client, http.MethodPost, base+"/documents", tok, body, &r, http.StatusCreated); err != nil {
					errs <- err
					return
				}
				ids[i] = r.DocumentID
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

	moved := make(chan error, 1)
	go func() {
		body, _ := json.Marshal(map[string]any{"source": "src", "target": "dst"})
		moved <- call(client, http.MethodPost, base+"/indices/folder/move", tok, body, nil, http.StatusOK)
	}()
	// Kill as soon as the first step shows in the target.
	list, _ := json.Marshal(map[string]any{"query": map[string]any{"meta": map[string]any{"folder": "dst/src"}}})
	for i := 0; ; i++ {
		var r struct{ Documents []any }
		if err := call(client, http.MethodPost, base+"/search?limit=1", tok, list, &r, http.StatusOK); err == nil && len(r.Documents) > 0 {
			break
		}
		if i == 5000 {
			t.Fatal("the move never started")
		}
		time.Sleep(time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if err := <-moved; err == nil {
		t.Fatal("the move finished before the kill; it must land half-way")
	}

	// The kill left documents on both sides.
	db, err := storage.Open(storage.Config{Dir: filepath.Join(dir, "db")})
	if err != nil {
		t.Fatal(err)
	}
	docs, err := db.GetDocuments("default", ids)
	if err != nil {
		t.Fatal(err)
	}
	left := 0
	for _, d := range docs {
		if strings.HasPrefix(d.Path, "src/") {
			left++
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if left == 0 || left == n {
		t.Fatalf("%d of %d documents left in src at the kill; the kill must land half-way", left, n)
	}

	s := quiretest.StartServer(t, dir)
	admin := s.Admin()
	deadline := time.Now().Add(60 * time.Second)
	for i, id := range ids {
		want := fmt.Sprintf("dst/src/f%04d.txt", i)
		for {
			r := s.Do(http.MethodGet, "/documents/"+id, nil, admin)
			if r.Status == http.StatusOK && r.JSON(t)["path"] == want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("document %s after restart: %d %s, want path %s (%d were left in src at the kill)", id, r.Status, r.Body, want, left)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	r := s.Do(http.MethodGet, "/folders?path=src", nil, admin)
	if r.Status == http.StatusOK && strings.Contains(string(r.Body), "f0") {
		t.Fatalf("src still lists documents: %s", r.Body)
	}
	t.Logf("%d of %d documents were left in src at the kill; all moved after restart", left, n)
}
