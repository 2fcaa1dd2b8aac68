package cli

import (
	"bytes"
	"os"
	"strings"
	"testing"
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
