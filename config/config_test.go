package config

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"quire/ratelimit"
)

func load(t *testing.T, file string, env map[string]string, args ...string) (*Loaded, error) {
	t.Helper()
	if file != "" {
		path := filepath.Join(t.TempDir(), "quire.toml")
		if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append([]string{"--config", path}, args...)
	}
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return Load(fs, args, Options{Getenv: func(k string) string { return env[k] }})
}

func TestLoad_Precedence(t *testing.T) {
	file := `
listen = "0.0.0.0:9000"
data_dir = "/srv/quire"
[smtp]
host = "mail.lan"
port = 587
password = "from-file"
[pipeline]
action_timeout = "2m"
[event_buses]
office = "http://127.0.0.1:9/a"
`
	tests := []struct {
		name  string
		env   map[string]string
		args  []string
		check func(*Loaded) string
	}{
		{"file", nil, nil, func(l *Loaded) string {
			if l.Listen != "0.0.0.0:9000" || l.SMTP.Port != 587 || l.Pipeline.ActionTimeout != 2*time.Minute || l.EventBuses["office"] != "http://127.0.0.1:9/a" {
				return "file values not read"
			}
			if l.Workers() != 4 || l.Log.Format != "text" {
				return "defaults lost"
			}
			if o := l.Origin("smtp.port"); !strings.HasSuffix(o, "quire.toml:6") {
				return "origin of smtp.port = " + o
			}
			return ""
		}},
		{"env over file", map[string]string{"QUIRE_SMTP_PORT": "2525", "QUIRE_SMTP_PASSWORD": "from-env", "QUIRE_TLS_HOSTS": "a.lan, 10.0.0.2"}, nil, func(l *Loaded) string {
			if l.SMTP.Port != 2525 || l.SMTP.Password != "from-env" || len(l.TLS.Hosts) != 2 || l.TLS.Hosts[1] != "10.0.0.2" {
				return "env did not win"
			}
			if l.Origin("smtp.port") != "QUIRE_SMTP_PORT" {
				return "origin " + l.Origin("smtp.port")
			}
			return ""
		}},
		{"flag over env", map[string]string{"QUIRE_SMTP_PORT": "2525"}, []string{"--smtp-port", "465", "--event-bus", "b=http://127.0.0.1:9/b"}, func(l *Loaded) string {
			if l.SMTP.Port != 465 || l.Origin("smtp.port") != "--smtp-port" {
				return "flag did not win"
			}
			if len(l.EventBuses) != 1 || l.EventBuses["b"] == "" {
				return "a flag's event buses replace the file's"
			}
			return ""
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := load(t, file, tt.env, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if msg := tt.check(l); msg != "" {
				t.Fatal(msg)
			}
		})
	}
}

// Workers is a helper for the table above.
func (l *Loaded) Workers() int { return l.Pipeline.Workers }

func TestLoad_ProblemsNameTheLine(t *testing.T) {
	tests := []struct {
		name string
		file string
		env  map[string]string
		args []string
		want []string
	}{
		{"syntax", "listen = \"a:1\"\n[smtp\nhost = 1\n", nil, nil, []string{"quire.toml:2"}},
		{"wrong type", "listen = \"127.0.0.1:1\"\n\n[smtp]\nport = \"x\"\n", nil, nil, []string{"quire.toml:4", "smtp.port"}},
		{"unknown key", "listen = \"127.0.0.1:1\"\n[smtp]\nhots = \"m\"\n", nil, nil, []string{"quire.toml:3: smtp.hots: unknown setting"}},
		{"misplaced key", "[log]\nworkers = 3\n", nil, nil, []string{"quire.toml:2: log.workers: unknown setting (did you mean \"pipeline.workers\"?)"}},
		{"bad value", "[log]\nlevel = \"loud\"\n", nil, nil, []string{"quire.toml:2: log.level: want debug, info, warn or error"}},
		{"several", "listen = \"nope\"\n[pipeline]\nworkers = 0\n", nil, nil, []string{"quire.toml:1: listen:", "quire.toml:3: pipeline.workers:"}},
		{"tls pair", "[tls]\ncert_file = \"/x\"\n", nil, nil, []string{"quire.toml:2: tls.cert_file: cert_file and key_file are set together"}},
		{"env", "", map[string]string{"QUIRE_ACTION_TIMEOUT": "soon"}, nil, []string{"QUIRE_ACTION_TIMEOUT: pipeline.action_timeout: want a duration"}},
		{"flag value", "", nil, []string{"--smtp-security", "SSL"}, []string{"--smtp-security: smtp.security: want STARTTLS"}},
		{"reserve under the store's own", "[storage]\nmin_free_bytes = 0\n", nil, nil, []string{"quire.toml:2: storage.min_free_bytes: must be at least"}},
		{"event bus", "[event_buses]\nx = \"ftp://a\"\n", nil, nil, []string{"quire.toml:2: event_buses: x: want an http"}},
		{"tsa url", "[certify]\ntsa_url = \"ldap://tsa\"\n", nil, nil, []string{"quire.toml:2: certify.tsa_url: want an http or https URL"}},
		{"metrics listen", "[metrics]\nlisten = \"9464\"\n", nil, nil, []string{"quire.toml:2: metrics.listen: want host:port"}},
		{"metrics listen is the API's", "listen = \"127.0.0.1:8080\"\n[metrics]\nlisten = \"127.0.0.1:8080\"\n", nil, nil, []string{"quire.toml:3: metrics.listen: must differ from listen"}},
		{"metrics token too short", "[metrics]\ntoken = \"short\"\n", nil, nil, []string{"quire.toml:2: metrics.token: want 16 to 256 printable"}},
		{"metrics token from env", "", map[string]string{"QUIRE_METRICS_TOKEN": "has a space in it ok"}, nil, []string{"QUIRE_METRICS_TOKEN: metrics.token: want 16 to 256"}},
		{"tsa ca without url", "", nil, []string{"--tsa-ca-file", "/etc/ca.pem"}, []string{"--tsa-ca-file: certify.tsa_ca_file: is set without certify.tsa_url"}},
		{"access token ttl too short", "[auth]\naccess_token_ttl = \"1m\"\n", nil, nil, []string{"quire.toml:2: auth.access_token_ttl: must be from 5m0s to 24h0m0s"}},
		{"refresh token ttl too long", "", map[string]string{"QUIRE_REFRESH_TOKEN_TTL": "876001h"}, nil, []string{"QUIRE_REFRESH_TOKEN_TTL: auth.refresh_token_ttl: must be from 1h0m0s"}},
		{"index merge idle too short", "[index]\nmerge_idle = \"100ms\"\n", nil, nil, []string{"quire.toml:2: index.merge_idle: must be 0 (never) or from 1s to 24h"}},
		{"refresh not longer than access", "", nil, []string{"--access-token-ttl", "2h", "--refresh-token-ttl", "1h"}, []string{"--refresh-token-ttl: auth.refresh_token_ttl: must be longer than auth.access_token_ttl"}},
		{"half an identity provider", "[auth]\noidc_client_id = \"quire\"\n", nil, nil, []string{"auth.oidc_authorization_url: the console's OIDC sign-in needs auth.oidc_authorization_url, auth.oidc_token_url and auth.oidc_client_id together",
			"auth.oidc_token_url: the console's OIDC sign-in needs", "auth.jwks_file: the console's OIDC sign-in verifies", "auth.issuer: the console's OIDC sign-in needs the identity provider's issuer"}},
		{"identity provider URLs and scopes", oidcFile + "oidc_token_url = \"ftp://sso/token\"\noidc_scopes = [\"profile\"]\n", nil, nil, []string{"quire.toml:6: auth.oidc_token_url: want an http:// or https:// URL", "quire.toml:7: auth.oidc_scopes: must contain openid"}},
		{"a client secret without a provider", "", map[string]string{"QUIRE_OIDC_CLIENT_SECRET_FILE": "/etc/quire/secret"}, nil, []string{"QUIRE_OIDC_CLIENT_SECRET_FILE: auth.oidc_client_secret_file: set without an identity provider"}},
		{"rate limit spec", "[ratelimit]\nsignin = \"fast\"\n", nil, nil, []string{"quire.toml:2: ratelimit.signin: want \"RATE burst N, global RATE burst N\""}},
		{"rate limit class", "[ratelimit]\nlogin = \"1/s burst 1, global 1/s burst 1\"\n", nil, nil, []string{"quire.toml:2: ratelimit.login: unknown setting"}},
		{"rate limit zero", "", map[string]string{"QUIRE_RATELIMIT_RESET": "0/s burst 1, global 1/s burst 1"}, nil, []string{"QUIRE_RATELIMIT_RESET: ratelimit.reset: per client: want a positive rate"}},
		{"rate limit global below client", "", nil, []string{"--ratelimit-probe", "10/s burst 10, global 1/s burst 1"}, []string{"--ratelimit-probe: ratelimit.probe: the global limit"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(t, tt.file, tt.env, tt.args...)
			var ps Problems
			if !errors.As(err, &ps) {
				t.Fatalf("err = %v, want Problems", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// oidcFile is a whole identity provider but for its token URL.
const oidcFile = "[auth]\njwks_file = \"/etc/quire/idp.json\"\nissuer = \"https://sso\"\noidc_authorization_url = \"https://sso/auth\"\noidc_client_id = \"quire\"\n"

// TestLoad_OIDC: a whole identity provider loads, with the defaults of
// its scopes and button.
func TestLoad_OIDC(t *testing.T) {
	l, err := load(t, oidcFile+"oidc_token_url = \"https://sso/token\"\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !l.Auth.OIDCEnabled() || strings.Join(l.Auth.OIDCScopes, " ") != "openid profile email" || l.Auth.OIDCDisplayName != "single sign-on" {
		t.Fatalf("auth: %+v", l.Auth)
	}
}

func TestLoad_FlagErrors(t *testing.T) {
	_, err := load(t, "", nil, "--pipeline-workers", "many")
	if err == nil || !strings.Contains(err.Error(), "want a whole number") {
		t.Fatalf("err = %v", err)
	}
	if _, err := load(t, "", nil, "--smtp-password", "x"); err == nil || !strings.Contains(err.Error(), "not defined") {
		t.Fatalf("a secret must not be a flag: %v", err)
	}
}

// TestExample_RoundTrips checks that the example is a valid file that
// loads back to the configuration it was printed from, and documents
// every setting.
func TestExample_RoundTrips(t *testing.T) {
	for _, c := range []*Config{Default(), func() *Config {
		c := Default()
		c.Listen, c.DataDir, c.Log.Format = "0.0.0.0:8080", "/var/lib/quire", "json"
		c.TLS.Hosts = []string{"a.lan"}
		c.EventBuses = map[string]string{"office": "http://127.0.0.1:9/e"}
		c.SMTP.Password = "secret-must-not-print"
		return c
	}()} {
		var b bytes.Buffer
		if err := WriteExample(&b, c); err != nil {
			t.Fatal(err)
		}
		for _, s := range settings {
			if !strings.Contains(b.String(), s.Env()) {
				t.Fatalf("example does not document %s", s.key)
			}
		}
		if strings.Contains(b.String(), "secret-must-not-print") {
			t.Fatal("example prints a secret")
		}
		l, err := load(t, b.String(), nil)
		if err != nil {
			t.Fatalf("example does not load: %v\n%s", err, b.String())
		}
		if l.Listen != c.Listen || l.DataDir != c.DataDir || l.Log.Format != c.Log.Format || len(l.TLS.Hosts) != len(c.TLS.Hosts) ||
			len(l.EventBuses) != len(c.EventBuses) || l.Pipeline.ActionTimeout != c.Pipeline.ActionTimeout || l.SMTP.Password != "" {
			t.Fatalf("round trip: got %+v, want %+v", l.Config, c)
		}
	}
}

func TestLoad_ClusterSettings(t *testing.T) {
	l, err := load(t, "", map[string]string{"QUIRE_RAFT_LISTEN": "10.0.0.1:7001"}, "--node-id", "n1", "--bootstrap")
	if err != nil {
		t.Fatal(err)
	}
	if c := l.Cluster; c.NodeID != "n1" || !c.Bootstrap || c.RaftListen != "10.0.0.1:7001" || !c.Enabled() || c.VerifyInterval != 10*time.Minute {
		t.Fatalf("cluster settings: %+v", c)
	}
	// The verification interval: from the file, 0 (only on demand) too.
	for _, tc := range []struct {
		file string
		want time.Duration
	}{{"[cluster]\nverify_interval = \"2h\"\n", 2 * time.Hour}, {"[cluster]\nverify_interval = \"0s\"\n", 0}} {
		l, err := load(t, tc.file, nil, "--node-id", "n1", "--raft-listen", "10.0.0.1:7001")
		if err != nil || l.Cluster.VerifyInterval != tc.want {
			t.Errorf("%q: %v, verify interval %v, want %v", tc.file, err, l.Cluster.VerifyInterval, tc.want)
		}
	}
	if l, err = load(t, "", nil); err != nil || l.Cluster.Enabled() {
		t.Fatalf("no cluster settings: %v %+v", err, l.Cluster)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--raft-listen", "10.0.0.1:7001"}, "needs cluster.node_id"},
		{[]string{"--node-id", "n1"}, "cluster.raft_listen"},
		{[]string{"--node-id", "bad id", "--raft-listen", "10.0.0.1:7001"}, "cluster.node_id"},
		{[]string{"--node-id", "n1", "--raft-listen", "0.0.0.0:7001"}, "not \"0.0.0.0:7001\""},
		{[]string{"--node-id", "n1", "--raft-listen", "10.0.0.1:7001", "--bootstrap", "--join", "https://a:8080", "--join-token", "x"}, "not both"},
		{[]string{"--node-id", "n1", "--raft-listen", "10.0.0.1:7001", "--join", "https://a:8080"}, "join needs a join token"},
		{[]string{"--node-id", "n1", "--raft-listen", "10.0.0.1:7001", "--join", "http://a:8080", "--join-token", "x"}, "https://"},
		{[]string{"--node-id", "n1", "--raft-listen", "10.0.0.1:7001", "--join-token", "x"}, "used with join"},
		{[]string{"--node-id", "n1", "--raft-listen", "10.0.0.1:7001", "--verify-interval", "30s"}, "cluster.verify_interval: must be 0 (only on demand) or from 1m to 168h"},
		{[]string{"--node-id", "n1", "--raft-listen", "10.0.0.1:7001", "--verify-interval", "169h"}, "cluster.verify_interval: must be 0"},
		{[]string{"--verify-interval", "1h"}, "cluster.verify_interval: needs cluster.node_id"},
	} {
		_, err := load(t, "", nil, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}

// TestLoad_RateLimit: a class set in the file, a variable or a flag takes
// that spec; the others keep their defaults.
func TestLoad_RateLimit(t *testing.T) {
	l, err := load(t, "[ratelimit]\nsignin = \"1/min burst 2, global 5/min burst 5\"\n",
		map[string]string{"QUIRE_RATELIMIT_LINKS": "1/s burst 1, global 1/s burst 1"}, "--ratelimit-refresh", "2/s burst 2, global 2/s burst 2")
	if err != nil {
		t.Fatal(err)
	}
	want := ratelimit.Defaults()
	want["signin"], want["links"], want["refresh"] = "1/min burst 2, global 5/min burst 5", "1/s burst 1, global 1/s burst 1", "2/s burst 2, global 2/s burst 2"
	if !maps.Equal(l.RateLimit, want) {
		t.Fatalf("ratelimit = %v, want %v", l.RateLimit, want)
	}
	if o := l.Origin("ratelimit.signin"); !strings.HasSuffix(o, "quire.toml:2") {
		t.Fatalf("origin %q", o)
	}
	// Every class of the ratelimit package is a setting, and no other.
	var keys []string
	for _, s := range settings {
		if strings.HasPrefix(s.key, "ratelimit.") {
			keys = append(keys, strings.TrimPrefix(s.key, "ratelimit."))
		}
	}
	var classes []string
	for _, c := range ratelimit.Classes {
		classes = append(classes, c.Name)
	}
	if !slices.Equal(keys, classes) {
		t.Fatalf("settings %v, classes %v", keys, classes)
	}
}
