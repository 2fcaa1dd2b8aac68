package quiretest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// The quire command built from this tree, once per test process
// (QuireBinary). quireDir is set when it went to a temporary directory,
// which RemoveQuireBinary deletes.
var (
	quireOnce sync.Once
	quireDir  string
	quireBin  string
	quireErr  error
)

// QuireBinary is the quire command as `make build` ships it (CGO_ENABLED=0,
// -trimpath, no race detector), built from this tree with `go build` the
// first time a test of the process asks for it, so it is never missing
// or stale: a build that fails fails the test. Tests that run `quire`
// as a user does (quire serve in a child process, the README's blocks)
// run this binary, not the race-built test binary: the child then costs
// what the shipped program costs, a fraction of a race build's CPU.
//
// It is built into a directory of the user's cache kept per source tree
// (binDir), where go build leaves a binary that is up to date alone: a
// fresh directory made every package that runs quire (node, console, the
// root package) link it again, 4.4 CPU-s each on the 2-core machine
// (2026-12-02), about a fifth of a short process test's CPU. Go's own
// temporary directory is put beside it (GOTMPDIR), so the new binary
// replaces an old one by a rename: a package whose tests run the old one
// meanwhile keeps running it, and no test starts a half-written file.
// Without a cache directory it goes to a temporary one that the
// package's TestMain deletes (RemoveQuireBinary).
func QuireBinary(t testing.TB) string {
	t.Helper()
	quireOnce.Do(func() {
		gobin, err := exec.LookPath("go")
		if err != nil {
			gobin = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		dir, err := binDir()
		if err != nil {
			if quireDir, quireErr = os.MkdirTemp("", "quire-test-bin-"); quireErr != nil {
				return
			}
			dir = quireDir
		}
		quireBin = filepath.Join(dir, "quire")
		// The package path, not ".": the test runs in its package's
		// directory, anywhere in the module.
		cmd := exec.Command(gobin, "build", "-trimpath", "-o", quireBin, "quire")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOTMPDIR="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			quireErr = fmt.Errorf("build the quire command (go build -trimpath quire): %v\n%s", err, out)
		}
	})
	if quireErr != nil {
		t.Fatal(quireErr)
	}
	return quireBin
}

// RemoveQuireBinary deletes the binary QuireBinary built into a
// temporary directory, if any (call it from TestMain after m.Run); the
// one in the user's cache stays for the next run.
func RemoveQuireBinary() {
	if quireDir != "" {
		os.RemoveAll(quireDir)
	}
}

// binDir is the directory of the user's cache where QuireBinary builds
// the quire command of the source tree the test runs in: one per tree
// (the path of its go.mod, hashed), so that trees checked out side by
// side do not replace each other's binary.
func binDir() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no go.mod above the test's directory")
		}
		dir = up
	}
	sum := sha256.Sum256([]byte(dir))
	bin := filepath.Join(cache, "quire-test-bin", hex.EncodeToString(sum[:8]))
	return bin, os.MkdirAll(bin, 0o700)
}
