package server_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// TestJSON_URLsAreNotHTMLEscaped checks that every answer that hands out
// a URL writes '&' as '&' (encoding/json's default is \u0026), so that a
// URL pasted from the raw answer works, as FormKiQ's answers read.
func TestJSON_URLsAreNotHTMLEscaped(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	doc := servertest.AddDoc(t, s, tok, "", map[string]any{"path": "esc/a&b <c>.txt", "content": "pasted"})
	for _, tt := range []struct {
		name, method, path string
		body               any
		field              string
	}{
		{"upload URL", http.MethodPost, "/documents/upload", map[string]any{"path": "esc/up.txt"}, "url"},
		{"upload URL (GET)", http.MethodGet, "/documents/upload?path=esc/get.txt&contentLength=3", nil, "url"},
		{"download URL", http.MethodGet, "/documents/" + doc + "/url", nil, "url"},
		{"compress downloadUrl", http.MethodPost, "/documents/compress", map[string]any{"documentIds": []string{doc}}, "downloadUrl"},
		{"short link", http.MethodPost, "/shortlinks", map[string]any{"targetUrl": "https://example.com/a?b=1&c=2", "slug": "esc-link"}, "url"},
		{"document path", http.MethodGet, "/documents/" + doc, nil, "path"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(tt.method, tt.path, tt.body, tok)
			if r.Status/100 != 2 {
				t.Fatalf("%s %s: %d %s", tt.method, tt.path, r.Status, r.Body)
			}
			for _, esc := range []string{`\u0026`, `\u003c`, `\u003e`} {
				if bytes.Contains(r.Body, []byte(esc)) {
					t.Fatalf("answer holds %s: %s", esc, r.Body)
				}
			}
			v := quiretest.Str(t, r.JSON(t), tt.field)
			if tt.field != "path" && !strings.Contains(v, "&") && tt.name != "short link" {
				t.Fatalf("%s = %q: want a URL with a query", tt.field, v)
			}
			if !bytes.Contains(r.Body, []byte(v)) {
				t.Fatalf("the raw answer does not hold %s as decoded (%q): %s", tt.field, v, r.Body)
			}
		})
	}
	// A URL taken verbatim from the raw answer (as a person copies it
	// into curl) downloads the document.
	raw := s.Do(http.MethodGet, "/documents/"+doc+"/url", nil, tok).Body
	i := bytes.Index(raw, []byte(`"url":"`))
	if i < 0 {
		t.Fatalf("no url in %s", raw)
	}
	u := raw[i+len(`"url":"`):]
	if j := bytes.IndexByte(u, '"'); j >= 0 {
		u = u[:j]
	}
	if got := string(servertest.FetchBody(t, string(u))); got != "pasted" {
		t.Fatalf("the pasted URL gave %q", got)
	}
}
