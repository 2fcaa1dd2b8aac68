//go:build linux

package node_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"quire/auth"
	"quire/storage"
)

// fillUp grows the file at path until the file system holding it has no
// free block left.
func fillUp(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Space freed while filling (a stopped server's files, which the
	// kernel releases as their last mapping goes) is taken by the next
	// round; a few rounds at most.
	for round := 0; round < 4; round++ {
		free, _, err := storage.DiskFree(filepath.Dir(path))
		if err != nil || free <= 64<<10 {
			break
		}
		fi, _ := f.Stat()
		unix.Fallocate(int(f.Fd()), 0, fi.Size(), int64(free))
		page := make([]byte, 4096)
		for i := 0; i < 1<<16; i++ {
			if _, err := f.Write(page); err != nil {
				break
			}
		}
	}
	if free, _, _ := storage.DiskFree(filepath.Dir(path)); free > 64<<10 {
		t.Fatalf("file system still has %d bytes free", free)
	}
}

// startFullDiskChild serves dir with the full-disk tests' reserve
// (fullDiskConfig's) in a child process: `quire serve`, the shipped
// binary (quiretest.QuireBinary), so that a SIGBUS (what a full disk
// used to cause) shows as a dead child instead of taking the test binary
// down. It was this test binary run again, race-built: the child serves
// every write of the fill, and the race detector's CPU was most of the
// full-disk tests' (issue 45). It looks at free space every second, as a
// server does (fullDiskConfig's in-process node: every 50 ms).
func startFullDiskChild(t *testing.T, dir string) (*exec.Cmd, string) {
	t.Helper()
	return startCrashChild(t, dir, "--min-free-bytes", strconv.FormatUint(storage.MinReserve(), 10), "--min-free-percent", "0")
}

// stopChild stops a node started by startFullDiskChild with SIGTERM and
// fails the test if the process died of a signal (SIGBUS on a full disk).
func stopChild(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		// A fault in Badger's mapped writes (SIGBUS) ends a Go program
		// with status 2.
		t.Fatalf("node did not stop cleanly: %v", ee)
	}
}

// TestFullDisk_RestartWhileFull starts a node on a small file system,
// writes documents, fills the file system to the last block and stops the
// node (cleanly, or with SIGKILL, which leaves write-ahead logs to replay)
// and starts it again: it must start (in a child process, so a SIGBUS
// shows as a crash), serve documents, content and search, refuse writes
// and say so in /readyz; once space is freed it takes writes again without
// a restart, and every document is intact.
func TestFullDisk_RestartWhileFull(t *testing.T) {
	t.Parallel() // quire serve children: see TestMain
	for _, tc := range []struct {
		name string
		kill bool
	}{
		{"clean stop", false},
		{"SIGKILL", true},
	} {
		t.Run(tc.name, func(t *testing.T) { restartWhileFull(t, tc.kill) })
	}
}

func restartWhileFull(t *testing.T, kill bool) {
	fs := t.TempDir()
	mountTmpfsAt(t, fs, 400<<20)
	dir := filepath.Join(fs, "data")
	filler := filepath.Join(fs, "filler")
	client := &http.Client{Timeout: 10 * time.Second}

	cmd, addr := startFullDiskChild(t, dir)
	t.Cleanup(func() { cmd.Process.Kill() })
	base := "http://" + addr
	tok, err := auth.SignToken(dir, "", "full", []string{"Admins"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var docs []acked
	for i := 0; i < 6; i++ {
		data := bytes.Repeat([]byte{byte('a' + i)}, 3000+i)
		if i%3 == 2 {
			data = bytes.Repeat([]byte{byte(i)}, 1<<20+777) // chunked, through an upload URL
		}
		id, err := create(client, base, tok, data, i%3 == 2)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, acked{id: id, sum: sha256.Sum256(data)})
	}
	waitReady(t, client, base, func(r readyz) bool { return r.Index.Queued == 0 })

	fillUp(t, filler)
	if kill {
		cmd.Process.Kill()
		cmd.Wait()
	} else {
		stopChild(t, cmd)
	}
	fillUp(t, filler) // the close may have freed some room (Badger's ballast)

	cmd, addr = startFullDiskChild(t, dir)
	t.Cleanup(func() { cmd.Process.Kill() })
	base = "http://" + addr
	checkDocs(t, client, base, tok, docs)
	if st := postDocument(t, client, base, tok); st != http.StatusInsufficientStorage {
		t.Fatalf("write on a full disk: status %d, want 507", st)
	}
	r := waitReady(t, client, base, func(readyz) bool { return true })
	if r.Writes.Ready || r.Writes.Kind != "read-only-open" || r.Writes.Reason == "" {
		t.Fatalf("/readyz on a full disk: writes %+v, want not ready, read-only-open with a reason", r.Writes)
	}
	checkDocs(t, client, base, tok, docs) // the refused write changed nothing

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for postDocument(t, client, base, tok) != http.StatusCreated {
		if time.Now().After(deadline) {
			t.Fatal("writes still refused 15 s after space was freed")
		}
		time.Sleep(50 * time.Millisecond)
	}
	r = waitReady(t, client, base, func(readyz) bool { return true })
	if !r.Writes.Ready {
		t.Fatalf("/readyz after space returned: writes %+v", r.Writes)
	}
	checkDocs(t, client, base, tok, docs)
	stopChild(t, cmd)
}

type readyz struct {
	Index  struct{ Queued int }
	Writes struct {
		Ready        bool
		Kind, Reason string
	}
}

// waitReady polls /readyz until it answers 200 and ok accepts it.
func waitReady(t *testing.T, c *http.Client, base string, ok func(readyz) bool) readyz {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var r readyz
		if call(c, http.MethodGet, base+"/readyz", "", nil, &r, http.StatusOK) == nil && ok(r) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz not as expected within 10 s: %+v", r)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// postDocument creates a small document and returns the status.
func postDocument(t *testing.T, c *http.Client, base, tok string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/documents", strings.NewReader(`{"content":"after"}`))
	req.Header.Set("Authorization", tok)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("POST /documents: %v (did the node die?)", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// checkDocs reads every document's record and content (byte for byte) and
// finds it by name.
func checkDocs(t *testing.T, c *http.Client, base, tok string, docs []acked) {
	t.Helper()
	for _, d := range docs {
		var u struct{ URL string }
		if err := call(c, http.MethodGet, base+"/documents/"+d.id+"/url", tok, nil, &u, http.StatusOK); err != nil {
			t.Fatalf("document %s: %v", d.id, err)
		}
		resp, err := c.Get(u.URL)
		if err != nil {
			t.Fatalf("content of %s: %v", d.id, err)
		}
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || sha256.Sum256(b.Bytes()) != d.sum {
			t.Fatalf("content of %s differs: status %d, %d bytes", d.id, resp.StatusCode, b.Len())
		}
		var found json.RawMessage
		q := `{"query":{"filename":{"beginsWith":"` + d.id + `"}}}`
		if err := call(c, http.MethodPost, base+"/search", tok, []byte(q), &found, http.StatusOK); err != nil || !strings.Contains(string(found), d.id) {
			t.Fatalf("document %s not found by name: %v %s", d.id, err, found)
		}
	}
}
