package search_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// TestQueryFulltext_Limits: query strings that would expand to every word
// of the index or to thousands of clauses are refused with a 400 naming
// the limit; ordinary ones, and "*" (every document), still answer.
func TestQueryFulltext_Limits(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	words := make([]string, 6000)
	for i := range words {
		words[i] = fmt.Sprintf("w%05d", i)
	}
	servertest.AddDoc(t, s, tok, "", map[string]any{"path": "many-words.txt", "contentType": "text/plain", "content": strings.Join(words, " ")})
	query := func(qs string) *quiretest.Response {
		return s.Do(http.MethodPost, "/queryFulltext", map[string]any{"query": map[string]any{"query_string": map[string]any{"query": qs}}}, tok)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(string(query("w05999").Body), "many-words.txt") {
		if time.Now().After(deadline) {
			t.Fatal("document not indexed within 30s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	many := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "x%d ", i)
		}
		return b.String()
	}
	for _, tc := range []struct {
		name, qs string
		status   int
		want     string
	}{
		{"wildcard over every word", "w*", 400, "matches more than 4096 words"},
		{"leading wildcard", "*0*", 400, "matches more than 4096 words"},
		{"regular expression over every word", "/w.*/", 400, "matches more than 4096 words"},
		{"too many clauses", many(300), 400, "the query has more than 256 clauses"},
		{"too long", strings.Repeat("a", 5000), 400, "the query is longer than 4096 bytes"},
		{"long regular expression", "/" + strings.Repeat("(a|b)", 60) + "/", 400, "a regular expression is longer than 256 bytes"},
		{"bad regular expression", "/(/", 400, "invalid query"},
		{"narrow wildcard", "w0599*", 200, "many-words.txt"},
		{"fuzzy", "w05998~1", 200, "many-words.txt"},
		{"every document", "*", 200, "many-words.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			r := query(tc.qs)
			if r.Status != tc.status || !strings.Contains(string(r.Body), tc.want) {
				t.Fatalf("status %d %s, want %d with %q", r.Status, r.Body, tc.status, tc.want)
			}
			if tc.status == 400 && !strings.Contains(string(r.Body), `"key":"query"`) {
				t.Fatalf("answer %s", r.Body)
			}
			if took := time.Since(start); took > 15*time.Second {
				t.Fatalf("took %s", took)
			}
		})
	}
	// Plain text (the console's match on every field, /searchFulltext's
	// text) has the same bounds: each word may expand to the words it
	// begins.
	for _, tc := range []struct {
		name, path string
		body       map[string]any
		want       string
	}{
		{"match, too many words", "/queryFulltext", map[string]any{"query": map[string]any{"match": map[string]any{"_all": many(300)}}}, "the query has 300 words; at most 256"},
		{"match, too long", "/queryFulltext", map[string]any{"query": map[string]any{"match": map[string]any{"_all": strings.Repeat("a", 5000)}}}, "the query is longer than 4096 bytes"},
		{"searchFulltext text, too many words", "/searchFulltext", map[string]any{"query": map[string]any{"text": many(300)}}, "the query has 300 words; at most 256"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.Do(http.MethodPost, tc.path, tc.body, tok)
			if r.Status != 400 || !strings.Contains(string(r.Body), tc.want) || !strings.Contains(string(r.Body), `"key":"query"`) {
				t.Fatalf("status %d %s, want 400 with %q", r.Status, r.Body, tc.want)
			}
		})
	}
}
