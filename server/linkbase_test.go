package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// TestLinks_FromTheRequestsHost: without a public URL, the links in
// answers start with the request's Host when it names this machine on the
// listener's port, and with the address the client connected to when it
// does not (a forged Host cannot send an upload elsewhere). The links
// work.
func TestLinks_FromTheRequestsHost(t *testing.T) {
	s := quiretest.NewServer(t, func(c *quiretest.Config) { c.PublicURL = "" })
	tok := s.Admin()
	addr := strings.TrimPrefix(s.URL, "http://")
	_, port, _ := net.SplitHostPort(addr)
	do := func(t *testing.T, method, path, host string, body any) (int, map[string]any) {
		t.Helper()
		b, _ := json.Marshal(body)
		req, err := http.NewRequest(method, s.URL+path, bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		req.Header.Set("Authorization", tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
		}
		return resp.StatusCode, m
	}
	for _, tt := range []struct {
		name, host, wantBase string
	}{
		{"the listener's address", addr, "http://" + addr},
		{"localhost on a loopback listener", "localhost:" + port, "http://localhost:" + port},
		{"upper case is the same name", "LOCALHOST:" + port, "http://localhost:" + port},
		{"a forged name", "uploads.attacker.example:" + port, "http://" + addr},
		{"a forged name without a port", "uploads.attacker.example", "http://" + addr},
		{"another port", "localhost:1", "http://" + addr},
		{"another loopback address", "127.0.0.2:" + port, "http://" + addr},
		{"userinfo", "x@evil:" + port, "http://" + addr},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st, up := do(t, http.MethodPost, "/documents/upload", tt.host, map[string]any{"path": "links/" + tt.name + ".txt"})
			if st != http.StatusCreated {
				t.Fatalf("upload: %d %v", st, up)
			}
			u, _ := up["url"].(string)
			if !strings.HasPrefix(u, tt.wantBase+"/uploads/") {
				t.Fatalf("upload url %q, want it under %s", u, tt.wantBase)
			}
			put, err := http.NewRequest(http.MethodPut, u, strings.NewReader("via "+tt.name))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(put)
			if err != nil {
				t.Fatalf("PUT %s: %v", u, err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("PUT %s: %d", u, resp.StatusCode)
			}
			id, _ := up["documentId"].(string)
			st, dl := do(t, http.MethodGet, "/documents/"+id+"/url", tt.host, nil)
			d, _ := dl["url"].(string)
			if st != http.StatusOK || !strings.HasPrefix(d, tt.wantBase+"/downloads/") {
				t.Fatalf("download url: %d %v, want it under %s", st, dl, tt.wantBase)
			}
			if got := string(servertest.FetchBody(t, d)); got != "via "+tt.name {
				t.Fatalf("downloaded %q", got)
			}
		})
	}
}
