//go:build unix

package engine

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRun_KillsItsGroup runs fake engines that leave a child
// holding stdout: one that waits for the child (only the timeout ends
// it) and one that exits at once (as LibreOffice's launcher does). Both
// runs return promptly and the child is gone.
func TestRun_KillsItsGroup(t *testing.T) {
	old := waitDelay
	waitDelay = 300 * time.Millisecond
	t.Cleanup(func() { waitDelay = old })
	for _, tc := range []struct {
		name, tail string
		timeout    time.Duration
	}{
		{"engine waits for its child", "wait\n", 300 * time.Millisecond},
		{"engine exits, child holds stdout", "echo started\n", time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			script := filepath.Join(dir, "engine.sh")
			pidFile := filepath.Join(dir, "child.pid")
			body := "#!/bin/sh\nsleep 1000 &\necho $! > " + pidFile + "\n" + tc.tail
			if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), tc.timeout)
			defer cancel()
			start := time.Now()
			Run(ctx, dir, script)
			if took := time.Since(start); took > 10*time.Second {
				t.Fatalf("run took %s", took)
			}
			b, err := os.ReadFile(pidFile)
			if err != nil {
				t.Fatalf("the engine did not start its child: %v", err)
			}
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			deadline := time.Now().Add(5 * time.Second)
			for alive(pid) {
				if time.Now().After(deadline) {
					syscall.Kill(pid, syscall.SIGKILL)
					t.Fatalf("child %d of the engine still runs", pid)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// alive reports whether pid runs (a zombie waiting for its reaper does not).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !os.IsNotExist(err)
	}
	// state follows the command name in parentheses
	s := string(st)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// TestAbsArgs: a relative scratch dir becomes absolute, and so does every
// argument naming a path inside it, alone, after "=" or after "file://";
// other arguments, and names that merely start like the dir, stay.
func TestAbsArgs(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	abs := filepath.Join(wd, "data/tmp/quire-action-1")
	for _, tc := range []struct {
		name, dir string
		args      []string
		wantDir   string
		want      []string
	}{
		{"absolute dir untouched", "/x/y", []string{"/x/y/in.pdf", "y/in.pdf"}, "/x/y", []string{"/x/y/in.pdf", "y/in.pdf"}},
		{"no dir", "", []string{"--version"}, "", []string{"--version"}},
		{"relative paths", "data/tmp/quire-action-1",
			[]string{"-f", "1", "data/tmp/quire-action-1/in.pdf", "stdout", "data/tmp/quire-action-1"},
			abs, []string{"-f", "1", abs + "/in.pdf", "stdout", abs}},
		{"after = and file://", "./data/tmp/quire-action-1",
			[]string{"-env:UserInstallation=file://data/tmp/quire-action-1/profile", "--out=data/tmp/quire-action-1/x"},
			abs, []string{"-env:UserInstallation=file://" + abs + "/profile", "--out=" + abs + "/x"}},
		{"a sibling that starts the same", "data/tmp/quire-action-1",
			[]string{"data/tmp/quire-action-10/in.pdf"}, abs, []string{"data/tmp/quire-action-10/in.pdf"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, args := absArgs(tc.dir, tc.args)
			if dir != tc.wantDir || strings.Join(args, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("absArgs(%q, %q) = %q, %q; want %q, %q", tc.dir, tc.args, dir, args, tc.wantDir, tc.want)
			}
		})
	}
}
