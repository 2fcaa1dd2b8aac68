package server_test

import (
	"encoding/base64"
	"net/http"
	"reflect"
	"sort"
	"strings"
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

// TestOcr_SetByHand: PUT and DELETE /documents/{id}/ocr, and FULLTEXT
// indexing the text set by hand.
func TestOcr_SetByHand(t *testing.T) {
	s := pipelineServer(t)
	tok := s.Admin()
	for _, site := range sites {
		t.Run(site.name, func(t *testing.T) {
			png := quiretest.PNG(quiretest.TextImage("x"))
			id := addDoc(t, s, tok, site.query, map[string]any{"path": "scan.png", "contentType": "image/png", "isBase64": true,
				"content": base64.StdEncoding.EncodeToString(png)})
			ocr := "/documents/" + id + "/ocr" + site.query
			for _, tt := range []struct {
				name, method string
				body         any
				status       int
			}{
				{"no content", "PUT", map[string]any{"contentType": "text/plain"}, 400},
				{"bad base64", "PUT", map[string]any{"content": "%%%", "isBase64": true}, 400},
				{"binary", "PUT", map[string]any{"content": base64.StdEncoding.EncodeToString([]byte{0xff, 0xfe, 0}), "isBase64": true}, 400},
				{"not text", "PUT", map[string]any{"content": "x", "contentType": "application/pdf"}, 400},
				{"nothing to delete", "DELETE", nil, 404},
				{"set", "PUT", map[string]any{"content": "Quokka receipt 42", "contentType": "text/plain"}, 200},
			} {
				t.Run(tt.name, func(t *testing.T) { mustStatus(t, s.Do(tt.method, ocr, tt.body, tok), tt.status) })
			}
			r := s.Do(http.MethodGet, ocr, nil, tok)
			mustStatus(t, r, http.StatusOK)
			if m := r.JSON(t); str(t, m, "data") != "Quokka receipt 42" || str(t, m, "ocrEngine") != "manual" {
				t.Fatalf("GET ocr: %s", r.Body)
			}
			mustStatus(t, s.Do(http.MethodPost, "/documents/"+id+"/actions"+site.query, map[string]any{"actions": []map[string]any{{"type": "FULLTEXT"}}}, tok), http.StatusOK)
			if st := waitActions(t, s, tok, site.query, id); !equalStrings(st, []string{"COMPLETE"}) {
				t.Fatalf("FULLTEXT: %v", st)
			}
			for deadline := time.Now().Add(10 * time.Second); ; {
				r := s.Do(http.MethodPost, "/searchFulltext"+site.query, map[string]any{"query": map[string]any{"text": "quokka"}}, tok)
				if len(list(t, r.JSON(t), "documents")) == 1 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the OCR text set by hand is not searchable: %s", r.Body)
				}
				time.Sleep(50 * time.Millisecond)
			}
			mustStatus(t, s.Do(http.MethodDelete, ocr, nil, tok), http.StatusOK)
			mustStatus(t, s.Do(http.MethodGet, ocr, nil, tok), http.StatusNotFound)
		})
	}
	mustStatus(t, s.Do(http.MethodPut, "/documents/6f1c1e55-1111-4222-8333-444455556666/ocr", map[string]any{"content": "x"}, tok), http.StatusNotFound)
}

// TestSyncsAndReindex: GET/POST /documents/{id}/syncs report the search
// index and delivery actions from Quire's state; POST
// /reindex/documents/{id} keeps attribute search working (the storage
// test TestReindexDocument_RestoresLostEntries removes entries first).
func TestSyncsAndReindex(t *testing.T) {
	s := pipelineServer(t)
	tok := s.Admin()
	for _, site := range sites {
		t.Run(site.name, func(t *testing.T) {
			mustStatus(t, s.Do(http.MethodPost, "/attributes"+site.query, map[string]any{"attribute": map[string]any{"key": "invoice"}}, tok), http.StatusCreated)
			id := addDoc(t, s, tok, site.query, map[string]any{"path": "s.txt", "content": "s", "attributes": []map[string]any{{"key": "invoice", "stringValue": "INV-1"}},
				"actions": []map[string]any{{"type": "WEBHOOK", "parameters": map[string]any{"url": "http://127.0.0.1:1/hook"}}}})
			var syncs []any
			for deadline := time.Now().Add(30 * time.Second); ; {
				r := s.Do(http.MethodGet, "/documents/"+id+"/syncs"+site.query, nil, tok)
				mustStatus(t, r, http.StatusOK)
				syncs = list(t, r.JSON(t), "syncs")
				if len(syncs) == 2 && str(t, obj(t, syncs[0]), "status") == "COMPLETE" && str(t, obj(t, syncs[1]), "status") != "PENDING" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("syncs never settled: %s", r.Body)
				}
				time.Sleep(50 * time.Millisecond)
			}
			if f := obj(t, syncs[0]); str(t, f, "service") != "FULLTEXT" {
				t.Errorf("first sync %v", f)
			}
			if w := obj(t, syncs[1]); str(t, w, "service") != "WEBHOOK" || !strings.HasPrefix(str(t, w, "status"), "FAILED") || str(t, w, "message") == "" {
				t.Errorf("webhook sync to a closed port: %v", w)
			}
			r := s.Do(http.MethodGet, "/documents/"+id+"/syncs"+q(site.query, "limit=1"), nil, tok)
			if m := r.JSON(t); len(list(t, m, "syncs")) != 1 || m["next"] == nil {
				t.Errorf("limit=1: %s", r.Body)
			}
			mustStatus(t, s.Do(http.MethodPost, "/documents/"+id+"/syncs"+site.query, map[string]any{"sync": map[string]any{"service": "FULLTEXT", "type": "METADATA"}}, tok), http.StatusOK)
			mustStatus(t, s.Do(http.MethodPost, "/documents/"+id+"/syncs"+site.query, map[string]any{"sync": map[string]any{"service": "TYPESENSE"}}, tok), http.StatusBadRequest)

			find := func() int {
				r := s.Do(http.MethodPost, "/search"+site.query, map[string]any{"query": map[string]any{"attribute": map[string]any{"key": "invoice", "eq": "INV-1"}}}, tok)
				mustStatus(t, r, http.StatusOK)
				return len(list(t, r.JSON(t), "documents"))
			}
			if n := find(); n != 1 {
				t.Fatalf("attribute search before: %d", n)
			}
			r = s.Do(http.MethodPost, "/reindex/documents/"+id+site.query, map[string]any{"target": "ATTRIBUTES"}, tok)
			mustStatus(t, r, http.StatusCreated)
			if n := find(); n != 1 {
				t.Errorf("attribute search after a reindex: %d", n)
			}
			mustStatus(t, s.Do(http.MethodPost, "/reindex/documents/"+id+site.query, map[string]any{"target": "TAGS"}, tok), http.StatusBadRequest)
		})
	}
}
