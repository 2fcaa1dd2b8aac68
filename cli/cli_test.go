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

// TestCLI_EveryCommandPrintsItsUsage walks the command registry: every
// command and subcommand answers -h with its usage (exit 0), and a
// command with subcommands given none, or an unknown one, prints its
// usage naming each subcommand (exit 2). The top-level usage names every
// command.
func TestCLI_EveryCommandPrintsItsUsage(t *testing.T) {
	run := func(t *testing.T, args ...string) (int, string, string) {
		t.Helper()
		var out, errb bytes.Buffer
		code := Main(args, &out, &errb)
		return code, out.String(), errb.String()
	}
	_, top, _ := run(t, "-h")
	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(top, "\n  "+c.name+" ") {
				t.Errorf("quire -h does not list %s:\n%s", c.name, top)
			}
			if c.name == "version" {
				return
			}
			code, out, errb := run(t, c.name, "-h")
			if code != 0 || !strings.Contains(out+errb, "usage") && !strings.Contains(out+errb, "-") {
				t.Fatalf("quire %s -h: code %d stdout %q stderr %q", c.name, code, out, errb)
			}
			if len(c.subs) == 0 {
				return
			}
			for _, args := range [][]string{{c.name}, {c.name, "no-such-command"}} {
				code, out, errb := run(t, args...)
				if code != 2 || out != "" || !strings.Contains(errb, "usage: quire "+c.name) {
					t.Fatalf("quire %v: code %d stdout %q stderr %q", args, code, out, errb)
				}
				for _, sc := range c.subs {
					if !strings.Contains(errb, "\n  "+sc.name+" ") {
						t.Errorf("quire %v's usage does not name %s:\n%s", args, sc.name, errb)
					}
				}
			}
			for _, sc := range c.subs {
				code, out, errb := run(t, c.name, sc.name, "-h")
				if code != 0 || !strings.Contains(out+errb, "-") {
					t.Errorf("quire %s %s -h: code %d stdout %q stderr %q", c.name, sc.name, code, out, errb)
				}
			}
		})
	}
}
