package documents_test

import (
	"encoding/base64"
	"net/http"
	"reflect"
	"sort"
	"testing"
	"time"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// TestIndexSearch_Tags: POST /indices/search {"indexType":"tags"} lists
// the site's tag keys as values, paged (FormKiQ's IndexSearch).
func TestIndexSearch_Tags(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			for i, tags := range [][]map[string]any{
				{{"key": "category", "value": "a"}, {"key": "year", "value": "2026"}},
				{{"key": "category", "value": "b"}, {"key": "flag"}},
				{{"key": site.Name + "-only", "value": "x"}},
			} {
				servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "t" + string(rune('0'+i)) + ".txt", "content": "x", "tags": tags})
			}
			var got []string
			next := ""
			for range 10 {
				path := "/indices/search" + servertest.Query(site.Query, "limit=2")
				if next != "" {
					path += "&next=" + next
				}
				r := s.Do(http.MethodPost, path, map[string]any{"indexType": "tags"}, tok)
				servertest.MustStatus(t, r, http.StatusOK)
				m := r.JSON(t)
				for _, v := range quiretest.List(t, m, "values") {
					got = append(got, quiretest.Str(t, quiretest.Obj(t, v), "value"))
				}
				next, _ = m["next"].(string)
				if next == "" {
					break
				}
			}
			want := []string{"category", "flag", site.Name + "-only", "year"}
			sort.Strings(want) // key order
			if !reflect.DeepEqual(got, want) {
				t.Errorf("tag keys = %v, want %v", got, want)
			}
		})
	}
	r := s.Do(http.MethodPost, "/indices/search", map[string]any{"indexType": "colours"}, tok)
	servertest.MustStatus(t, r, http.StatusBadRequest)
}

// TestFulltext_MetadataIsAMap: /searchFulltext results and GET
// /documents/{id}/fulltext give metadata as the spec's map.
func TestFulltext_MetadataIsAMap(t *testing.T) {
	s := servertest.PipelineServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			id := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "m.txt", "contentType": "text/plain", "content": "zebracorn invoice",
				"metadata": []map[string]any{{"key": "m1", "value": "v1"}, {"key": "m2", "values": []string{"x", "y"}}},
				"actions":  []map[string]any{{"type": "FULLTEXT"}}})
			want := map[string]any{"m1": "v1", "m2": []any{"x", "y"}}
			var docs []any
			for deadline := time.Now().Add(20 * time.Second); ; {
				r := s.Do(http.MethodPost, "/searchFulltext"+site.Query, map[string]any{"query": map[string]any{"text": "zebracorn"}}, tok)
				servertest.MustStatus(t, r, http.StatusOK)
				if docs = quiretest.List(t, r.JSON(t), "documents"); len(docs) == 1 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("not found: %s", r.Body)
				}
				time.Sleep(50 * time.Millisecond)
			}
			if got := quiretest.Obj(t, docs[0])["metadata"]; !reflect.DeepEqual(got, want) {
				t.Errorf("searchFulltext metadata = %#v", got)
			}
			if st := servertest.WaitActions(t, s, tok, site.Query, id); !servertest.EqualStrings(st, []string{"COMPLETE"}) {
				t.Fatalf("FULLTEXT: %v", st)
			}
			r := s.Do(http.MethodGet, "/documents/"+id+"/fulltext"+site.Query, nil, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			if got := r.JSON(t)["metadata"]; !reflect.DeepEqual(got, want) {
				t.Errorf("GET fulltext metadata = %#v", got)
			}
		})
	}
}

// TestOcr_SetByHand: PUT and DELETE /documents/{id}/ocr, and FULLTEXT
// indexing the text set by hand.
func TestOcr_SetByHand(t *testing.T) {
	s := servertest.PipelineServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			png := quiretest.PNG(quiretest.TextImage("x"))
			// "actions": [] so that no OCR of the site's default
			// processing overwrites the text set by hand.
			id := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "scan.png", "contentType": "image/png", "isBase64": true,
				"content": base64.StdEncoding.EncodeToString(png), "actions": []any{}})
			ocr := "/documents/" + id + "/ocr" + site.Query
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
				t.Run(tt.name, func(t *testing.T) { servertest.MustStatus(t, s.Do(tt.method, ocr, tt.body, tok), tt.status) })
			}
			r := s.Do(http.MethodGet, ocr, nil, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			if m := r.JSON(t); quiretest.Str(t, m, "data") != "Quokka receipt 42" || quiretest.Str(t, m, "ocrEngine") != "manual" {
				t.Fatalf("GET ocr: %s", r.Body)
			}
			servertest.MustStatus(t, s.Do(http.MethodPost, "/documents/"+id+"/actions"+site.Query, map[string]any{"actions": []map[string]any{{"type": "FULLTEXT"}}}, tok), http.StatusOK)
			if st := servertest.WaitActions(t, s, tok, site.Query, id); !servertest.EqualStrings(st, []string{"COMPLETE"}) {
				t.Fatalf("FULLTEXT: %v", st)
			}
			for deadline := time.Now().Add(10 * time.Second); ; {
				r := s.Do(http.MethodPost, "/searchFulltext"+site.Query, map[string]any{"query": map[string]any{"text": "quokka"}}, tok)
				if len(quiretest.List(t, r.JSON(t), "documents")) == 1 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the OCR text set by hand is not searchable: %s", r.Body)
				}
				time.Sleep(50 * time.Millisecond)
			}
			servertest.MustStatus(t, s.Do(http.MethodDelete, ocr, nil, tok), http.StatusOK)
			servertest.MustStatus(t, s.Do(http.MethodGet, ocr, nil, tok), http.StatusNotFound)
		})
	}
	servertest.MustStatus(t, s.Do(http.MethodPut, "/documents/6f1c1e55-1111-4222-8333-444455556666/ocr", map[string]any{"content": "x"}, tok), http.StatusNotFound)
}

// TestSyncsAndReindex: GET/POST /documents/{id}/syncs report the search
// index and delivery actions from Quire's state; POST
// /reindex/documents/{id} keeps attribute search working (the storage
// test TestReindexDocument_RestoresLostEntries removes entries first).
func TestSyncsAndReindex(t *testing.T) {
	s := servertest.PipelineServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			servertest.MustStatus(t, s.Do(http.MethodPost, "/attributes"+site.Query, map[string]any{"attribute": map[string]any{"key": "invoice"}}, tok), http.StatusCreated)
			id := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "s.txt", "content": "s", "attributes": []map[string]any{{"key": "invoice", "stringValue": "INV-1"}},
				"actions": []map[string]any{{"type": "WEBHOOK", "parameters": map[string]any{"url": "http://127.0.0.1:1/hook"}}}})
			var syncs []any
			for deadline := time.Now().Add(30 * time.Second); ; {
				r := s.Do(http.MethodGet, "/documents/"+id+"/syncs"+site.Query, nil, tok)
				servertest.MustStatus(t, r, http.StatusOK)
				syncs = quiretest.List(t, r.JSON(t), "syncs")
				if len(syncs) == 1 && quiretest.Str(t, quiretest.Obj(t, syncs[0]), "status") == "COMPLETE" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("syncs never settled: %s", r.Body)
				}
				time.Sleep(50 * time.Millisecond)
			}
			// Every value within the OpenAPI's enums (DocumentSyncService:
			// TYPESENSE, OPENSEARCH): the webhook is an action, not a sync.
			if f := quiretest.Obj(t, syncs[0]); quiretest.Str(t, f, "service") != "OPENSEARCH" || quiretest.Str(t, f, "type") != "METADATA" || quiretest.Str(t, f, "syncDate") == "" {
				t.Errorf("the fulltext sync %v", f)
			}
			r := s.Do(http.MethodGet, "/documents/"+id+"/syncs"+servertest.Query(site.Query, "limit=1"), nil, tok)
			if m := r.JSON(t); len(quiretest.List(t, m, "syncs")) != 1 || m["next"] != nil {
				t.Errorf("limit=1: %s", r.Body)
			}
			servertest.MustStatus(t, s.Do(http.MethodPost, "/documents/"+id+"/syncs"+site.Query, map[string]any{"sync": map[string]any{"service": "FULLTEXT", "type": "METADATA"}}, tok), http.StatusOK)
			servertest.MustStatus(t, s.Do(http.MethodPost, "/documents/"+id+"/syncs"+site.Query, map[string]any{"sync": map[string]any{"service": "TYPESENSE"}}, tok), http.StatusBadRequest)

			find := func() int {
				r := s.Do(http.MethodPost, "/search"+site.Query, map[string]any{"query": map[string]any{"attribute": map[string]any{"key": "invoice", "eq": "INV-1"}}}, tok)
				servertest.MustStatus(t, r, http.StatusOK)
				return len(quiretest.List(t, r.JSON(t), "documents"))
			}
			if n := find(); n != 1 {
				t.Fatalf("attribute search before: %d", n)
			}
			r = s.Do(http.MethodPost, "/reindex/documents/"+id+site.Query, map[string]any{"target": "ATTRIBUTES"}, tok)
			servertest.MustStatus(t, r, http.StatusCreated)
			if n := find(); n != 1 {
				t.Errorf("attribute search after a reindex: %d", n)
			}
			servertest.MustStatus(t, s.Do(http.MethodPost, "/reindex/documents/"+id+site.Query, map[string]any{"target": "TAGS"}, tok), http.StatusBadRequest)
		})
	}
}
