package quiretest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCIRun_ExportsCI runs .ci/run with a stand-in `make` that reports the
// CI variable it sees: whoever runs CI's entry point, tests that need an
// engine must fail rather than skip, so .ci/run sets CI=true itself.
func TestCIRun_ExportsCI(t *testing.T) {
	bin := t.TempDir()
	out := filepath.Join(t.TempDir(), "ci")
	stub := "#!/bin/sh\nprintf '%s' \"CI=$CI args=$*\" > " + out + "\n"
	if err := os.WriteFile(filepath.Join(bin, "make"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", filepath.Join("..", ".ci", "run"))
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CI=") && !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf(".ci/run: %v\n%s", err, b)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("the stand-in make did not run: %v", err)
	}
	if want := "CI=true args=test"; string(got) != want {
		t.Fatalf(".ci/run ran make with %q, want %q", got, want)
	}
}
