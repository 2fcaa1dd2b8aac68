package server_test

import (
	"net/http"
	"reflect"
	"sort"
	"testing"
	"time"

	"quire/quiretest"
)

// TestIndexSearch_Tags: POST /indices/search {"indexType":"tags"} lists
// the site's tag keys as values, paged (FormKiQ's IndexSearch).
func TestIndexSearch_Tags(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range sites {
		t.Run(site.name, func(t *testing.T) {
			for i, tags := range [][]map[string]any{
				{{"key": "category", "value": "a"}, {"key": "year", "value": "2026"}},
				{{"key": "category", "value": "b"}, {"key": "flag"}},
				{{"key": site.name + "-only", "value": "x"}},
			} {
				addDoc(t, s, tok, site.query, map[string]any{"path": "t" + string(rune('0'+i)) + ".txt", "content": "x", "tags": tags})
			}
			var got []string
			next := ""
			for range 10 {
				path := "/indices/search" + q(site.query, "limit=2")
				if next != "" {
					path += "&next=" + next
				}
				r := s.Do(http.MethodPost, path, map[string]any{"indexType": "tags"}, tok)
				mustStatus(t, r, http.StatusOK)
				m := r.JSON(t)
				for _, v := range list(t, m, "values") {
					got = append(got, str(t, obj(t, v), "value"))
				}
				next, _ = m["next"].(string)
				if next == "" {
					break
				}
			}
			want := []string{"category", "flag", site.name + "-only", "year"}
			sort.Strings(want) // key order
			if !reflect.DeepEqual(got, want) {
				t.Errorf("tag keys = %v, want %v", got, want)
			}
		})
	}
	r := s.Do(http.MethodPost, "/indices/search", map[string]any{"indexType": "colours"}, tok)
	mustStatus(t, r, http.StatusBadRequest)
}

// TestFulltext_MetadataIsAMap: /searchFulltext results and GET
// /documents/{id}/fulltext give metadata as the spec's map.
func TestFulltext_MetadataIsAMap(t *testing.T) {
	s := pipelineServer(t)
	tok := s.Admin()
	for _, site := range sites {
		t.Run(site.name, func(t *testing.T) {
			id := addDoc(t, s, tok, site.query, map[string]any{"path": "m.txt", "contentType": "text/plain", "content": "zebracorn invoice",
				"metadata": []map[string]any{{"key": "m1", "value": "v1"}, {"key": "m2", "values": []string{"x", "y"}}},
				"actions":  []map[string]any{{"type": "FULLTEXT"}}})
			want := map[string]any{"m1": "v1", "m2": []any{"x", "y"}}
			var docs []any
			for deadline := time.Now().Add(20 * time.Second); ; {
				r := s.Do(http.MethodPost, "/searchFulltext"+site.query, map[string]any{"query": map[string]any{"text": "zebracorn"}}, tok)
				mustStatus(t, r, http.StatusOK)
				if docs = list(t, r.JSON(t), "documents"); len(docs) == 1 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("not found: %s", r.Body)
				}
				time.Sleep(50 * time.Millisecond)
			}
			if got := obj(t, docs[0])["metadata"]; !reflect.DeepEqual(got, want) {
				t.Errorf("searchFulltext metadata = %#v", got)
			}
			if st := waitActions(t, s, tok, site.query, id); !equalStrings(st, []string{"COMPLETE"}) {
				t.Fatalf("FULLTEXT: %v", st)
			}
			r := s.Do(http.MethodGet, "/documents/"+id+"/fulltext"+site.query, nil, tok)
			mustStatus(t, r, http.StatusOK)
			if got := r.JSON(t)["metadata"]; !reflect.DeepEqual(got, want) {
				t.Errorf("GET fulltext metadata = %#v", got)
			}
		})
	}
}
