package cli

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"quire/quiretest"
)

// TestUser_WhileTheServerRuns makes the first administrator, resets and
// disables it with quire user against a running server's data dir.
func TestUser_WhileTheServerRuns(t *testing.T) {
	s := quiretest.NewServer(t)
	run := func(t *testing.T, args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		args = append(args, "--data-dir", s.DataDir, "--url", s.URL)
		if code := Main(args, &out, &errb); code != 0 {
			t.Fatalf("quire %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
		}
		return out.String()
	}
	signIn := func(t *testing.T, pw string) int {
		t.Helper()
		r := s.Do(http.MethodPost, "/login", map[string]any{"username": "root", "password": pw}, "")
		return r.Status
	}
	for _, tt := range []struct {
		name string
		args []string
		pw   string
		want int
	}{
		{"add", []string{"user", "add", "root", "--groups", "Admins", "--password", "root-temp-1"}, "root-temp-1", 200},
		{"passwd", []string{"user", "passwd", "root", "--password", "root-temp-2"}, "root-temp-2", 200},
		{"disable", []string{"user", "disable", "root"}, "root-temp-2", 401},
		{"enable", []string{"user", "enable", "root"}, "root-temp-2", 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			run(t, tt.args...)
			if got := signIn(t, tt.pw); got != tt.want {
				t.Fatalf("sign-in after %s: %d, want %d", tt.name, got, tt.want)
			}
		})
	}
	r := s.Do(http.MethodGet, "/users/root/groups", nil, s.Admin())
	if !strings.Contains(string(r.Body), `"name":"Admins"`) {
		t.Errorf("root's groups: %s", r.Body)
	}
	if out := run(t, "user", "passwd", "root"); !strings.Contains(out, "temporary password: ") {
		t.Errorf("a generated password is not printed: %q", out)
	}
	var out, errb bytes.Buffer
	if code := Main([]string{"user", "add", "x", "--data-dir", s.DataDir, "--url", "http://127.0.0.1:1"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "is the server running") {
		t.Errorf("no server: exit %d: %s", code, errb.String())
	}
	if strings.Contains(out.String(), "temporary password") {
		t.Errorf("a password is printed for a user the server never created: %q", out.String())
	}
}
