package search_test

import (
	"net/http"
	"reflect"
	"testing"
	"time"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// fulltextHits polls /searchFulltext until it finds want documents for
// text (the index may lag a second), and returns the last answer's count.
func fulltextHits(t *testing.T, s *quiretest.Server, tok, site string, query map[string]any, want int) int {
	t.Helper()
	n := -1
	for deadline := time.Now().Add(10 * time.Second); ; {
		r := s.Do(http.MethodPost, "/searchFulltext"+site, map[string]any{"query": query}, tok)
		servertest.MustStatus(t, r, http.StatusOK)
		if n = len(quiretest.List(t, r.JSON(t), "documents")); n == want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestFulltextWrites(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			id := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "ft/orig-name.txt", "contentType": "text/plain",
				"content": "alphaword original text", "tags": []map[string]any{{"key": "dept", "value": "hr"}}})
			ft := "/documents/" + id + "/fulltext" + site.Query
			if n := fulltextHits(t, s, tok, site.Query, map[string]any{"text": "alphaword"}, 1); n != 1 {
				t.Fatalf("original text not searchable: %d", n)
			}
			for _, tt := range []struct {
				name, method string
				body         any
				status       int
			}{
				{"path is the document's", "PUT", map[string]any{"content": "x", "path": "other.txt"}, 400},
				{"contentUrls refused", "PUT", map[string]any{"contentUrls": []string{"http://example.com/"}}, 400},
				{"neither content nor tags", "PUT", map[string]any{"contentType": "text/plain"}, 400},
				{"not text", "PUT", map[string]any{"content": "x", "contentType": "application/pdf"}, 400},
				{"set", "PUT", map[string]any{"content": "zebraword override", "tags": []map[string]any{{"key": "idx", "value": "only"}}}, 200},
			} {
				t.Run(tt.name, func(t *testing.T) { servertest.MustStatus(t, s.Do(tt.method, ft, tt.body, tok), tt.status) })
			}
			if n := fulltextHits(t, s, tok, site.Query, map[string]any{"text": "zebraword"}, 1); n != 1 {
				t.Errorf("the text set is not searchable: %d", n)
			}
			if n := fulltextHits(t, s, tok, site.Query, map[string]any{"text": "alphaword"}, 0); n != 0 {
				t.Errorf("the replaced text is still searchable: %d", n)
			}
			if n := fulltextHits(t, s, tok, site.Query, map[string]any{"text": "zebraword", "tags": []map[string]any{{"key": "idx", "eq": "only"}}}, 1); n != 1 {
				t.Errorf("the index's own tag does not filter: %d", n)
			}
			r := s.Do(http.MethodGet, ft, nil, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			if m := r.JSON(t); quiretest.Str(t, m, "content") != "zebraword override" || !reflect.DeepEqual(m["tags"], map[string]any{"idx": "only"}) {
				t.Errorf("GET fulltext: %s", r.Body)
			}
			r = s.Do(http.MethodGet, "/documents/"+id+"/tags/dept"+site.Query, nil, tok)
			servertest.MustStatus(t, r, http.StatusOK) // the document's own tags are untouched

			servertest.MustStatus(t, s.Do(http.MethodPatch, ft, map[string]any{"tags": []map[string]any{{"key": "more", "values": []string{"a", "b"}}}}, tok), http.StatusOK)
			servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+id+"/fulltext/tags/idx"+site.Query, nil, tok), http.StatusOK)
			servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+id+"/fulltext/tags/more/a"+site.Query, nil, tok), http.StatusOK)
			servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+id+"/fulltext/tags/nope"+site.Query, nil, tok), http.StatusNotFound)
			r = s.Do(http.MethodGet, ft, nil, tok)
			if m := r.JSON(t); quiretest.Str(t, m, "content") != "zebraword override" || !reflect.DeepEqual(m["tags"], map[string]any{"more": "b"}) {
				t.Errorf("after PATCH and tag deletes: %s", r.Body)
			}

			servertest.MustStatus(t, s.Do(http.MethodDelete, ft, nil, tok), http.StatusOK)
			if n := fulltextHits(t, s, tok, site.Query, map[string]any{"text": "zebraword"}, 0); n != 0 {
				t.Errorf("a document out of the fulltext index is found: %d", n)
			}
			servertest.MustStatus(t, s.Do(http.MethodGet, ft, nil, tok), http.StatusNotFound)
			servertest.MustStatus(t, s.Do(http.MethodDelete, ft, nil, tok), http.StatusNotFound)
			if names, _ := servertest.Search(t, s, tok, site.Query, map[string]any{"query": map[string]any{"filename": map[string]any{"beginsWith": "orig-name"}}}, ""); len(names) != 1 {
				t.Errorf("its name is no longer searchable: %v", names)
			}
			servertest.MustStatus(t, s.Do(http.MethodPost, ft, map[string]any{"content": "quokkaword back"}, tok), http.StatusOK)
			if n := fulltextHits(t, s, tok, site.Query, map[string]any{"text": "quokkaword"}, 1); n != 1 {
				t.Errorf("set again: not found: %d", n)
			}
			// New content voids what was set: the index follows the document again.
			servertest.MustStatus(t, s.Do(http.MethodPatch, "/documents/"+id+site.Query, map[string]any{"content": "betaword new content", "contentType": "text/plain"}, tok), http.StatusOK)
			if n := fulltextHits(t, s, tok, site.Query, map[string]any{"text": "betaword"}, 1); n != 1 {
				t.Errorf("new content not indexed: %d", n)
			}
			if n := fulltextHits(t, s, tok, site.Query, map[string]any{"text": "quokkaword"}, 0); n != 0 {
				t.Errorf("the text set for the old content is still searchable: %d", n)
			}
		})
	}
	servertest.MustStatus(t, s.Do(http.MethodPut, "/documents/6f1c1e55-1111-4222-8333-444455556666/fulltext", map[string]any{"content": "x"}, tok), http.StatusNotFound)
}
