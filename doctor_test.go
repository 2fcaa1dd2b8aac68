package main

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quire/quiretest"
)

// TestDoctor runs quire doctor against healthy and broken installations
// and checks it names what to fix.
func TestDoctor(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o750)
	s := quiretest.StartServer(t, dir)
	tok := s.Admin()
	for i := 0; i < 3; i++ {
		if r := s.Do(http.MethodPost, "/documents", map[string]any{"content": "x"}, tok); r.Status != http.StatusCreated {
			t.Fatal(r.Status)
		}
	}
	running := s.Node.Addr()
	badCfg := filepath.Join(t.TempDir(), "bad.toml")
	os.WriteFile(badCfg, []byte("[log]\nlevel = \"loud\"\n"), 0o600)
	notDir := filepath.Join(t.TempDir(), "file")
	os.WriteFile(notDir, []byte("x"), 0o600)
	future := t.TempDir()
	tests := []struct {
		name  string
		setup func()
		args  []string
		code  int
		want  []string
	}{
		{"running server", nil, []string{"--data-dir", dir, "--listen", running}, 0,
			[]string{"ok    server     http://" + running + " is ready", "ok    data dir", " disk ", " clock ", "0 failed"}},
		{"stopped server", func() { s.Close() }, []string{"--data-dir", dir, "--listen", "127.0.0.1:1"}, 0,
			[]string{"no server answers", "ok    store      opens, 3 documents"}},
		{"bad config", nil, []string{"--config", badCfg, "--data-dir", dir}, 1,
			[]string{"FAIL  config     " + badCfg + ":2: log.level: want debug, info, warn or error", "1 failed"}},
		{"data dir is a file", nil, []string{"--data-dir", notDir, "--listen", "127.0.0.1:1"}, 1,
			[]string{"FAIL  data dir   " + notDir + " is not a usable directory"}},
		{"clock set back", func() {
			os.MkdirAll(filepath.Join(future, "db"), 0o700)
			f := filepath.Join(future, "db", "000001.vlog")
			os.WriteFile(f, []byte("x"), 0o600)
			later := time.Now().Add(2 * time.Hour)
			os.Chtimes(f, later, later)
		}, []string{"--data-dir", future, "--listen", "127.0.0.1:1"}, 1, []string{"FAIL  clock", "is behind the newest write"}},
		{"plain HTTP on the LAN", nil, []string{"--data-dir", dir, "--listen", "0.0.0.0:1"}, 0,
			[]string{"WARN  tls        serving plain HTTP on 0.0.0.0:1"}},
		{"data dir open to all", func() { os.Chmod(dir, 0o755) }, []string{"--data-dir", dir, "--listen", "127.0.0.1:1"}, 0,
			[]string{"WARN  data dir", "is readable by every user", "fix: chmod 750"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.setup != nil {
				tt.setup()
			}
			var out, errb bytes.Buffer
			code := run(append([]string{"doctor"}, tt.args...), &out, &errb)
			if code != tt.code {
				t.Fatalf("code %d, want %d\n%s%s", code, tt.code, out.String(), errb.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Fatalf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}
