package servertest

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// RawDo sends one request with c and reads the answer.
func RawDo(t *testing.T, c *http.Client, method, url, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// ClientFrom is an HTTP client whose connections come from the loopback
// address ip, so the server sees another client.
func ClientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	return &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 64}}
}

// RegexpSession reads the Session of a challenge answer.
func RegexpSession(t *testing.T, body string) string {
	t.Helper()
	_, rest, ok := strings.Cut(body, `"Session":"`)
	if !ok {
		t.Fatalf("no Session in %s", body)
	}
	session, _, _ := strings.Cut(rest, `"`)
	return session
}
