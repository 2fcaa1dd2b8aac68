package flow_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// TestNotes_Routes walks the notes of a document on both sites: add, list,
// refusals (FormKiQ's validation shape), permissions like the document's,
// the count limit, the trash (notes stay) and the purge (notes go).
func TestNotes_Routes(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			grp := "default"
			if site.Query != "" {
				grp = "finance"
			}
			reader := s.Token("rita", grp+"_read")
			doc := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "notes/a.txt", "content": "x"})
			base := "/documents/" + doc + "/notes"
			missing := "/documents/00000000-0000-4000-8000-000000000000/notes"
			r := s.Do(http.MethodPost, base+site.Query, map[string]any{"note": map[string]any{"text": "Call Anna about it"}}, tok)
			servertest.MustStatus(t, r, http.StatusCreated)
			nid := quiretest.Str(t, r.JSON(t), "noteId")
			servertest.RunSteps(t, s, tok, site.Query, []servertest.Step{
				{Name: "listed", Method: "GET", Path: base, Want: 200, Resp: `~"text":"Call Anna about it"`},
				{Name: "listed by", Method: "GET", Path: base, Want: 200, Resp: `~"userId":"admin"`},
				{Name: "no note", Method: "POST", Path: base, Body: map[string]any{}, Want: 400, Resp: `{"errors":[{"key":"note","error":"'note' is required"}]}`},
				{Name: "blank", Method: "POST", Path: base, Body: map[string]any{"note": map[string]any{"text": "  "}}, Want: 400, Resp: `{"errors":[{"key":"text","error":"'text' is required"}]}`},
				{Name: "too long", Method: "POST", Path: base, Body: map[string]any{"note": map[string]any{"text": strings.Repeat("ä", 4001)}}, Want: 400,
					Resp: `{"errors":[{"key":"text","error":"'text' is longer than 4000 characters"}]}`},
				{Name: "longest", Method: "POST", Path: base, Body: map[string]any{"note": map[string]any{"text": strings.Repeat("ä", 4000)}}, Want: 201, Resp: `~"noteId"`},
				{Name: "missing document", Method: "POST", Path: missing, Body: map[string]any{"note": map[string]any{"text": "x"}}, Want: 404, Resp: ""},
				{Name: "missing document list", Method: "GET", Path: missing, Want: 404, Resp: ""},
				{Name: "unknown note", Method: "DELETE", Path: base + "/nope", Want: 404, Resp: `{"message":"Note 'nope' not found"}`},
			})
			// A reader reads the notes but neither adds nor removes one.
			if r := s.Do(http.MethodGet, base+site.Query, nil, reader); r.Status != http.StatusOK || !strings.Contains(string(r.Body), nid) {
				t.Fatalf("reader list: %d %s", r.Status, r.Body)
			}
			servertest.MustStatus(t, s.Do(http.MethodPost, base+site.Query, map[string]any{"note": map[string]any{"text": "x"}}, reader), http.StatusUnauthorized)
			servertest.MustStatus(t, s.Do(http.MethodDelete, base+"/"+nid+site.Query, nil, reader), http.StatusUnauthorized)

			// To the trash and back: the notes stay with the document.
			servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+doc+servertest.Query(site.Query, "softDelete=true"), nil, tok), http.StatusOK)
			servertest.MustStatus(t, s.Do(http.MethodGet, base+site.Query, nil, tok), http.StatusNotFound)
			servertest.MustStatus(t, s.Do(http.MethodPost, base+site.Query, map[string]any{"note": map[string]any{"text": "x"}}, tok), http.StatusNotFound)
			servertest.MustStatus(t, s.Do(http.MethodPut, "/documents/"+doc+"/restore"+site.Query, nil, tok), http.StatusOK)
			if r := s.Do(http.MethodGet, base+site.Query, nil, tok); len(quiretest.List(t, r.JSON(t), "notes")) != 2 {
				t.Fatalf("after restore: %s", r.Body)
			}
			servertest.MustStatus(t, s.Do(http.MethodDelete, base+"/"+nid+site.Query, nil, tok), http.StatusOK)
			if r := s.Do(http.MethodGet, base+site.Query, nil, tok); len(quiretest.List(t, r.JSON(t), "notes")) != 1 || strings.Contains(string(r.Body), nid) {
				t.Fatalf("after delete: %s", r.Body)
			}

			// Purged, the notes go: the same id made again has none.
			servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+doc+"/purge"+site.Query, nil, tok), http.StatusOK)
			again := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"documentId": doc, "path": "notes/b.txt", "content": "y"})
			if again != doc {
				t.Fatalf("made again as %s, not %s", again, doc)
			}
			servertest.MustBody(t, s.Do(http.MethodGet, base+site.Query, nil, tok), `{"notes":[]}`)
		})
	}
}

// TestNotes_Limit fills a document to MaxNotesPerDocument and pages
// through its notes, oldest first.
func TestNotes_Limit(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	doc := servertest.AddDoc(t, s, tok, "", map[string]any{"path": "many.txt", "content": "x"})
	base := "/documents/" + doc + "/notes"
	for i := range 200 {
		servertest.MustStatus(t, s.Do(http.MethodPost, base, map[string]any{"note": map[string]any{"text": fmt.Sprintf("n%03d", i)}}, tok), http.StatusCreated)
	}
	r := s.Do(http.MethodPost, base, map[string]any{"note": map[string]any{"text": "one more"}}, tok)
	servertest.MustStatus(t, r, http.StatusBadRequest)
	servertest.MustBody(t, r, `{"errors":[{"key":"note","error":"a document holds at most 200 notes"}]}`)
	var texts []string
	next := ""
	for range 10 {
		q := "?limit=70"
		if next != "" {
			q += "&next=" + next
		}
		b := s.Do(http.MethodGet, base+q, nil, tok).JSON(t)
		for i := range quiretest.List(t, b, "notes") {
			texts = append(texts, quiretest.Str(t, quiretest.Item(t, b, "notes", i), "text"))
		}
		next, _ = b["next"].(string)
		if next == "" {
			break
		}
	}
	if len(texts) != 200 || texts[0] != "n000" || texts[199] != "n199" {
		t.Fatalf("paged %d notes: first %q", len(texts), texts[:min(3, len(texts))])
	}
}
