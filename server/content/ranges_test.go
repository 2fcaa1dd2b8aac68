package content_test

import (
	"bytes"
	"net/http"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// TestDownloads_HostileRanges: Range headers at and past the int64 edges
// are answered (whole content, a clamped part or 416), never with a 5xx or
// a wrong slice.
func TestDownloads_HostileRanges(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	content := []byte("0123456789")
	id := servertest.AddDoc(t, s, tok, "", map[string]any{"content": string(content), "path": "r.txt", "contentType": "text/plain"})
	r := s.Do(http.MethodGet, "/documents/"+id+"/url", nil, tok)
	servertest.MustStatus(t, r, http.StatusOK)
	u, _ := r.JSON(t)["url"].(string)
	if u == "" {
		t.Fatalf("no url: %s", r.Body)
	}
	cases := []struct {
		rng    string
		status int
		body   []byte // nil: not checked
	}{
		{"bytes=2-4", http.StatusPartialContent, content[2:5]},
		{"bytes=0-9223372036854775807", http.StatusPartialContent, content},
		{"bytes=8-9223372036854775806", http.StatusPartialContent, content[8:]},
		{"bytes=-9223372036854775807", http.StatusPartialContent, content},
		{"bytes=-3", http.StatusPartialContent, content[7:]},
		{"bytes=9223372036854775807-", http.StatusRequestedRangeNotSatisfiable, nil},
		{"bytes=99999999999999999999-", http.StatusRequestedRangeNotSatisfiable, nil},
		{"bytes=5-2", http.StatusRequestedRangeNotSatisfiable, nil},
	}
	for _, c := range cases {
		t.Run(c.rng, func(t *testing.T) {
			got := s.DoHeaders(http.MethodGet, u, nil, "", map[string]string{"Range": c.rng})
			servertest.MustStatus(t, got, c.status)
			if c.body != nil && !bytes.Equal(got.Body, c.body) {
				t.Fatalf("body %q, want %q", got.Body, c.body)
			}
		})
	}
}
