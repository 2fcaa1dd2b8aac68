package servertest

import (
	"net/http"
	"testing"
	"time"

	"quire/quiretest"
)

// Search posts a /search body and returns the documents and next token.
func Search(t *testing.T, s *quiretest.Server, tok, site string, body any, extra string) ([]map[string]any, string) {
	t.Helper()
	r := s.Do(http.MethodPost, "/search"+Query(site, extra), body, tok)
	MustStatus(t, r, http.StatusOK)
	out := r.JSON(t)
	var docs []map[string]any
	for _, d := range quiretest.List(t, out, "documents") {
		docs = append(docs, quiretest.Obj(t, d))
	}
	next, _ := out["next"].(string)
	return docs, next
}

// TextRoutes are the routes of a plain text search; TextHits asks them.
var TextRoutes = []string{"/search", "/searchFulltext", "/queryFulltext"}

// TextHits asks route (one of TextRoutes) for the plain text text in the
// site (its query: "" or "?siteId=…"), and returns the hits in rank order
// with their document ids, and the answer's body for messages:
// /search's and /searchFulltext's documents, /queryFulltext's OpenSearch
// hits for a match on every field (the console's search).
func TextHits(t *testing.T, s *quiretest.Server, tok, route, site, text string) (hits []map[string]any, ids []string, body string) {
	t.Helper()
	req, items, idKey := map[string]any{"query": map[string]any{"text": text}}, "documents", "documentId"
	if route == "/queryFulltext" {
		req, idKey = map[string]any{"query": map[string]any{"match": map[string]any{"_all": text}}}, "_id"
	}
	r := s.Do(http.MethodPost, route+site, req, tok)
	MustStatus(t, r, http.StatusOK)
	res := r.JSON(t)
	if route == "/queryFulltext" {
		res, items = quiretest.Obj(t, quiretest.Obj(t, res["result"])["hits"]), "hits"
	}
	for _, h := range quiretest.List(t, res, items) {
		m := quiretest.Obj(t, h)
		hits, ids = append(hits, m), append(ids, quiretest.Str(t, m, idKey))
	}
	return hits, ids, string(r.Body)
}

func FolderKeyOf(t *testing.T, s *quiretest.Server, tok, site, folder, name string) string {
	t.Helper()
	docs, _ := Search(t, s, tok, site, map[string]any{"query": map[string]any{"meta": map[string]any{"folder": folder}}}, "limit=100")
	for _, d := range docs {
		if d["path"] == name && d["folder"] == true {
			return quiretest.Str(t, d, "indexKey")
		}
	}
	t.Fatalf("folder %s not in %s", name, folder)
	return ""
}

// WaitIndexed waits until the server's index queue is empty (GET /readyz).
func WaitIndexed(t *testing.T, s *quiretest.Server) {
	t.Helper()
	for range 500 {
		r := s.Do(http.MethodGet, "/readyz", nil, "")
		MustStatus(t, r, http.StatusOK)
		if quiretest.Obj(t, r.JSON(t)["index"])["queued"] == float64(0) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("index queue not empty after 5s")
}
