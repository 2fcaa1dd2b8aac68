package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"quire/quiretest"
)

// TestReindex rebuilds a data dir's index offline and checks a search
// finds what storage holds.
func TestReindex(t *testing.T) {
	dir := t.TempDir()
	s := quiretest.StartServer(t, dir)
	tok := s.Admin()
	for i := 0; i < 25; i++ {
		r := s.Do(http.MethodPost, "/documents", map[string]any{"path": fmt.Sprintf("ledger/entry-%02d.txt", i), "contentType": "text/plain", "content": fmt.Sprintf("ledger line %d zebra", i)}, tok)
		if r.Status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
	}
	s.Close()
	var out, errb bytes.Buffer
	if code := Main([]string{"reindex", "--data-dir", dir}, &out, &errb); code != 0 || !strings.Contains(errb.String(), "reindexed 25 documents") || !strings.Contains(errb.String(), "reindex: 100% (25/25)") {
		t.Fatalf("reindex: code %d, stderr %q", code, errb.String())
	}
	s = quiretest.StartServer(t, dir)
	defer s.Close()
	tok = s.Admin()
	for _, q := range []map[string]any{
		{"filename": map[string]any{"beginsWith": "entry-1"}},
		{"text": "zebra"},
	} {
		r := s.Do(http.MethodPost, "/search?limit=100", map[string]any{"query": q}, tok)
		var res struct{ Documents []map[string]any }
		json.Unmarshal(r.Body, &res)
		want := 10
		if q["text"] != nil {
			want = 25
		}
		if r.Status != http.StatusOK || len(res.Documents) != want {
			t.Fatalf("after reindex %v: %d results (%d %s), want %d", q, len(res.Documents), r.Status, r.Body, want)
		}
	}
	// A running server holds the store: reindex refuses, the server stays.
	if code := Main([]string{"reindex", "--data-dir", dir}, &out, &errb); code != 1 {
		t.Fatalf("reindex against a running server: code %d", code)
	}
}
