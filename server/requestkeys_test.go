package server_test

import (
	"net/http"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// countDocs is the number of top-level documents of the default site.
func countTopDocs(t *testing.T, s *quiretest.Server, tok string) int {
	t.Helper()
	r := s.Do(http.MethodGet, "/documents?limit=100", nil, tok)
	servertest.MustStatus(t, r, http.StatusOK)
	docs, _ := r.JSON(t)["documents"].([]any)
	return len(docs)
}

// A retried write with the same Idempotency-Key answers the first
// answer and writes once; the same key with another body is refused; a
// key is per caller; a malformed key, or one on a route that cannot
// honour it, is refused before any write.
func TestIdempotencyKey_RetryAnswersFirstAndWritesOnce(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	key := func(k string) map[string]string { return map[string]string{"Idempotency-Key": k} }
	body := map[string]any{"path": "idem/a.txt", "content": "once", "tags": []map[string]any{{"key": "w", "value": "1"}}}

	first := s.DoHeaders(http.MethodPost, "/documents", body, tok, key("create-1"))
	servertest.MustStatus(t, first, http.StatusCreated)
	id := quiretest.Str(t, first.JSON(t), "documentId")
	for i := 0; i < 2; i++ {
		again := s.DoHeaders(http.MethodPost, "/documents", body, tok, key("create-1"))
		servertest.MustStatus(t, again, http.StatusCreated)
		if got := quiretest.Str(t, again.JSON(t), "documentId"); got != id {
			t.Fatalf("retry %d answered documentId %s, want the first %s", i, got, id)
		}
	}
	if n := countTopDocs(t, s, tok); n != 1 {
		t.Fatalf("%d documents after three requests with one key, want 1", n)
	}

	other := s.DoHeaders(http.MethodPost, "/documents", map[string]any{"path": "idem/b.txt", "content": "other"}, tok, key("create-1"))
	servertest.MustStatus(t, other, http.StatusConflict)
	if msg, _ := other.JSON(t)["message"].(string); !strings.Contains(msg, "Idempotency-Key") {
		t.Fatalf("same key, other body: %s, want a message naming the Idempotency-Key", other.Body)
	}

	// Another caller's same key is its own request.
	ann := s.Token("ann", "default")
	theirs := s.DoHeaders(http.MethodPost, "/documents", body, ann, key("create-1"))
	servertest.MustStatus(t, theirs, http.StatusCreated)
	if got := quiretest.Str(t, theirs.JSON(t), "documentId"); got == id {
		t.Fatalf("another caller's key answered the first caller's document %s", id)
	}

	// A keyed tag delete answers its first answer again (without the
	// key the second delete is a 404).
	for i := 0; i < 2; i++ {
		r := s.DoHeaders(http.MethodDelete, "/documents/"+id+"/tags/w", nil, tok, key("del-w"))
		servertest.MustStatus(t, r, http.StatusOK)
	}
	servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+id+"/tags/w", nil, tok), http.StatusNotFound)

	// Every keyed document route answers a repeat as it answered first.
	for _, tt := range []struct {
		method, path string
		body         any
		status       int
	}{
		{http.MethodPost, "/documents/" + id + "/tags", map[string]any{"tags": []map[string]any{{"key": "a", "value": "1"}, {"key": "d", "value": "0"}}}, http.StatusCreated},
		{http.MethodPatch, "/documents/" + id + "/tags", map[string]any{"tags": []map[string]any{{"key": "c", "value": "3"}}}, http.StatusOK},
		{http.MethodPut, "/documents/" + id + "/tags/d", map[string]any{"value": "4"}, http.StatusOK},
		{http.MethodDelete, "/documents/" + id + "/tags/d/4", nil, http.StatusOK},
		{http.MethodPatch, "/documents/" + id, map[string]any{"path": "idem/renamed.txt"}, http.StatusOK},
		{http.MethodPut, "/documents/" + id + "/tags", map[string]any{"tags": []map[string]any{{"key": "b", "value": "2"}}}, http.StatusOK},
	} {
		k := key(tt.method + " " + tt.path)
		for i := 0; i < 2; i++ {
			r := s.DoHeaders(tt.method, tt.path, tt.body, tok, k)
			if r.Status != tt.status {
				t.Fatalf("%s %s, attempt %d: %d %s, want %d", tt.method, tt.path, i, r.Status, r.Body, tt.status)
			}
		}
	}
	servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+id+"?softDelete=true", nil, tok), http.StatusOK)
	for i := 0; i < 2; i++ {
		servertest.MustStatus(t, s.DoHeaders(http.MethodPut, "/documents/"+id+"/restore", nil, tok, key("restore-1")), http.StatusOK)
	}

	before := countTopDocs(t, s, tok)
	for _, tt := range []struct {
		name, method, path, key string
		body                    any
	}{
		{"too long", http.MethodPost, "/documents", strings.Repeat("k", 257), body},
		{"not ASCII", http.MethodPost, "/documents", "clé", body},
		{"tab", http.MethodPost, "/documents", "a\tb", body},
		{"login", http.MethodPost, "/login", "login-1", map[string]any{"username": "x", "password": "y"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := s.DoHeaders(tt.method, tt.path, tt.body, tok, key(tt.key))
			servertest.MustStatus(t, r, http.StatusBadRequest)
			if !strings.Contains(string(r.Body), `"key":"Idempotency-Key"`) {
				t.Fatalf("body %s, want a validation error on Idempotency-Key", r.Body)
			}
		})
	}
	if n := countTopDocs(t, s, tok); n != before {
		t.Fatalf("refused requests changed the documents: %d, want %d", n, before)
	}
	servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+id, nil, tok), http.StatusOK)
}

// A create with a client-chosen documentId that exists is a 409, as
// FormKiQ answers, also with the same body again (issue 48); the same
// create under an Idempotency-Key answers the first answer.
func TestIdempotencyKey_DocumentIDActsAsKey(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	id := "3f9c0b7e-2a4d-4c6e-9b1a-5d8e7f6a4b3c"
	body := map[string]any{"documentId": id, "path": "idem/chosen.txt", "content": "chosen"}
	conflict := `{"message":"documentId '` + id + `' already exists"}`
	steps := []struct {
		name string
		key  string
		body map[string]any
		want int
		resp string
	}{
		{"the create", "", body, http.StatusCreated, ""},
		{"the same body again", "", body, http.StatusConflict, conflict},
		{"another body", "", map[string]any{"documentId": id, "content": "different"}, http.StatusConflict, conflict},
		{"a keyed create of another id", "chosen-1", map[string]any{"documentId": "4a9c0b7e-2a4d-4c6e-9b1a-5d8e7f6a4b3c", "content": "k"}, http.StatusCreated, ""},
		{"the keyed create again", "chosen-1", map[string]any{"documentId": "4a9c0b7e-2a4d-4c6e-9b1a-5d8e7f6a4b3c", "content": "k"}, http.StatusCreated, ""},
	}
	for _, st := range steps {
		h := map[string]string{}
		if st.key != "" {
			h["Idempotency-Key"] = st.key
		}
		r := s.DoHeaders(http.MethodPost, "/documents", st.body, tok, h)
		servertest.MustStatus(t, r, st.want)
		if st.resp != "" {
			servertest.MustBody(t, r, st.resp)
		}
	}
	if n := countTopDocs(t, s, tok); n != 2 {
		t.Fatalf("%d documents, want 2", n)
	}
}
