package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCLI_Config(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.toml")
	var ex bytes.Buffer
	if code := Main([]string{"config", "example", "--data-dir", "/var/lib/quire", "--listen", "0.0.0.0:8080"}, &ex, os.Stderr); code != 0 {
		t.Fatalf("config example: code %d", code)
	}
	if !strings.Contains(ex.String(), `data_dir = "/var/lib/quire"`) || !strings.Contains(ex.String(), `listen = "0.0.0.0:8080"`) {
		t.Fatalf("example does not carry the flags' values:\n%s", ex.String())
	}
	os.WriteFile(good, ex.Bytes(), 0o600)
	bad := filepath.Join(dir, "bad.toml")
	os.WriteFile(bad, []byte("listen = \"127.0.0.1:8080\"\n\n[smtp]\nport = 99999\nhots = \"x\"\n"), 0o600)
	tests := []struct {
		name       string
		args       []string
		code       int
		out, inErr string
	}{
		{"check good", []string{"config", "check", "--config", good}, 0, "config ok: " + good, ""},
		{"wildcard without public_url warns", []string{"config", "check", "--config", good}, 0, "listen: 0.0.0.0:8080 listens on every address but public_url is not set", ""},
		{"open metrics on the LAN warn", []string{"config", "check", "--config", good}, 0, "warning: default: metrics.listen: /metrics answers anyone on the LAN", ""},
		{"check bad", []string{"config", "check", "--config", bad}, 1, "", bad + ":4: smtp.port: must be from 1 to 65535"},
		{"check bad names unknown", []string{"config", "check", "--config", bad}, 1, "", bad + ":5: smtp.hots: unknown setting"},
		{"check missing file", []string{"config", "check", "--config", filepath.Join(dir, "nope.toml")}, 1, "", "no such file"},
		{"no subcommand", []string{"config"}, 2, "", "usage: quire config"},
		{"serve refuses a bad file", []string{"serve", "--config", bad}, 1, "", "smtp.port"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Main(tt.args, &out, &errb)
			if code != tt.code || !strings.Contains(out.String(), tt.out) || !strings.Contains(errb.String(), tt.inErr) {
				t.Fatalf("code %d stdout %q stderr %q; want %d, %q, %q", code, out.String(), errb.String(), tt.code, tt.out, tt.inErr)
			}
		})
	}
	// With a public URL and the metrics on loopback, the same file has
	// nothing to warn of.
	var out, errb bytes.Buffer
	args := []string{"config", "check", "--config", good, "--public-url", "https://quire.office.lan:8080", "--metrics-listen", "127.0.0.1:9464"}
	if code := Main(args, &out, &errb); code != 0 || out.String() != "config ok: "+good+"\n" {
		t.Fatalf("%v: code %d stdout %q stderr %q", args, code, out.String(), errb.String())
	}
}
