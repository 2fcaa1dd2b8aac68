package cli

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kardianos/service"
)

// TestSystemdUnit keeps systemd/quire.service equal to the unit `quire
// service install` writes with the packaged paths, and hardened.
func TestSystemdUnit(t *testing.T) {
	b, err := os.ReadFile("../systemd/quire.service")
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != packagedUnit() {
		t.Fatal("systemd/quire.service differs from `quire service unit`: run `make systemd/quire.service`")
	}
	var out bytes.Buffer
	if code := Main([]string{"service", "unit"}, &out, os.Stderr); code != 0 || out.String() != string(b) {
		t.Fatalf("quire service unit: code %d", code)
	}
	for _, line := range []string{"User=quire", "ExecStart=/usr/bin/quire serve --config /etc/quire/quire.toml", "ProtectSystem=strict",
		"ReadWritePaths=/var/lib/quire", "NoNewPrivileges=true", "Restart=on-failure", "LimitNOFILE=65536", "WantedBy=multi-user.target"} {
		if !strings.Contains(string(b), "\n"+line+"\n") {
			t.Fatalf("unit lacks %q", line)
		}
	}
	custom := systemdUnit(unitOptions{Binary: "/opt/quire/quire", ConfigFile: "/srv/q.toml", DataDir: "/srv/quire", User: "docs"})
	for _, line := range []string{"User=docs", "ExecStart=/opt/quire/quire serve --config /srv/q.toml", "ReadWritePaths=/srv/quire", "WorkingDirectory=/srv/quire"} {
		if !strings.Contains(custom, "\n"+line+"\n") {
			t.Fatalf("installed unit lacks %q", line)
		}
	}
}

// TestServiceManagerError: a failed call to the service manager says which
// manager was asked and what to do, never only the command's exit status.
func TestServiceManagerError(t *testing.T) {
	exit1 := errors.New("exit status 1")
	for _, tt := range []struct {
		name, platform string
		err            error
		want           string
	}{
		{"no systemd", "unix-systemv", exit1, "runs no systemd"},
		{"not installed", "linux-systemd", service.ErrNotInstalled, "not installed as a service"},
		{"refused", "linux-systemd", exit1, "the service manager (linux-systemd) refused: exit status 1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "no systemd" && runtime.GOOS != "linux" {
				return
			}
			got := serviceManagerError("status", tt.platform, tt.err).Error()
			if !strings.Contains(got, tt.want) || !strings.HasPrefix(got, "service status: ") {
				t.Fatalf("message %q, want it to contain %q", got, tt.want)
			}
		})
	}
	// Whatever manager this machine has, `quire service status` of a Quire
	// that is not installed says more than the exit status.
	var out, errb bytes.Buffer
	code := Main([]string{"service", "status", "--config", filepath.Join(t.TempDir(), "quire.toml")}, &out, &errb)
	if code == 0 || strings.TrimSpace(errb.String()) == "quire: exit status 1" || !strings.Contains(errb.String(), "service") {
		t.Fatalf("quire service status of an uninstalled service: exit %d, stderr %q", code, errb.String())
	}
}
