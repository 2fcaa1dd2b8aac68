package quiretest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Servers started as processes, as an office starts them: `make run`
// (MakeRun), the README's blocks, the arm64 and Windows binaries. The
// shipped program stands in for bin/quire (QuireCommand).

// QuireCommand is the shell command line (ending in "$@") that runs the
// quire command as `make build` ships it (QuireBinary) as bin/quire.
func QuireCommand(t testing.TB) string {
	t.Helper()
	return fmt.Sprintf("exec %q \"$@\"", QuireBinary(t))
}

// MakeRunLine is the Makefile's run target's server command: MakeRun
// starts the server as it does, and fails when the Makefile changed it.
const MakeRunLine = "$(BIN) serve --listen $(LISTEN) --data-dir $(DATA) --public-url http://$(LISTEN)"

// MakeRun starts a server exactly as `make run` starts it, in a fresh
// directory whose bin/quire runs quireCmd (a shell line ending in "$@",
// QuireCommand for the shipped program): `bin/quire serve --listen ADDR --data-dir
// ./data --public-url http://ADDR`, the data dir relative, the default
// configuration, on a free loopback port. It returns the directory and
// the server's address once /readyz answers; the server stops when the
// test ends.
func MakeRun(t testing.TB, quireCmd string) (dir, listen string) {
	t.Helper()
	mk, err := os.ReadFile(filepath.Join(RepoRoot(t), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(mk, []byte(MakeRunLine)) || !bytes.Contains(mk, []byte("DATA ?= ./data")) {
		t.Fatalf("the Makefile's run target no longer runs %q with DATA ?= ./data: MakeRun starts the server as it did", MakeRunLine)
	}
	dir = t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bin", "quire"), []byte("#!/bin/sh\n"+quireCmd+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// make run: mkdir -p -m 750 $(DATA), then the server.
	if err := os.Mkdir(filepath.Join(dir, "data"), 0o750); err != nil {
		t.Fatal(err)
	}
	listen = FreeLoopbackAddr(t)
	serve := StartProcessGroup(t, dir, "bin/quire serve --listen "+listen+" --data-dir ./data --public-url http://"+listen, "make-run")
	WaitReady(t, "http://"+listen+"/readyz", serve)
	return dir, listen
}

// RepoRoot is the repository's top directory (the one with go.mod), found
// from the test's working directory up.
func RepoRoot(t testing.TB) string {
	t.Helper()
	d, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		up := filepath.Dir(d)
		if up == d {
			t.Fatal("no go.mod above the test's directory")
		}
		d = up
	}
}

// FreeLoopbackAddr is a loopback address nothing listens on now.
func FreeLoopbackAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Proc is a bash script run in a process group of its own, so that the
// servers it starts in the background end with it. Its output goes to a
// file, not a pipe: the script is done when bash exits, whatever its
// background children still hold open.
type Proc struct {
	Cmd  *exec.Cmd
	out  string
	done chan struct{}
	err  error
}

// Output is what the process wrote so far (stdout and stderr).
func (p *Proc) Output() string {
	b, _ := os.ReadFile(p.out)
	return string(b)
}

// Done is closed once the script has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Err is the script's exit error, once Done is closed.
func (p *Proc) Err() error { return p.err }

// Kill kills the process group and waits for the script to exit.
func (p *Proc) Kill() {
	syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// StartProcessGroup runs script with bash in dir (HOME too), in a process
// group that is killed when the test ends; a failed test logs the tail of
// its output under name.
func StartProcessGroup(t testing.TB, dir, script, name string) *Proc {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := &Proc{out: f.Name(), done: make(chan struct{})}
	p.Cmd = exec.Command("bash", "-c", script)
	p.Cmd.Dir = dir
	p.Cmd.Env = append(os.Environ(), "HOME="+dir)
	p.Cmd.Stdout, p.Cmd.Stderr = f, f
	p.Cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.Cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	go func() {
		p.err = p.Cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("%s's output (tail):\n%s", name, Tail(p.Output(), 4000))
		}
	})
	return p
}

// WaitReady polls url until it answers 200, failing after 60 s or when the
// process exits.
func WaitReady(t testing.TB, url string, p *Proc) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-p.done:
			t.Fatalf("the server exited: %v\n%s", p.err, p.Output())
		case <-ctx.Done():
			t.Fatalf("%s not ready in 60 s:\n%s", url, p.Output())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// RunCommand runs a shell line in dir (HOME too) and returns its
// standard output, failing the test when it fails or takes more than
// limit.
func RunCommand(t testing.TB, dir, line string, limit time.Duration) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", line)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s%s", line, err, out, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// Tail is the last n bytes of s.
func Tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
