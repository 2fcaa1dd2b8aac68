package quiretest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// The quire command built from this tree, once per test process
// (QuireBinary); RemoveQuireBinary deletes it.
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
// what the shipped program costs, a fraction of a race build's CPU. The
// package's TestMain calls RemoveQuireBinary when its tests end.
func QuireBinary(t testing.TB) string {
	t.Helper()
	quireOnce.Do(func() {
		gobin, err := exec.LookPath("go")
		if err != nil {
			gobin = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		if quireDir, quireErr = os.MkdirTemp("", "quire-test-bin-"); quireErr != nil {
			return
		}
		quireBin = filepath.Join(quireDir, "quire")
		// The package path, not ".": the test runs in its package's
		// directory, anywhere in the module.
		cmd := exec.Command(gobin, "build", "-trimpath", "-o", quireBin, "quire")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			quireErr = fmt.Errorf("build the quire command (go build -trimpath quire): %v\n%s", err, out)
		}
	})
	if quireErr != nil {
		t.Fatal(quireErr)
	}
	return quireBin
}

// RemoveQuireBinary deletes the binary QuireBinary built, if any (call it
// from TestMain after m.Run).
func RemoveQuireBinary() {
	if quireDir != "" {
		os.RemoveAll(quireDir)
	}
}
