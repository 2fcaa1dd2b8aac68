// Package quiretest runs real Quire nodes for tests: real Badger in a
// temporary directory, a real listener on a random loopback port and a real
// HTTP client, so tests exercise the API the way a client does.
package quiretest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"quire/auth"
	"quire/node"
	"quire/outbound"
	"quire/ratelimit"
	"quire/storage"
)

// Server is a running node. It keeps no test after construction but the
// one its cleanup reports to: Do and DoHeaders never fail a test, they
// return a Response whose Err says what went wrong, so a request made in
// a subtest or a goroutine fails there, through the caller's own
// assertions, and never calls FailNow on a test that is not running it.
type Server struct {
	t       testing.TB // only for Close, which runs as t's cleanup
	Node    *node.Node
	URL     string
	DataDir string
	Client  *http.Client
}

// Config is what a test server starts with: the node's configuration and
// what quiretest does once it runs.
type Config struct {
	node.Config
	// DefaultProcessing keeps the site's production default processing
	// (OCR then FULLTEXT on every document created without actions; API.md
	// "Default processing"). Without it a single server's default site is
	// set to `processing.defaultActions: []` once the server runs, through
	// the API as an administrator would, so tests not about processing do
	// not pay for a pipeline run per document (issue 45: a fifth to a
	// quarter of a package's CPU). Cluster members are left as configured:
	// a cluster's tests set it once the cluster has a leader.
	DefaultProcessing bool
}

// Option changes the config before the node opens.
type Option func(*Config)

// DefaultProcessing keeps the production default processing (Config).
func DefaultProcessing(c *Config) { c.DefaultProcessing = true }

// AllowLoopbackOutbound lets destinations users give (webhook urls, a
// site's SMTP host and LLM url) reach loopback, where tests run their
// receivers. The outbound policy refuses loopback by default; a test
// that calls a receiver on 127.0.0.1 says so with this option.
func AllowLoopbackOutbound(c *Config) {
	p, err := outbound.New([]string{"127.0.0.0/8", "::1/128"}, nil)
	if err != nil {
		panic(err) // constant input
	}
	c.Outbound = p
}

// NoRateLimits are rate limits no test reaches, for every class.
func NoRateLimits() map[string]string {
	m := map[string]string{}
	for _, c := range ratelimit.Classes {
		m[c.Name] = "1000000/s burst 1000000, global 1000000/s burst 1000000"
	}
	return m
}

// RateLimits sets the rate limits of the listed classes (the others stay
// out of the way).
func RateLimits(specs map[string]string) Option {
	return func(c *Config) {
		for k, v := range specs {
			c.RateLimit[k] = v
		}
	}
}

// NewServer starts a node on 127.0.0.1:0 with data in a temporary
// directory, and stops it when the test ends.
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	dir := t.TempDir()
	return StartServer(t, dir, opts...)
}

// StartServer starts a node on an existing data dir (to test restarts).
func StartServer(t testing.TB, dir string, opts ...Option) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	url := "http://" + ln.Addr().String()
	cfg := Config{Config: node.Config{
		Listen:    ln.Addr().String(),
		DataDir:   dir,
		PublicURL: url,
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		// The smallest reserve a configuration may set, not the 1 GiB or
		// 2% default: a test machine's disk may be nearly full.
		MinFreeBytes:   int64(storage.MinReserve()),
		MinFreePercent: -1,
		// Tests send many requests from one address: rate limits are out
		// of the way unless a test sets them (RateLimits).
		RateLimit: NoRateLimits(),
	}}
	for _, o := range opts {
		o(&cfg)
	}
	n, err := node.Open(cfg.Config)
	if err != nil {
		ln.Close()
		t.Fatalf("open node: %v", err)
	}
	if err := n.Start(ln); err != nil {
		t.Fatalf("start node: %v", err)
	}
	s := &Server{t: t, Node: n, URL: url, DataDir: dir, Client: &http.Client{Timeout: 60 * time.Second}}
	t.Cleanup(s.Close)
	if !cfg.DefaultProcessing && cfg.Cluster.NodeID == "" {
		s.noDefaultProcessing(t)
	}
	return s
}

// noDefaultProcessing is NoDefaultProcessing for a single server, applied
// to its store as the PATCH's command would be: requests of its own would
// hold connections a test counts (a per-client connection cap) and would
// need the test's TLS settings.
func (s *Server) noDefaultProcessing(t testing.TB) {
	t.Helper()
	cur, err := s.Node.DB.SiteConfig("default")
	if err != nil {
		t.Fatalf("read the default site's configuration: %v", err)
	}
	var next storage.SiteConfig
	if cur != nil {
		if cur.Processing != nil {
			return
		}
		next = *cur
	}
	next.Processing = &storage.ProcessingConfig{DefaultActions: &[]string{}}
	c, err := storage.NewCommand(storage.OpSetSiteConfig, "default", "quiretest", time.Now(), next)
	if err == nil {
		_, err = s.Node.DB.Apply(context.Background(), c)
	}
	if err != nil {
		t.Fatalf("turn the default site's default processing off: %v", err)
	}
}

// NoDefaultProcessing sets the default site's processing.defaultActions to
// none (Config.DefaultProcessing), unless the site already says what its
// processing is (a restart on a data dir a test configured). A cluster's
// test calls it on the leader.
func (s *Server) NoDefaultProcessing(t testing.TB) {
	t.Helper()
	const path = "/sites/default/configuration"
	r := s.Do(http.MethodGet, path, nil, s.Admin())
	if r.Err != nil || r.Status != http.StatusOK {
		t.Fatalf("read the default site's configuration: %d %s %v", r.Status, r.Body, r.Err)
	}
	var got struct {
		Processing json.RawMessage `json:"processing"`
	}
	if err := json.Unmarshal(r.Body, &got); err != nil {
		t.Fatalf("the default site's configuration: %v: %s", err, r.Body)
	}
	if len(got.Processing) > 0 && string(got.Processing) != "null" {
		return
	}
	body := map[string]any{"processing": map[string]any{"defaultActions": []string{}}}
	if r := s.Do(http.MethodPatch, path, body, s.Admin()); r.Err != nil || r.Status != http.StatusOK {
		t.Fatalf("turn the default site's default processing off: %d %s %v", r.Status, r.Body, r.Err)
	}
}

// Close stops the node (idempotent).
func (s *Server) Close() {
	if s.Node == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Node.Close(ctx); err != nil {
		s.t.Errorf("close node: %v", err) // Errorf: safe from any goroutine
	}
	s.Node = nil
}

// Token returns a token for user in groups, signed by the node's key. It
// may be called from any goroutine: should signing fail, it reports the
// error with Errorf (never FailNow) and returns a token the server
// refuses, so the caller's status assertion fails too.
func (s *Server) Token(user string, groups ...string) string {
	tok, err := auth.SignToken(s.DataDir, "", user, groups, time.Hour)
	if err != nil {
		s.t.Errorf("sign token for %s: %v", user, err)
		return "unsigned-token"
	}
	return tok
}

// TokenWithClaims is Token with extra claims (custom:email, for one).
func (s *Server) TokenWithClaims(user string, claims map[string]any, groups ...string) string {
	tok, err := auth.SignTokenClaims(s.DataDir, "", user, groups, time.Hour, claims)
	if err != nil {
		s.t.Errorf("sign token for %s: %v", user, err)
		return "unsigned-token"
	}
	return tok
}

// Admin returns a token of an Admins member.
func (s *Server) Admin() string { return s.Token("admin", "Admins") }

// Response is a finished HTTP exchange, or one that could not finish:
// then Status is 0, Err is why and Body holds Err's text, so an assertion
// on the status fails in the caller's test and prints the reason.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	Err    error
}

// JSON decodes the body into a map, failing t (the caller's) when the
// request did not finish or the body is not a JSON object.
func (r *Response) JSON(t testing.TB) map[string]any {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("request failed: %v", r.Err)
	}
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("decode %q: %v", r.Body, err)
	}
	return m
}

// failed is the Response of an exchange that did not finish.
func failed(err error) *Response {
	return &Response{Header: http.Header{}, Body: []byte(err.Error()), Err: err}
}

// Do sends a request with an optional body (string, []byte, io.Reader or a
// value encoded as JSON) and token. It never fails a test: see Response.
func (s *Server) Do(method, path string, body any, token string) *Response {
	return s.DoHeaders(method, path, body, token, nil)
}

// DoHeaders is Do with extra request headers.
func (s *Server) DoHeaders(method, path string, body any, token string, headers map[string]string) *Response {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	case io.Reader:
		rd = b
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			return failed(fmt.Errorf("encode body: %w", err))
		}
		rd = bytes.NewReader(enc)
	}
	u := path
	if !strings.HasPrefix(path, "http") {
		u = s.URL + path
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		return failed(fmt.Errorf("new request: %w", err))
	}
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := s.Client.Do(req)
	if err != nil {
		return failed(fmt.Errorf("%s %s: %w", method, path, err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return failed(fmt.Errorf("%s %s: read body: %w", method, path, err))
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}
