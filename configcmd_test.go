package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"quire/config"
)

func TestCLI_Config(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.toml")
	var ex bytes.Buffer
	if code := run([]string{"config", "example", "--data-dir", "/var/lib/quire", "--listen", "0.0.0.0:8080"}, &ex, os.Stderr); code != 0 {
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
		{"check bad", []string{"config", "check", "--config", bad}, 1, "", bad + ":4: smtp.port: must be from 1 to 65535"},
		{"check bad names unknown", []string{"config", "check", "--config", bad}, 1, "", bad + ":5: smtp.hots: unknown setting"},
		{"check missing file", []string{"config", "check", "--config", filepath.Join(dir, "nope.toml")}, 1, "", "no such file"},
		{"no subcommand", []string{"config"}, 2, "", "usage: quire config"},
		{"serve refuses a bad file", []string{"serve", "--config", bad}, 1, "", "smtp.port"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(tt.args, &out, &errb)
			if code != tt.code || !strings.Contains(out.String(), tt.out) || !strings.Contains(errb.String(), tt.inErr) {
				t.Fatalf("code %d stdout %q stderr %q; want %d, %q, %q", code, out.String(), errb.String(), tt.code, tt.out, tt.inErr)
			}
		})
	}
}

// syncBuffer is a bytes.Buffer safe for a logger and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServe runs serve from a config file until the returned stop
// function is called; it returns the listen address.
func startServe(t *testing.T, file string) (addr string, logs *syncBuffer, stop func() error) {
	t.Helper()
	fs := newFlagSet("serve")
	l, err := config.Load(fs, []string{"--config", file}, config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	logs = &syncBuffer{}
	sig := make(chan os.Signal, 1)
	done := make(chan error, 1)
	go func() { done <- serve(l, logs, sig) }()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for _, line := range strings.Split(logs.String(), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == "quire serving" {
				return m["listen"].(string), logs, func() error { sig <- syscall.SIGTERM; return <-done }
			}
		}
		select {
		case err := <-done:
			t.Fatalf("serve stopped: %v\n%s", err, logs.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("server did not start:\n%s", logs.String())
	return "", nil, nil
}

// TestServe_SelfSignedTLS serves HTTPS with a certificate generated on
// first start and kept across restarts.
func TestServe_SelfSignedTLS(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "quire.toml")
	os.WriteFile(file, []byte(`listen = "127.0.0.1:0"
data_dir = "`+filepath.Join(dir, "data")+`"
[tls]
self_signed = true
hosts = ["quire.office.test"]
[log]
format = "json"
`), 0o600)
	var fingerprint []byte
	for round := 0; round < 2; round++ {
		addr, logs, stop := startServe(t, file)
		pemBytes, err := os.ReadFile(filepath.Join(dir, "data", "tls", "cert.pem"))
		if err != nil {
			t.Fatal(err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pemBytes)
		for _, name := range []string{"127.0.0.1", "quire.office.test", "localhost"} {
			c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: name}}}
			resp, err := c.Get("https://" + addr + "/healthz")
			if err != nil {
				t.Fatalf("round %d, name %s: %v", round, name, err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("healthz over TLS: %d", resp.StatusCode)
			}
		}
		if resp, err := http.Get("http://" + addr + "/healthz"); err == nil && resp.StatusCode == http.StatusOK {
			t.Fatal("plain HTTP answered on a TLS listener")
		}
		if round == 1 && !bytes.Equal(fingerprint, pemBytes) {
			t.Fatal("the certificate was regenerated at restart")
		}
		fingerprint = pemBytes
		if err := stop(); err != nil {
			t.Fatalf("stop: %v", err)
		}
		if !strings.Contains(logs.String(), `"msg":"serving HTTPS"`) || !strings.Contains(logs.String(), `"msg":"stopped"`) {
			t.Fatalf("logs: %s", logs.String())
		}
	}
}

// TestSystemdUnit keeps systemd/quire.service equal to the unit `quire
// service install` writes with the packaged paths, and hardened.
func TestSystemdUnit(t *testing.T) {
	b, err := os.ReadFile("systemd/quire.service")
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != packagedUnit() {
		t.Fatal("systemd/quire.service differs from `quire service unit`: run `make systemd/quire.service`")
	}
	var out bytes.Buffer
	if code := run([]string{"service", "unit"}, &out, os.Stderr); code != 0 || out.String() != string(b) {
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
