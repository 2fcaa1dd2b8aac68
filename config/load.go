package config

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"quire/outbound"
	"quire/ratelimit"
	"quire/storage"
)

// Loaded is a configuration and where each of its settings came from.
type Loaded struct {
	*Config
	// File is the config file read ("" when none).
	File string
	// origin maps a setting key to its source: "file:line", a variable
	// name or a flag.
	origin map[string]string
}

// Origin says where a setting's value came from ("default" when nowhere).
func (l *Loaded) Origin(key string) string {
	if o, ok := l.origin[key]; ok {
		return o
	}
	return "default"
}

// Warnings are settings that are valid but likely to surprise: quire
// config check and quire doctor print them.
func (l *Loaded) Warnings() Problems {
	var ws Problems
	warn := func(key, format string, args ...any) {
		ws = append(ws, Problem{Where: l.Origin(key), Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	c := l.Config
	host, _, err := net.SplitHostPort(c.Listen)
	wildcard := err == nil && (host == "" || host == "0.0.0.0" || host == "::")
	if wildcard && c.PublicURL == "" {
		warn("listen", "%s listens on every address but public_url is not set: links in answers (upload, download, short links) are built from the request's Host when it names this machine, else from the address the client connected to; mailed links (e-signature) and webhook payloads use this machine's first LAN address. Set public_url to the address clients use (behind a reverse proxy or NAT it is required)", c.Listen)
	}
	if wildcard && c.Metrics.Listen == "" && c.Metrics.Token == "" {
		warn("metrics.listen", "/metrics answers anyone on the LAN (it names every site and its document counts): set metrics.listen to a loopback or management address, or metrics.token")
	}
	return ws
}

// Problem is one invalid setting.
type Problem struct {
	// Where is "file:line", a variable or a flag.
	Where string
	Key   string
	Msg   string
}

func (p Problem) String() string {
	if p.Key == "" {
		return p.Where + ": " + p.Msg
	}
	return p.Where + ": " + p.Key + ": " + p.Msg
}

// Problems is every problem found in a configuration.
type Problems []Problem

func (ps Problems) Error() string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return "invalid configuration:\n  " + strings.Join(s, "\n  ")
}

// Options says what Load reads.
type Options struct {
	// Flags lists the settings registered as flags on the flag set (by
	// name); nil registers every setting that is not secret.
	Flags []string
	// Getenv reads environment variables (default os.Getenv).
	Getenv func(string) string
}

// Load builds a configuration: defaults, then the config file (--config,
// or QUIRE_CONFIG), then QUIRE_* variables, then flags. It registers
// --config and the settings' flags on fs, parses args, and validates the
// result. A flag parse error is returned as is (flag.ErrHelp for -h).
func Load(fs *flag.FlagSet, args []string, o Options) (*Loaded, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	l := &Loaded{Config: Default(), origin: map[string]string{}}
	l.File = configArg(args)
	if l.File == "" {
		l.File = getenv("QUIRE_CONFIG")
	}
	var ps Problems
	if l.File != "" {
		if err := l.readFile(l.File); err != nil {
			var fp Problems
			if errors.As(err, &fp) {
				ps = append(ps, fp...)
			} else {
				return nil, err
			}
		}
	}
	for _, s := range settings {
		env := s.Env()
		v := getenv(env)
		if v == "" {
			continue
		}
		if err := s.set(l.Config, v); err != nil {
			ps = append(ps, Problem{Where: env, Key: s.key, Msg: err.Error()})
			continue
		}
		l.origin[s.key] = env
	}
	fs.String("config", l.File, "config file (TOML; `quire config example` prints one); also QUIRE_CONFIG")
	for _, s := range settings {
		if s.secret || (o.Flags != nil && !slices.Contains(o.Flags, s.name)) {
			continue
		}
		fs.Var(&flagValue{s: s, c: l.Config, origin: l.origin}, s.name, s.help)
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	ps = append(ps, l.validate()...)
	if len(ps) > 0 {
		return l, ps
	}
	return l, nil
}

// configArg finds --config in args before they are parsed: the file is
// read before the flags so that flags win over it.
func configArg(args []string) string {
	for i, a := range args {
		if a == "--" {
			break
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "config" {
			continue
		}
		if hasVal {
			return val
		}
		if i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// readFile decodes a TOML config file into l. Every problem names the
// file and line.
func (l *Loaded) readFile(path string) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	lines := keyLines(string(src))
	md, err := toml.Decode(string(src), l.Config)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			// The lexer's line is past the newline when it fails on one;
			// the offset names the line the mistake is on.
			line := pe.Position.Line
			if pe.Position.Start > 0 && pe.Position.Start <= len(src) {
				line = bytes.Count(src[:pe.Position.Start], []byte("\n")) + 1
			}
			return Problems{{Where: fmt.Sprintf("%s:%d", path, line), Key: pe.LastKey, Msg: pe.Message}}
		}
		// Type mismatches are plain errors: toml: line N (last key "k"): msg.
		if m := typeErr.FindStringSubmatch(err.Error()); m != nil {
			return Problems{{Where: path + ":" + m[1], Key: m[2], Msg: m[3]}}
		}
		return Problems{{Where: path, Msg: err.Error()}}
	}
	var ps Problems
	for _, k := range md.Undecoded() {
		key := k.String()
		if len(k) > 1 && k[0] == "event_buses" {
			continue
		}
		msg := "unknown setting"
		if s, ok := closest(key); ok {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		ps = append(ps, Problem{Where: fmt.Sprintf("%s:%d", path, lines[key]), Key: key, Msg: msg})
	}
	for _, k := range md.Keys() {
		l.origin[k.String()] = fmt.Sprintf("%s:%d", path, lines[k.String()])
	}
	if len(ps) > 0 {
		return ps
	}
	return nil
}

var typeErr = regexp.MustCompile(`^toml: line (\d+) \(last key "([^"]*)"\): (.*)$`)

// closest suggests the setting a mistyped key probably meant: the one with
// the same last part, or whose key contains it.
func closest(key string) (string, bool) {
	last := key[strings.LastIndex(key, ".")+1:]
	for _, s := range settings {
		if strings.HasSuffix(s.key, "."+last) || s.key == last {
			return s.key, true
		}
	}
	return "", false
}

// keyLines maps each dotted key of a TOML file to the line that sets it.
// It follows [table] headers and dotted keys; it only has to be right for
// files that parse, since parse errors carry their own line.
func keyLines(src string) map[string]int {
	m := map[string]int{}
	table := ""
	sc := bufio.NewScanner(strings.NewReader(src))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#':
		case line[0] == '[':
			table = strings.Trim(line, "[] ")
			if i := strings.Index(table, "]"); i >= 0 {
				table = table[:i]
			}
			table = normKey(table)
			m[table] = n
		default:
			k, _, ok := strings.Cut(line, "=")
			if !ok {
				continue
			}
			key := normKey(k)
			if table != "" {
				key = table + "." + key
			}
			if _, seen := m[key]; !seen {
				m[key] = n
			}
		}
	}
	return m
}

// normKey removes spaces and quotes around the parts of a dotted key.
func normKey(k string) string {
	parts := strings.Split(k, ".")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if u, err := strconv.Unquote(p); err == nil {
			p = u
		}
		parts[i] = strings.Trim(p, "'")
	}
	return strings.Join(parts, ".")
}

// validate checks values; each problem names where the value came from.
func (l *Loaded) validate() Problems {
	var ps Problems
	bad := func(key, format string, args ...any) {
		ps = append(ps, Problem{Where: l.Origin(key), Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	c := l.Config
	if _, port, err := net.SplitHostPort(c.Listen); err != nil {
		bad("listen", "want host:port such as 127.0.0.1:8080, got %q", c.Listen)
	} else if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		bad("listen", "port must be a number from 0 to 65535, got %q", port)
	}
	if c.DataDir == "" {
		bad("data_dir", "must not be empty")
	}
	if c.PublicURL != "" {
		if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("public_url", "want an http:// or https:// URL, got %q", c.PublicURL)
		}
	}
	if c.Metrics.Listen != "" {
		if host, port, err := net.SplitHostPort(c.Metrics.Listen); err != nil {
			bad("metrics.listen", "want host:port such as 127.0.0.1:9464, got %q", c.Metrics.Listen)
		} else if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
			bad("metrics.listen", "port must be a number from 0 to 65535, got %q", port)
		} else if c.Metrics.Listen == c.Listen || (host == "" && port != "0" && strings.HasSuffix(c.Listen, ":"+port)) {
			bad("metrics.listen", "must differ from listen (%q)", c.Listen)
		}
	}
	if t := c.Metrics.Token; t != "" && (len(t) < 16 || len(t) > 256 || strings.IndexFunc(t, func(r rune) bool { return r <= ' ' || r > '~' }) >= 0) {
		bad("metrics.token", "want 16 to 256 printable ASCII characters without spaces")
	}
	if (c.TLS.CertFile == "") != (c.TLS.KeyFile == "") {
		bad("tls.cert_file", "cert_file and key_file are set together")
	}
	if c.TLS.SelfSigned && c.TLS.CertFile != "" {
		bad("tls.self_signed", "choose self_signed or cert_file, not both")
	}
	if c.Auth.JWKSFile != "" && c.Auth.PEMFile != "" {
		bad("auth.pem_file", "choose jwks_file or pem_file, not both")
	}
	if c.Auth.TokenTTL <= 0 {
		bad("auth.token_ttl", "must be positive")
	}
	if d := c.Auth.AccessTokenTTL; d < MinAccessTokenTTL || d > MaxAccessTokenTTL {
		bad("auth.access_token_ttl", "must be from %s to %s, got %s", MinAccessTokenTTL, MaxAccessTokenTTL, d)
	}
	if d := c.Auth.RefreshTokenTTL; d < MinRefreshTokenTTL || d > MaxRefreshTokenTTL {
		bad("auth.refresh_token_ttl", "must be from %s to %s, got %s", MinRefreshTokenTTL, MaxRefreshTokenTTL, d)
	} else if d <= c.Auth.AccessTokenTTL {
		bad("auth.refresh_token_ttl", "must be longer than auth.access_token_ttl (%s)", c.Auth.AccessTokenTTL)
	}
	if c.Auth.OIDCEnabled() {
		// Half an identity provider would be a button that fails: refuse it.
		for _, k := range []struct{ key, v string }{{"auth.oidc_authorization_url", c.Auth.OIDCAuthorizationURL},
			{"auth.oidc_token_url", c.Auth.OIDCTokenURL}, {"auth.oidc_client_id", c.Auth.OIDCClientID}} {
			if k.v == "" {
				bad(k.key, "the console's OIDC sign-in needs auth.oidc_authorization_url, auth.oidc_token_url and auth.oidc_client_id together")
			}
		}
		for _, k := range []struct{ key, v string }{{"auth.oidc_authorization_url", c.Auth.OIDCAuthorizationURL}, {"auth.oidc_token_url", c.Auth.OIDCTokenURL}} {
			if u, err := url.Parse(k.v); k.v != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Fragment != "" || u.User != nil) {
				bad(k.key, "want an http:// or https:// URL without user:password@ or #fragment, got %q", k.v)
			}
		}
		if len(c.Auth.OIDCClientID) > 256 || strings.IndexFunc(c.Auth.OIDCClientID, func(r rune) bool { return r < ' ' || r == 0x7f }) >= 0 {
			bad("auth.oidc_client_id", "want at most 256 characters without control characters")
		}
		if c.Auth.JWKSFile == "" && c.Auth.PEMFile == "" {
			bad("auth.jwks_file", "the console's OIDC sign-in verifies the identity provider's ID tokens with auth.jwks_file or auth.pem_file: set one")
		}
		if c.Auth.Issuer == "" {
			bad("auth.issuer", "the console's OIDC sign-in needs the identity provider's issuer (the iss of its ID tokens)")
		}
		if !slices.Contains(c.Auth.OIDCScopes, "openid") {
			bad("auth.oidc_scopes", "must contain openid, got %q", c.Auth.OIDCScopes)
		}
		for _, sc := range c.Auth.OIDCScopes {
			if sc == "" || len(sc) > 128 || strings.IndexFunc(sc, func(r rune) bool { return r <= ' ' || r > '~' || r == '"' || r == '\\' }) >= 0 {
				bad("auth.oidc_scopes", "a scope is printable ASCII without spaces, quotes or backslashes, got %q", sc)
			}
		}
		if n := len([]rune(c.Auth.OIDCDisplayName)); n == 0 || n > 64 {
			bad("auth.oidc_display_name", "want 1 to 64 characters, got %d", n)
		}
	} else if c.Auth.OIDCClientSecretFile != "" {
		bad("auth.oidc_client_secret_file", "set without an identity provider (auth.oidc_authorization_url, auth.oidc_token_url, auth.oidc_client_id)")
	}
	if d := c.Auth.ConsoleIdleTimeout; d < time.Minute || d > 24*time.Hour {
		bad("auth.console_idle_timeout", "must be from 1m to 24h, got %s", d)
	}
	if c.Limits.MaxUploadBytes < 0 {
		bad("limits.max_upload_bytes", "must be 0 (unlimited) or positive")
	}
	if c.Limits.MaxBodyBytes < 64<<10 {
		bad("limits.max_body_bytes", "must be at least 65536")
	}
	if c.Limits.MemoryLimitMiB < 0 {
		bad("limits.memory_limit_mib", "must be 0 (none) or positive")
	}
	if c.Limits.MaxConnsPerClient < 0 {
		bad("limits.max_conns_per_client", "must be 0 (unlimited) or positive")
	}
	switch strings.ToLower(c.Log.Level) {
	case "debug", "info", "warn", "error":
	default:
		bad("log.level", "want debug, info, warn or error, got %q", c.Log.Level)
	}
	if c.Log.Format != "text" && c.Log.Format != "json" {
		bad("log.format", "want text or json, got %q", c.Log.Format)
	}
	if c.Pipeline.Workers < 1 || c.Pipeline.Workers > 256 {
		bad("pipeline.workers", "must be from 1 to 256, got %d", c.Pipeline.Workers)
	}
	if c.Pipeline.ActionTimeout < 1e9 {
		bad("pipeline.action_timeout", "must be at least 1s")
	}
	if c.Intake.Poll < 100*time.Millisecond || c.Intake.Poll > time.Hour {
		bad("intake.poll", "must be from 100ms to 1h, got %s", c.Intake.Poll)
	}
	if c.Intake.FolderRoot != "" && !filepath.IsAbs(c.Intake.FolderRoot) {
		bad("intake.folder_root", "must be an absolute path, got %q", c.Intake.FolderRoot)
	}
	if c.IntakeSMTP.Listen != "" {
		if _, _, err := net.SplitHostPort(c.IntakeSMTP.Listen); err != nil {
			bad("intake_smtp.listen", "want host:port, got %q", c.IntakeSMTP.Listen)
		}
	}
	if c.IntakeSMTP.MaxMessageBytes < 1<<10 || c.IntakeSMTP.MaxMessageBytes > 1<<40 {
		bad("intake_smtp.max_message_bytes", "must be from 1024 to 2^40, got %d", c.IntakeSMTP.MaxMessageBytes)
	}
	if c.IntakeSMTP.MaxAttachments < 1 || c.IntakeSMTP.MaxAttachments > 1000 {
		bad("intake_smtp.max_attachments", "must be from 1 to 1000, got %d", c.IntakeSMTP.MaxAttachments)
	}
	if (c.IntakeSMTP.CertFile == "") != (c.IntakeSMTP.KeyFile == "") {
		bad("intake_smtp.cert_file", "set together with intake_smtp.key_file")
	}
	if c.Pipeline.RetryBase < 1e6 {
		bad("pipeline.retry_base", "must be at least 1ms")
	}
	if m := storage.MinReserve(); c.Storage.MinFreeBytes < int64(m) {
		bad("storage.min_free_bytes", "must be at least %d (%d MiB), what the store may still write through memory-mapped files once writes stop (storage/DESIGN.md, \"Full disk\"); got %d",
			m, m>>20, c.Storage.MinFreeBytes)
	}
	if c.Storage.MinFreePercent < 0 || c.Storage.MinFreePercent > 50 {
		bad("storage.min_free_percent", "must be between 0 and 50, got %d", c.Storage.MinFreePercent)
	}
	if d := c.Index.MergeIdle; d != 0 && (d < time.Second || d > 24*time.Hour) {
		bad("index.merge_idle", "must be 0 (never) or from 1s to 24h, got %s", d)
	}
	if c.Pipeline.OCRMaxPages < 1 {
		bad("pipeline.ocr_max_pages", "must be at least 1, got %d", c.Pipeline.OCRMaxPages)
	}
	if c.Pipeline.OCRPageTimeout < time.Second || c.Pipeline.OCRPageTimeout > time.Hour {
		bad("pipeline.ocr_page_timeout", "must be between 1s and 1h, got %s", c.Pipeline.OCRPageTimeout)
	}
	if a := c.Engines.Clamd; a != "" && !strings.HasPrefix(a, "unix:") && !strings.HasPrefix(a, "tcp:") {
		bad("engines.clamd", "want unix:/path or tcp:host:port, got %q", a)
	}
	if c.SMTP.Port < 1 || c.SMTP.Port > 65535 {
		bad("smtp.port", "must be from 1 to 65535, got %d", c.SMTP.Port)
	}
	switch c.ESignature.Environment {
	case "", "PRODUCTION", "DEVELOPMENT":
	default:
		bad("esignature.environment", "want PRODUCTION or DEVELOPMENT, got %q", c.ESignature.Environment)
	}
	if u := c.Certify.TSAURL; u != "" {
		if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			bad("certify.tsa_url", "want an http or https URL, got %q", u)
		}
	}
	if c.Certify.TSACAFile != "" && c.Certify.TSAURL == "" {
		bad("certify.tsa_ca_file", "is set without certify.tsa_url")
	}
	switch c.SMTP.Security {
	case "", "STARTTLS", "IMPLICIT_TLS":
	default:
		bad("smtp.security", "want STARTTLS, IMPLICIT_TLS or empty, got %q", c.SMTP.Security)
	}
	if c.LLM.URL != "" {
		if u, err := url.Parse(c.LLM.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("llm.url", "want an http:// or https:// URL, got %q", c.LLM.URL)
		}
	}
	for name, u := range c.EventBuses {
		if pu, err := url.Parse(u); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			where := l.Origin("event_buses")
			if o, ok := l.origin["event_buses."+name]; ok && !strings.HasPrefix(where, "-") && !strings.HasPrefix(where, "QUIRE_") {
				where = o
			}
			ps = append(ps, Problem{Where: where, Key: "event_buses", Msg: fmt.Sprintf("%s: want an http:// or https:// URL, got %q", name, u)})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.RateLimit)) {
		spec, key := c.RateLimit[name], "ratelimit."+name
		if !ratelimit.Known(name) {
			msg := "unknown setting"
			if s, ok := closest(key); ok {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			bad(key, "%s", msg)
			continue
		}
		if _, err := ratelimit.Parse(spec); err != nil {
			bad(key, "%v", err)
		}
	}
	ps = append(ps, l.validateCluster()...)
	if _, err := outbound.New(c.Outbound.Allow, nil); err != nil {
		bad("outbound.allow", "%v", err)
	}
	if _, err := outbound.New(nil, c.Outbound.Deny); err != nil {
		bad("outbound.deny", "%v", err)
	}
	return ps
}

// CheckFiles reports configured files that cannot be read (config check
// and doctor; serve finds out when it opens them).
func (l *Loaded) CheckFiles() Problems {
	var ps Problems
	for _, k := range []struct{ key, path string }{
		{"tls.cert_file", l.TLS.CertFile}, {"tls.key_file", l.TLS.KeyFile},
		{"auth.jwks_file", l.Auth.JWKSFile}, {"auth.pem_file", l.Auth.PEMFile}, {"smtp.ca_file", l.SMTP.CAFile},
		{"auth.oidc_client_secret_file", l.Auth.OIDCClientSecretFile},
		{"certify.tsa_ca_file", l.Certify.TSACAFile},
	} {
		if k.path == "" {
			continue
		}
		if f, err := os.Open(k.path); err != nil {
			ps = append(ps, Problem{Where: l.Origin(k.key), Key: k.key, Msg: err.Error()})
		} else {
			f.Close()
		}
	}
	return ps
}

// validateCluster refuses cluster settings Quire cannot honour.
func (l *Loaded) validateCluster() Problems {
	var ps Problems
	bad := func(key, format string, args ...any) {
		ps = append(ps, Problem{Where: l.Origin(key), Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	c := l.Config.Cluster
	if !c.Enabled() {
		for _, k := range []struct {
			key string
			set bool
		}{{"cluster.raft_listen", c.RaftListen != ""}, {"cluster.bootstrap", c.Bootstrap}, {"cluster.join", c.Join != ""}, {"cluster.join_token", c.JoinToken != ""},
			{"cluster.verify_interval", c.VerifyInterval != Default().Cluster.VerifyInterval}} {
			if k.set {
				bad(k.key, "needs cluster.node_id (--node-id): a server without a node id is not a cluster member")
			}
		}
		return ps
	}
	if d := c.VerifyInterval; d != 0 && (d < time.Minute || d > 168*time.Hour) {
		bad("cluster.verify_interval", "must be 0 (only on demand) or from 1m to 168h, got %s", d)
	}
	if !validNodeID.MatchString(c.NodeID) {
		bad("cluster.node_id", "want 1 to 64 letters, digits, '.', '_' or '-' starting with a letter or digit, got %q", c.NodeID)
	}
	if host, port, err := net.SplitHostPort(c.RaftListen); err != nil {
		bad("cluster.raft_listen", "want host:port such as 10.0.0.1:7001, got %q", c.RaftListen)
	} else if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		bad("cluster.raft_listen", "port must be a number from 1 to 65535, got %q", port)
	} else if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		bad("cluster.raft_listen", "other members dial this address: name this machine's address, not %q", c.RaftListen)
	}
	if c.Bootstrap && c.Join != "" {
		bad("cluster.join", "choose bootstrap (a new cluster) or join (an existing one), not both")
	}
	if c.Join != "" {
		if u, err := url.Parse(c.Join); err != nil || u.Scheme != "https" || u.Host == "" {
			bad("cluster.join", "want the https:// URL of a member's API, got %q", c.Join)
		}
		if c.JoinToken == "" {
			bad("cluster.join_token", "join needs a join token (quire cluster token on a member)")
		}
	}
	if c.JoinToken != "" && c.Join == "" {
		bad("cluster.join_token", "a join token is used with join (--join https://member:8080)")
	}
	return ps
}

// validNodeID is cluster.ValidNodeID's rule (config does not import the
// cluster package and its Raft dependencies).
var validNodeID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
