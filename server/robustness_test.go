package server_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// TestLogs_Redacted checks that request logs hold no token, no content, no
// query strings (signed URLs) and no document names.
func TestLogs_Redacted(t *testing.T) {
	var mu sync.Mutex
	var buf bytes.Buffer
	s := quiretest.NewServer(t, func(c *quiretest.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&lockedWriter{mu: &mu, w: &buf}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	tok := s.Admin()
	secret := "TOP-SECRET-CONTENT-4711"
	r := s.Do(http.MethodPost, "/documents/upload", map[string]any{"path": "private/salaries.xlsx"}, tok)
	servertest.MustStatus(t, r, http.StatusCreated)
	u := quiretest.Str(t, r.JSON(t), "url")
	servertest.MustStatus(t, servertest.Put(s, u, secret), http.StatusOK)
	servertest.AddDoc(t, s, tok, "", map[string]any{"content": secret, "path": "private/other.txt"})
	servertest.MustStatus(t, s.Do(http.MethodGet, "/documents", nil, "Bearer "+tok), http.StatusOK)
	servertest.MustStatus(t, s.Do(http.MethodGet, "/documents", nil, "forged."+tok[10:]), http.StatusUnauthorized)
	mu.Lock()
	logs := buf.String()
	mu.Unlock()
	if !strings.Contains(logs, `"route":"/documents"`) {
		t.Fatalf("no access log lines: %s", logs)
	}
	sig := u[strings.Index(u, "signature=")+10:]
	for _, leak := range []string{tok, tok[len(tok)-20:], secret, "salaries", sig, "Authorization"} {
		if strings.Contains(logs, leak) {
			t.Fatalf("logs contain %q:\n%s", leak, logs)
		}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestLimits_OversizeBodies(t *testing.T) {
	s := quiretest.NewServer(t, func(c *quiretest.Config) { c.MaxUploadBytes = 1 << 20 })
	tok := s.Admin()
	big := `{"content":"` + strings.Repeat("A", 17<<20) + `"}`
	r := s.Do(http.MethodPost, "/documents", big, tok)
	servertest.MustStatus(t, r, http.StatusBadRequest)
	servertest.MustBody(t, r, `{"message":"Request body too large"}`)
	inline := `{"content":"` + strings.Repeat("A", 5*1000*1000) + `"}`
	r = s.Do(http.MethodPost, "/documents", inline, tok)
	servertest.MustStatus(t, r, http.StatusBadRequest)
	servertest.MustBody(t, r, `{"errors":[{"key":"content","error":"'content' must be less than 5 MB, use POST /documents/upload"}]}`)
	up := s.Do(http.MethodPost, "/documents/upload", map[string]any{}, tok).JSON(t)
	r = servertest.Put(s, quiretest.Str(t, up, "url"), strings.Repeat("B", 2<<20))
	servertest.MustStatus(t, r, http.StatusBadRequest)
	if d := s.Do(http.MethodGet, "/documents/"+quiretest.Str(t, up, "documentId"), nil, tok).JSON(t); d["contentLength"] != nil {
		t.Fatalf("oversize upload stored content: %v", d)
	}
	v := s.Do(http.MethodGet, "/documents/upload?contentLength=2000000", nil, tok)
	servertest.MustStatus(t, v, http.StatusBadRequest)
	servertest.MustBody(t, v, `{"message":"'contentLength' cannot exceed 1048576 bytes"}`)
	if l := quiretest.List(t, s.Do(http.MethodGet, "/documents", nil, tok).JSON(t), "documents"); len(l) != 1 {
		t.Fatalf("documents after oversize requests = %d, want only the upload's record", len(l))
	}
}

// TestShutdown_UnusedConnections: connections that were opened but never
// sent a request (HTTP clients keep spare ones) must not hold up shutdown,
// while a request in flight still completes.
func TestShutdown_UnusedConnections(t *testing.T) {
	s := quiretest.NewServer(t)
	addr := strings.TrimPrefix(s.URL, "http://")
	var idle []net.Conn
	for i := 0; i < 3; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		idle = append(idle, c)
	}
	// A used keep-alive connection as well.
	servertest.MustStatus(t, s.Do(http.MethodGet, "/version", nil, s.Admin()), http.StatusOK)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Node.Close(ctx); err != nil {
		t.Fatalf("shutdown with unused connections: %v", err)
	}
	s.Node = nil
	for i, c := range idle {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Errorf("unused connection %d still open after shutdown", i)
		}
	}
}

// TestUnreadBodies_NoConnectionReset sends large bodies to requests that
// are answered without reading them (no token, a route that takes no
// body, an unknown route): the client must get the answer, not a reset.
func TestUnreadBodies_NoConnectionReset(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	id := servertest.AddDoc(t, s, tok, "", map[string]any{"content": "x"})
	body := strings.Repeat("A", 4<<20)
	cases := []struct {
		name, method, path, tok string
		want                    int
	}{
		{"no token", "POST", "/documents", "", http.StatusUnauthorized},
		{"body ignored", "PUT", "/documents/" + id + "/malwareScan", tok, http.StatusOK},
		{"unknown route", "PUT", "/nothing-here", tok, http.StatusNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for i := 0; i < 5; i++ {
				r := s.DoHeaders(tc.method, tc.path, body, tc.tok, map[string]string{"Content-Type": "application/json"})
				if r.Status != tc.want {
					t.Fatalf("attempt %d: status %d, want %d: %s", i, r.Status, tc.want, r.Body)
				}
			}
		})
	}
}

// TestShutdown_InFlightUploadCompletes: a shutdown that begins while an
// upload streams in waits for it; the upload is acknowledged and stored,
// and new connections are refused meanwhile.
func TestShutdown_InFlightUploadCompletes(t *testing.T) {
	dir := t.TempDir()
	s := quiretest.StartServer(t, dir)
	tok := s.Admin()
	r := s.Do(http.MethodPost, "/documents/upload", map[string]any{"path": "slow.bin"}, tok)
	servertest.MustStatus(t, r, http.StatusCreated)
	m := r.JSON(t)
	id, u := quiretest.Str(t, m, "documentId"), quiretest.Str(t, m, "url")
	pr, pw := io.Pipe()
	req, _ := http.NewRequest(http.MethodPut, u, pr)
	req.ContentLength = 3 << 20
	done := make(chan *http.Response, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("upload: %v", err)
		}
		done <- resp
	}()
	chunk := bytes.Repeat([]byte("q"), 1<<20)
	pw.Write(chunk)
	// Shutdown closes connections that have not sent a byte: start it only
	// once the upload is a request in flight (the scrape itself is the other).
	waitInFlight(t, s, 2)
	closed := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		closed <- s.Node.Close(ctx)
	}()
	// The listener closes while the upload is still in flight (its body is
	// not all sent): new connections are refused before the deadline.
	addr := strings.TrimPrefix(s.URL, "http://")
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("new connections still accepted 10s into the shutdown")
		}
		time.Sleep(10 * time.Millisecond)
	}
	pw.Write(chunk)
	time.Sleep(100 * time.Millisecond)
	pw.Write(chunk)
	pw.Close()
	resp := <-done
	if resp == nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("in-flight upload during shutdown: %v", resp)
	}
	resp.Body.Close()
	if err := <-closed; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	s.Node = nil
	s2 := quiretest.StartServer(t, dir)
	got := s2.Do(http.MethodGet, "/documents/"+id, nil, tok).JSON(t)
	if got["contentLength"] != float64(3<<20) {
		t.Fatalf("after restart: %v", got)
	}
}

// TestRequestID: every answer carries X-Request-Id and the access log line
// has the same id; a sane id from a proxy is kept, an odd one replaced.
func TestRequestID(t *testing.T) {
	var mu sync.Mutex
	var buf bytes.Buffer
	s := quiretest.NewServer(t, func(c *quiretest.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&lockedWriter{mu: &mu, w: &buf}, nil))
	})
	tests := []struct {
		name, sent string
		keep       bool
	}{
		{"none", "", false},
		{"from a proxy", "proxy-4f2a9c1e-77", true},
		{"log injection", `abc def" level=ERROR msg="forged`, false},
		{"too short", "abc", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := map[string]string{}
			if tt.sent != "" {
				h["X-Request-Id"] = tt.sent
			}
			r := s.DoHeaders(http.MethodGet, "/healthz", nil, "", h)
			id := r.Header.Get("X-Request-Id")
			if !regexp.MustCompile(`^[A-Za-z0-9._-]{8,64}$`).MatchString(id) || (id == tt.sent) != tt.keep {
				t.Fatalf("X-Request-Id %q for %q", id, tt.sent)
			}
			mu.Lock()
			logs := buf.String()
			mu.Unlock()
			if !strings.Contains(logs, `"requestId":"`+id+`"`) {
				t.Fatalf("no log line with request id %s", id)
			}
		})
	}
}

// waitInFlight waits until the server counts at least n requests in flight.
func waitInFlight(t *testing.T, s *quiretest.Server, n int) {
	t.Helper()
	re := regexp.MustCompile(`(?m)^quire_http_requests_in_flight (\d+)`)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		r := s.Do(http.MethodGet, "/metrics", nil, "")
		if m := re.FindStringSubmatch(string(r.Body)); m != nil {
			if got, _ := strconv.Atoi(m[1]); got >= n {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("fewer than %d requests in flight after 20s", n)
}
