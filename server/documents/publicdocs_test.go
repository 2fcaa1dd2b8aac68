package documents_test

import (
	"net/http"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

func TestPublicDocuments(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	doc := map[string]any{"path": "inbox/form.txt", "content": "from the web form", "tags": []map[string]any{{"key": "source", "value": "web"}}}
	servertest.MustStatus(t, s.Do(http.MethodPost, "/public/documents", doc, ""), http.StatusNotFound)

	for _, tt := range []struct {
		name   string
		body   any
		status int
	}{
		{"negative rate", map[string]any{"publicDocuments": map[string]any{"enabled": true, "perClientPerMinute": -1}}, 400},
		{"enable", map[string]any{"publicDocuments": map[string]any{"enabled": true, "perClientPerMinute": 7}}, 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			servertest.MustStatus(t, s.Do(http.MethodPatch, "/sites/default/configuration", tt.body, admin), tt.status)
		})
	}
	for _, tt := range []struct {
		name   string
		body   any
		status int
	}{
		{"actions", map[string]any{"content": "x", "actions": []map[string]any{{"type": "WEBHOOK", "parameters": map[string]any{"url": "http://127.0.0.1/"}}}}, 400},
		{"child actions", map[string]any{"content": "x", "documents": []map[string]any{{"content": "y", "actions": []map[string]any{{"type": "FULLTEXT"}}}}}, 400},
		{"no content", map[string]any{"path": "a.txt"}, 400},
		{"artifacts", map[string]any{"content": "x", "artifacts": true, "documentId": "6f1c1e55-1111-4222-8333-444455556666"}, 400},
	} {
		t.Run(tt.name, func(t *testing.T) {
			servertest.MustStatus(t, s.Do(http.MethodPost, "/public/documents", tt.body, ""), tt.status)
		})
	}
	// Every request counts, refused ones too: 4 above, 3 more accepted.
	var ids []string
	for range 3 {
		r := s.Do(http.MethodPost, "/public/documents", doc, "")
		servertest.MustStatus(t, r, http.StatusCreated)
		ids = append(ids, quiretest.Str(t, r.JSON(t), "documentId"))
	}
	r := s.Do(http.MethodPost, "/public/documents", doc, "")
	servertest.MustStatus(t, r, http.StatusTooManyRequests)
	if r.Header.Get("Retry-After") == "" {
		t.Error("no Retry-After on a 429")
	}
	r = s.Do(http.MethodGet, "/documents/"+ids[0], nil, admin)
	servertest.MustStatus(t, r, http.StatusOK)
	if m := r.JSON(t); quiretest.Str(t, m, "userId") != "public" || quiretest.Str(t, m, "path") != "inbox/form.txt" {
		t.Errorf("public document %v", m)
	}
	// Another site is not enabled by the default site's setting.
	servertest.MustStatus(t, s.Do(http.MethodPost, "/public/documents?siteId=finance", doc, ""), http.StatusNotFound)
	servertest.MustStatus(t, s.Do(http.MethodPatch, "/sites/finance/configuration", map[string]any{"publicDocuments": map[string]any{"enabled": true}}, admin), http.StatusOK)
	servertest.MustStatus(t, s.Do(http.MethodPost, "/public/documents?siteId=finance", doc, ""), http.StatusCreated)
}
