package servertest

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"quire/quiretest"
)

// Dial opens a raw TCP connection to the test server, from local (an
// address on the loopback, "" for any).
func Dial(t *testing.T, s *quiretest.Server, local string) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second}
	if local != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(local)}
	}
	c, err := d.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// NewUpload creates a document and returns its id and the request URI of
// its upload URL.
func NewUpload(t *testing.T, s *quiretest.Server, tok string) (string, string) {
	t.Helper()
	r := s.Do(http.MethodPost, "/documents/upload", map[string]any{"path": "cut.bin"}, tok)
	MustStatus(t, r, http.StatusCreated)
	m := r.JSON(t)
	u, err := url.Parse(fmt.Sprint(m["url"]))
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(m["documentId"]), u.RequestURI()
}

// UploadPuts is how many PUTs to upload URLs the server has answered
// (from its request metrics).
func UploadPuts(t *testing.T, s *quiretest.Server) int {
	t.Helper()
	return RouteRequests(t, s, "PUT", "/uploads/:siteId/:documentId")
}

// RouteRequests is how many requests of method to route the server has
// answered (quire_http_requests_total, every status).
func RouteRequests(t *testing.T, s *quiretest.Server, method, route string) int {
	t.Helper()
	r := s.Do(http.MethodGet, "/metrics", nil, "")
	n := 0
	for _, line := range strings.Split(string(r.Body), "\n") {
		if strings.HasPrefix(line, `quire_http_requests_total{method="`+method+`",route="`+route+`"`) {
			var v int
			fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &v)
			n += v
		}
	}
	return n
}

// WaitUploadPuts waits until the server has answered want PUTs to upload
// URLs: a handler cut off by its client finishes after the client left.
func WaitUploadPuts(t *testing.T, s *quiretest.Server, want int) {
	t.Helper()
	WaitRouteRequests(t, s, "PUT", "/uploads/:siteId/:documentId", want)
}

// WaitRouteRequests waits until the server has answered want requests of
// method to route.
func WaitRouteRequests(t *testing.T, s *quiretest.Server, method, route string, want int) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if RouteRequests(t, s, method, route) >= want {
			return
		}
	}
	t.Fatalf("the server did not answer %d %s %s within 10 s", want, method, route)
}
