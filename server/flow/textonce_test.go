package flow_test

import (
	"net/http"
	"strings"
	"testing"

	"quire/server/internal/servertest"
	"quire/storage"
)

// TestFulltext_PlainTextStoredOnce: FULLTEXT of a plain-text document
// does not store the content's text a second time: its text record names
// the content (from, bytes) and holds no text, while GET .../fulltext and
// search give the text as before, whole or cut at characterMax.
func TestFulltext_PlainTextStoredOnce(t *testing.T) {
	s := servertest.PipelineServer(t)
	tok := s.Admin()
	content := strings.Repeat("Zebracorn ledger of the quarterly stapler audit, Straße 4711. ", 400) // 25 KB
	tests := []struct {
		name  string
		max   string
		want  string
		bytes int64
	}{
		{"whole", "-1", content, int64(len(content))},
		{"cut at characterMax", "40", content[:40], 40},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id := servertest.AddDoc(t, s, tok, "", map[string]any{"path": "ledger-" + tc.max + ".txt", "contentType": "text/plain", "content": content,
				"actions": []map[string]any{{"type": "FULLTEXT", "parameters": map[string]any{"characterMax": tc.max}}}})
			if st := servertest.WaitActions(t, s, tok, "", id); len(st) != 1 || st[0] != "COMPLETE" {
				t.Fatalf("FULLTEXT: %v", st)
			}
			tr, err := s.Node.DB.StoredText("default", id, storage.TextFulltext)
			if err != nil || tr == nil {
				t.Fatalf("no FULLTEXT record: %v", err)
			}
			if tr.Text != "" || tr.From != storage.TextFromContent || tr.Bytes != tc.bytes {
				t.Fatalf("stored FULLTEXT record holds %d bytes of text (from %q, bytes %d), want none, from content, %d", len(tr.Text), tr.From, tr.Bytes, tc.bytes)
			}
			ft := s.Do(http.MethodGet, "/documents/"+id+"/fulltext", nil, tok)
			servertest.MustStatus(t, ft, http.StatusOK)
			if got, _ := ft.JSON(t)["content"].(string); got != tc.want {
				t.Fatalf("GET /fulltext content: %d bytes %.60q, want %d bytes", len(got), got, len(tc.want))
			}
		})
	}
	servertest.WaitIndexed(t, s)
	r := s.Do(http.MethodPost, "/search", map[string]any{"query": map[string]any{"text": "stapler"}}, tok)
	servertest.MustStatus(t, r, http.StatusOK)
	if strings.Count(string(r.Body), `"documentId"`) < 2 {
		t.Fatalf("search does not find both ledgers: %s", r.Body)
	}
}
