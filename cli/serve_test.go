package cli

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"net/smtp"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"quire/auth"
	"quire/config"
	"quire/index"
	"quire/node"
	"quire/quiretest"
	"quire/storage"
)

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
				return quiretest.Str(t, m, "listen"), logs, func() error { sig <- syscall.SIGTERM; return <-done }
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

// TestNodeConfig_MaxConnsPerClient: the setting's 0 means unlimited, the
// node's 0 means its default; the mapping keeps them apart.
func TestNodeConfig_MaxConnsPerClient(t *testing.T) {
	for _, tc := range []struct{ setting, node int }{{0, -1}, {1, 1}, {512, 512}} {
		c := config.Default()
		c.Limits.MaxConnsPerClient = tc.setting
		if got := nodeConfig(c, nil).MaxConnsPerClient; got != tc.node {
			t.Errorf("max_conns_per_client %d: node gets %d, want %d", tc.setting, got, tc.node)
		}
	}
}

// TestNodeConfig_StorageReserve: the settings' 0 means no reserve, the
// node's 0 its default; the defaults are 1 GiB and 2%.
func TestNodeConfig_StorageReserve(t *testing.T) {
	for _, tc := range []struct {
		bytes    int64
		pct      int
		nodeB    int64
		nodePct  float64
		reserved uint64 // of a 100 GiB disk
	}{
		{1 << 30, 2, 1 << 30, 2, 2 << 30},
		{0, 0, -1, -1, 0},
		{16 << 20, 0, 16 << 20, -1, 16 << 20},
	} {
		c := config.Default()
		c.Storage.MinFreeBytes, c.Storage.MinFreePercent = tc.bytes, tc.pct
		n := nodeConfig(c, nil)
		if n.MinFreeBytes != tc.nodeB || n.MinFreePercent != tc.nodePct {
			t.Errorf("%d bytes, %d%%: node gets %d, %v", tc.bytes, tc.pct, n.MinFreeBytes, n.MinFreePercent)
		}
		if got := storage.Reserve(storage.Config{MinFreeBytes: n.MinFreeBytes, MinFreePercent: n.MinFreePercent}, 100<<30); got != tc.reserved {
			t.Errorf("%d bytes, %d%%: reserve %d, want %d", tc.bytes, tc.pct, got, tc.reserved)
		}
	}
	if d := config.Default().Storage; d.MinFreeBytes != 1<<30 || d.MinFreePercent != 2 {
		t.Errorf("defaults %+v", d)
	}
}

// TestNodeConfig_Cluster: the cluster settings reach the node; none
// leaves it a single server.
func TestNodeConfig_Cluster(t *testing.T) {
	c := config.Default()
	if nodeConfig(c, nil).Cluster.Enabled() {
		t.Fatal("a server without cluster settings is a cluster member")
	}
	c.Cluster = config.Cluster{NodeID: "n2", RaftListen: "10.0.0.2:7001", Join: "https://10.0.0.1:8080", JoinToken: "tok"}
	got := nodeConfig(c, nil).Cluster
	if got.NodeID != "n2" || got.RaftListen != "10.0.0.2:7001" || got.Join != "https://10.0.0.1:8080" || got.JoinToken != "tok" || got.Bootstrap {
		t.Fatalf("node cluster config %+v", got)
	}
}

// TestNodeConfig_VerifyInterval: cluster.verify_interval reaches the
// node, 0 (only on demand) as a negative value (the node's zero is the
// default), and config's default is the node's.
func TestNodeConfig_VerifyInterval(t *testing.T) {
	for _, tt := range []struct {
		conf, node time.Duration
	}{{0, -1}, {time.Hour, time.Hour}} {
		c := config.Default()
		c.Cluster = config.Cluster{NodeID: "n1", RaftListen: "10.0.0.1:7001", VerifyInterval: tt.conf}
		if got := nodeConfig(c, nil).Cluster.VerifyEvery; got != tt.node {
			t.Errorf("verify_interval %v: node gets %v, want %v", tt.conf, got, tt.node)
		}
	}
	if d := config.Default().Cluster.VerifyInterval; d != node.DefaultVerifyEvery {
		t.Errorf("default: config %v, node %v", d, node.DefaultVerifyEvery)
	}
}

// TestNodeConfig_IndexMergeIdle: index.merge_idle reaches the node, 0
// (never) as a negative value (the node's zero is the default), and
// config's default is the index's.
func TestNodeConfig_IndexMergeIdle(t *testing.T) {
	for _, tt := range []struct {
		conf, node time.Duration
	}{{0, -1}, {time.Minute, time.Minute}} {
		c := config.Default()
		c.Index.MergeIdle = tt.conf
		if got := nodeConfig(c, nil).IndexMergeIdle; got != tt.node {
			t.Errorf("merge_idle %v: node gets %v, want %v", tt.conf, got, tt.node)
		}
	}
	if d := config.Default().Index.MergeIdle; d != index.DefaultMergeIdle {
		t.Errorf("default: config %v, index %v", d, index.DefaultMergeIdle)
	}
}

// TestNodeConfig_TokenTTLs: the sign-in token lifetimes reach the
// authenticator, and config's defaults and bounds are auth's (config
// does not import auth).
func TestNodeConfig_TokenTTLs(t *testing.T) {
	c := config.Default()
	c.Auth.AccessTokenTTL, c.Auth.RefreshTokenTTL = 7*time.Minute, 3*time.Hour
	c.Auth.ConsoleIdleTimeout = 20 * time.Minute
	if a := nodeConfig(c, nil).Auth; a.AccessTTL != 7*time.Minute || a.RefreshTTL != 3*time.Hour || a.IdleTimeout != 20*time.Minute {
		t.Errorf("node gets access %v, refresh %v, idle %v", a.AccessTTL, a.RefreshTTL, a.IdleTimeout)
	}
	if d := config.Default().Auth.ConsoleIdleTimeout; d != auth.DefaultIdleTimeout {
		t.Errorf("idle timeout: config %v, auth %v", d, auth.DefaultIdleTimeout)
	}
	for _, p := range []struct {
		name       string
		conf, auth time.Duration
	}{
		{"default access", config.DefaultAccessTokenTTL, auth.DefaultAccessTTL},
		{"min access", config.MinAccessTokenTTL, auth.MinAccessTTL},
		{"max access", config.MaxAccessTokenTTL, auth.MaxAccessTTL},
		{"default refresh", config.DefaultRefreshTokenTTL, auth.DefaultRefreshTTL},
		{"min refresh", config.MinRefreshTokenTTL, auth.MinRefreshTTL},
		{"max refresh", config.MaxRefreshTokenTTL, auth.MaxRefreshTTL},
	} {
		if p.conf != p.auth {
			t.Errorf("%s: config %v, auth %v", p.name, p.conf, p.auth)
		}
	}
}

// TestServe_QuietFirstStart: a first start with the defaults logs nothing
// a newcomer must worry about: no WARN or ERROR line, and no advice about
// the disk (that is quire doctor's, at INFO it would open every log).
func TestServe_QuietFirstStart(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "quire.toml")
	if err := os.WriteFile(file, []byte(`listen = "127.0.0.1:0"
data_dir = "`+filepath.Join(dir, "data")+`"
[log]
format = "json"
`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, logs, stop := startServe(t, file)
	if err := stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Errorf("a log line not in the configured format: %q", line)
			continue
		}
		if lvl, _ := m["level"].(string); lvl != "INFO" {
			t.Errorf("a first start logged at %s: %s", lvl, line)
		}
		if strings.Contains(strings.ToLower(line), "reads ahead") {
			t.Errorf("disk advice in the start's log (it belongs to quire doctor): %s", line)
		}
	}
}

// TestServe_SMTPSelfSigned: scan to e-mail with no certificate configured
// offers STARTTLS with a self-signed certificate made at the first start,
// whose fingerprint the log and quire doctor show; a LAN scanner can thus
// always sign in.
func TestServe_SMTPSelfSigned(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "quire.toml")
	if err := os.WriteFile(file, []byte(`listen = "127.0.0.1:0"
data_dir = "`+filepath.Join(dir, "data")+`"
[intake_smtp]
listen = "127.0.0.1:0"
domain = "scans.office.test"
[log]
format = "json"
`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, logs, stop := startServe(t, file)
	var logged, smtpAddr string
	for _, line := range strings.Split(logs.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil {
			continue
		}
		if fp, ok := m["sha256"].(string); ok && strings.Contains(line, "scan to e-mail") {
			logged = fp
		}
		if a, ok := m["listen"].(string); ok && m["msg"] == "serving scan to e-mail (SMTP)" {
			smtpAddr = a
		}
	}
	if logged == "" || smtpAddr == "" {
		stop()
		t.Fatalf("no SMTP listener or fingerprint in the log:\n%s", logs.String())
	}
	c, err := smtp.Dial(smtpAddr)
	if err != nil {
		stop()
		t.Fatal(err)
	}
	if ok, _ := c.Extension("STARTTLS"); !ok {
		t.Error("STARTTLS not offered")
	}
	if err := c.StartTLS(&tls.Config{InsecureSkipVerify: true, ServerName: "scans.office.test"}); err != nil {
		t.Errorf("STARTTLS: %v", err)
	} else if st, ok := c.TLSConnectionState(); ok && len(st.PeerCertificates) > 0 {
		sum := sha256.Sum256(st.PeerCertificates[0].Raw)
		if got := hex.EncodeToString(sum[:]); got != logged {
			t.Errorf("the certificate offered has fingerprint %s, the log says %s", got, logged)
		}
		if err := st.PeerCertificates[0].VerifyHostname("scans.office.test"); err != nil {
			t.Errorf("the certificate does not name the greeting's domain: %v", err)
		}
	}
	c.Close()
	if err := stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	var out, errb bytes.Buffer
	Main([]string{"doctor", "--config", file}, &out, &errb)
	if !strings.Contains(out.String(), "SHA-256 "+logged) {
		t.Errorf("quire doctor does not show the fingerprint %s:\n%s%s", logged, out.String(), errb.String())
	}
}

// TestServe_QuietJoin: a successful join logs in one format (Raft's lines
// through the process's logger) and says nothing at WARN or ERROR: a new
// member's empty log, the bootstrap's first election and the leader's
// first appends to a member whose Raft is not running yet are expected.
func TestServe_QuietJoin(t *testing.T) {
	root := t.TempDir()
	raftAddr := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return ln.Addr().String()
	}
	write := func(name, extra string) string {
		file := filepath.Join(root, name+".toml")
		body := `listen = "127.0.0.1:0"
data_dir = "` + filepath.Join(root, name) + `"
[tls]
self_signed = true
[log]
format = "json"
level = "debug"
[cluster]
node_id = "` + name + `"
raft_listen = "` + raftAddr() + `"
` + extra
		if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return file
	}
	addr1, logs1, stop1 := startServe(t, write("n1", "bootstrap = true\n"))
	defer stop1()
	var tok, errb bytes.Buffer
	if code := Main([]string{"cluster", "token", "--data-dir", filepath.Join(root, "n1")}, &tok, &errb); code != 0 {
		t.Fatalf("cluster token: %d %s", code, errb.String())
	}
	addr2, logs2, stop2 := startServe(t, write("n2", `join = "https://`+addr1+`"
join_token = "`+strings.TrimSpace(tok.String())+`"
`))
	defer stop2()
	// n2 is ready once it has caught up with n1: past the first appends.
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	quiretest.Eventually(t, "n2 to be ready", 60*time.Second, func() bool {
		resp, err := c.Get("https://" + addr2 + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	for name, logs := range map[string]*syncBuffer{"n1": logs1, "n2": logs2} {
		raftLines := 0
		for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Errorf("%s: a log line not in the configured format: %q", name, line)
				continue
			}
			if lvl, _ := m["level"].(string); lvl == "WARN" || lvl == "ERROR" {
				t.Errorf("%s: a successful join logged %s", name, line)
			}
			if m["component"] == "raft" {
				raftLines++
			}
		}
		if raftLines == 0 {
			t.Errorf("%s: no line of Raft's in the node's log (at DEBUG): Raft logs somewhere else", name)
		}
	}
}
