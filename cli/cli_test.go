package cli

import (
	"bytes"
	"strings"
	"testing"

	"quire/auth"
)

func TestCLI(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name     string
		args     []string
		code     int
		inStdout string
		inStderr string
	}{
		{"no command", nil, 2, "", "usage: quire"},
		{"unknown", []string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{"version", []string{"version"}, 0, "quire ", ""},
		{"token needs user", []string{"token", "--data-dir", dir}, 1, "", "--user is required"},
		{"token", []string{"token", "--data-dir", dir, "--user", "ann", "--groups", "finance, default_read", "--ttl", "5m"}, 0, ".", ""},
		{"serve bad flag", []string{"serve", "--no-such-flag"}, 1, "", "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Main(tt.args, &out, &errb)
			if code != tt.code || !strings.Contains(out.String(), tt.inStdout) || !strings.Contains(errb.String(), tt.inStderr) {
				t.Fatalf("code %d stdout %q stderr %q; want %d, %q, %q", code, out.String(), errb.String(), tt.code, tt.inStdout, tt.inStderr)
			}
			if tt.name != "token" {
				return
			}
			a, err := auth.Open(auth.Config{DataDir: dir}, nil)
			if err != nil {
				t.Fatal(err)
			}
			p, err := a.Authenticate(strings.TrimSpace(out.String()))
			if err != nil {
				t.Fatalf("token from the CLI does not verify: %v", err)
			}
			if p.Username != "ann" || !p.Can("finance", auth.PermWrite) || !p.Can("default", auth.PermRead) || p.Can("default", auth.PermWrite) {
				t.Fatalf("principal = %+v", p)
			}
		})
	}
}
