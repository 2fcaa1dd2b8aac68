package main

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"quire/auth"
	"quire/quiretest"
)

// TestARM64_UnderQEMU builds the linux/arm64 binary the packages ship
// (make package, make cross) and runs it under qemu-user-static on this
// machine: the README's walk-through and sign-in blocks, then a crash
// round (SIGKILL while clients write, restart, every acknowledged
// document is there).
func TestARM64_UnderQEMU(t *testing.T) {
	t.Parallel()
	qemu := quiretest.NeedProgram(t, "qemu-aarch64-static", "qemu-user-static")
	quiretest.NeedProgram(t, "curl", "curl")
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "quire-arm64")
	build := exec.Command(gobin, "build", "-trimpath", "-o", bin, ".")
	build.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build for linux/arm64: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	machine := f.Machine
	f.Close()
	if machine != elf.EM_AARCH64 {
		t.Fatalf("%s is built for %v, not arm64", bin, machine)
	}
	run := fmt.Sprintf("exec %q %q \"$@\"", qemu, bin)

	t.Run("README", func(t *testing.T) {
		// The cluster block starts three emulated nodes: the crash round
		// below is the arm64 binary's restart proof.
		ran := runREADME(t, run, func(b readmeBlock) bool { return b.section != "Three nodes on one machine" })
		if ran < 2 {
			t.Fatalf("%d README blocks ran under qemu: the walk-through and sign-in are missing", ran)
		}
	})
	t.Run("SIGKILL while clients write", func(t *testing.T) { crashRound(t, run) })
}

// crashRound starts `quire serve` (run: the shell command of the binary),
// writes documents from four clients, SIGKILLs the server while they
// write, starts it again on the same data dir and reads back every
// acknowledged document.
func crashRound(t *testing.T, run string) {
	dir := t.TempDir()
	addr := quiretest.FreeLoopbackAddr(t)
	base := "http://" + addr
	serve := fmt.Sprintf("sh -c '%s' quire serve --listen %s --data-dir ./data --public-url %s", run, addr, base)
	p := quiretest.StartProcessGroup(t, dir, serve, "arm64-serve")
	quiretest.WaitReady(t, base+"/readyz", p)
	tok, err := auth.SignToken(filepath.Join(dir, "data"), "", "admin", []string{"Admins"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	post := func(path, content string) (string, bool) {
		body, _ := json.Marshal(map[string]any{"path": path, "content": content, "contentType": "text/plain"})
		req, _ := http.NewRequest(http.MethodPost, base+"/documents", bytes.NewReader(body))
		req.Header.Set("Authorization", tok)
		resp, err := client.Do(req)
		if err != nil {
			return "", false
		}
		defer resp.Body.Close()
		var m struct {
			DocumentID string `json:"documentId"`
		}
		if resp.StatusCode != http.StatusCreated || json.NewDecoder(resp.Body).Decode(&m) != nil || m.DocumentID == "" {
			return "", false
		}
		return m.DocumentID, true
	}
	var (
		mu    sync.Mutex
		acked = map[string]string{}
		stop  = make(chan struct{})
		wg    sync.WaitGroup
	)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10000; i++ {
				select {
				case <-stop:
					return
				default:
				}
				content := fmt.Sprintf("w%d-%d", w, i)
				if id, ok := post(fmt.Sprintf("crash/w%d/%d.txt", w, i), content); ok {
					mu.Lock()
					acked[id] = content
					mu.Unlock()
				}
			}
		}()
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 40 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d writes acknowledged in 2 minutes", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.Kill()
	close(stop)
	wg.Wait()

	p = quiretest.StartProcessGroup(t, dir, serve, "arm64-serve-again")
	quiretest.WaitReady(t, base+"/readyz", p)
	for id, content := range acked {
		req, _ := http.NewRequest(http.MethodGet, base+"/documents/"+id+"/content", nil)
		req.Header.Set("Authorization", tok)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s after the restart: %v", id, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var m struct {
			Content string `json:"content"`
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &m) != nil || m.Content != content {
			t.Fatalf("%s after the restart: %d %s, want content %q", id, resp.StatusCode, b, content)
		}
	}
	t.Logf("%d acknowledged writes, all there after SIGKILL and restart under qemu", len(acked))
}
