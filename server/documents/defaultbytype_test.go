package documents_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// Default processing by content type (issue 46; API.md "Default
// processing"): the site's defaults (OCR, FULLTEXT) are decided in the
// write's transaction once the content's type is known. Text gets no OCR
// and its FULLTEXT is COMPLETE in the answer to the write (the index
// reads text content itself: nothing is left for the pipeline); an
// Office document gets FULLTEXT alone; an image or a PDF gets OCR then
// FULLTEXT. A request that names actions gets exactly those.

// kindOf is the content of one row: its bytes, its declared type ("" for
// none: the server detects it) and the action types it should get.
type contentKind struct {
	name, ext, contentType string
	body                   func(word string) []byte
	want                   []string
}

var contentKinds = []contentKind{
	{"text", ".txt", "text/plain", func(w string) []byte { return []byte("Delivery note " + w + " for the office") }, []string{"FULLTEXT"}},
	{"office", ".docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", func(w string) []byte { return quiretest.DOCX("Memo " + w) }, []string{"FULLTEXT"}},
	{"image", ".png", "image/png", func(string) []byte { return quiretest.PNG(quiretest.TextImage("scan")) }, []string{"OCR", "FULLTEXT"}},
	{"pdf", ".pdf", "application/pdf", func(w string) []byte { return quiretest.TextPDF("Invoice " + w) }, []string{"OCR", "FULLTEXT"}},
}

// waitTypes polls (bounded) until a document's action types are want, and
// fails t with what it has otherwise: a type detected after the upload
// decides its defaults in the detection's transaction.
func waitTypes(t *testing.T, s *quiretest.Server, tok, site, id string, want []string) {
	t.Helper()
	var got []string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if got = actionTypes(t, s, tok, site, id); slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("actions %v, want %v", servertest.Actions(t, s, tok, site, id), want)
		}
	}
}

// textSettled fails t unless the document's only action is a FULLTEXT
// recorded COMPLETE from the content (as the pipeline's FULLTEXT of plain
// text records it) and GET /documents/{id}/fulltext reads text back.
func textSettled(t *testing.T, s *quiretest.Server, tok, site, id, text string) {
	t.Helper()
	acts := servertest.Actions(t, s, tok, site, id)
	if len(acts) != 1 {
		t.Fatalf("actions %v, want one FULLTEXT", acts)
	}
	a := acts[0]
	if quiretest.Str(t, a, "type") != "FULLTEXT" || quiretest.Str(t, a, "status") != "COMPLETE" {
		t.Fatalf("action %v, want FULLTEXT COMPLETE at once", a)
	}
	md := quiretest.Obj(t, a["metadata"])
	if quiretest.Str(t, md, "source") != "content" || quiretest.Str(t, md, "characters") == "" {
		t.Errorf("metadata %v, want source content and characters", md)
	}
	for _, k := range []string{"startDate", "completedDate", "insertedDate", "userId"} {
		if _, ok := a[k]; !ok {
			t.Errorf("action %v has no %s", a, k)
		}
	}
	for _, k := range []string{"default", "Default"} {
		if _, ok := a[k]; ok {
			t.Errorf("action %v shows storage's %s mark", a, k)
		}
	}
	r := s.Do(http.MethodGet, "/documents/"+id+"/fulltext"+site, nil, tok)
	servertest.MustStatus(t, r, http.StatusOK)
	if got := quiretest.Str(t, r.JSON(t), "content"); got != text {
		t.Errorf("fulltext content %q, want %q", got, text)
	}
}

// TestDefaultProcessing_ByContentType: each door that writes content in
// one request, for each kind of content, with and without named actions.
func TestDefaultProcessing_ByContentType(t *testing.T) {
	s := servertest.PipelineServer(t, quiretest.DefaultProcessing)
	tok := s.Admin()
	key := servertest.APIKey(t, s, "READ", "WRITE", "DELETE")
	if code, b, _ := servertest.DavDo(t, s, "MKCOL", "/dav/default/in", key, nil, nil); code != http.StatusCreated {
		t.Fatalf("MKCOL = %d %s", code, b)
	}
	servertest.SetSiteConfig(t, s, tok, "", map[string]any{"publicDocuments": map[string]any{"enabled": true}})
	n := 0
	for _, door := range []struct {
		name string
		// add writes a document of kind k with content b and returns
		// its id; sync: its actions are decided in the answer (the
		// content type is known to the write).
		add  func(t *testing.T, k contentKind, path string, b []byte) string
		sync bool
	}{
		{"POST /documents", func(t *testing.T, k contentKind, path string, b []byte) string {
			return servertest.AddDoc(t, s, tok, "", map[string]any{"path": path, "contentType": k.contentType, "isBase64": true, "content": servertest.B64(b)})
		}, true},
		{"POST /documents/upload with contentType, then PUT", func(t *testing.T, k contentKind, path string, b []byte) string {
			r := s.Do(http.MethodPost, "/documents/upload", map[string]any{"path": path, "contentType": k.contentType}, tok)
			uploadTo(t, s, r, b)
			return quiretest.Str(t, r.JSON(t), "documentId")
		}, true},
		{"POST /public/documents", func(t *testing.T, k contentKind, path string, b []byte) string {
			r := s.Do(http.MethodPost, "/public/documents", map[string]any{"path": path, "contentType": k.contentType, "isBase64": true, "content": servertest.B64(b)}, "")
			servertest.MustStatus(t, r, http.StatusCreated)
			return quiretest.Str(t, r.JSON(t), "documentId")
		}, true},
		{"WebDAV PUT", func(t *testing.T, k contentKind, path string, b []byte) string {
			if code, body, _ := servertest.DavDo(t, s, "PUT", "/dav/default/"+path, key, b, map[string]string{"Content-Type": k.contentType}); code != http.StatusCreated {
				t.Fatalf("PUT = %d %s", code, body)
			}
			var id string
			servertest.WaitFor(t, path+" filed", func() bool {
				r := s.Do(http.MethodGet, "/documents?limit=100", nil, tok)
				servertest.MustStatus(t, r, http.StatusOK)
				for _, d := range quiretest.List(t, r.JSON(t), "documents") {
					if m := quiretest.Obj(t, d); m["path"] == path {
						id = quiretest.Str(t, m, "documentId")
					}
				}
				return id != ""
			})
			return id
		}, true},
		{"GET /documents/upload (type detected), then PUT", func(t *testing.T, k contentKind, path string, b []byte) string {
			r := s.Do(http.MethodGet, "/documents/upload"+servertest.Query("", "path="+path), nil, tok)
			uploadTo(t, s, r, b)
			return quiretest.Str(t, r.JSON(t), "documentId")
		}, false},
	} {
		t.Run(door.name, func(t *testing.T) {
			for _, k := range contentKinds {
				if k.name == "text" && !door.sync {
					continue // text is detected as application/octet-stream (FormKiQ)
				}
				t.Run(k.name, func(t *testing.T) {
					n++
					word := "quoll" + string(rune('a'+n%26)) + k.name
					path := "in/" + word + k.ext
					b := k.body(word)
					id := door.add(t, k, path, b)
					if k.name == "text" {
						textSettled(t, s, tok, "", id, string(b))
						waitFound(t, s, tok, "", word, id)
						return
					}
					if door.sync {
						if got := actionTypes(t, s, tok, "", id); !slices.Equal(got, k.want) {
							t.Fatalf("actions %v, want %v", servertest.Actions(t, s, tok, "", id), k.want)
						}
						return
					}
					waitTypes(t, s, tok, "", id, k.want)
				})
			}
		})
	}
	// A request that names actions gets exactly those, decided by no one
	// else: OCR of a text runs (and skips) in the pipeline, and a named
	// FULLTEXT of a text runs there too.
	for _, tt := range []struct {
		name    string
		actions []any
		want    []string
	}{
		{"OCR named on text", []any{map[string]any{"type": "OCR"}}, []string{"OCR"}},
		{"FULLTEXT named on text", []any{map[string]any{"type": "FULLTEXT"}}, []string{"FULLTEXT"}},
		{"OCR and FULLTEXT named on text", []any{map[string]any{"type": "OCR"}, map[string]any{"type": "FULLTEXT"}}, []string{"OCR", "FULLTEXT"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			id := servertest.AddDoc(t, s, tok, "", map[string]any{"path": "named/x.txt", "contentType": "text/plain", "content": "a typed note", "actions": tt.actions})
			if got := actionTypes(t, s, tok, "", id); !slices.Equal(got, tt.want) {
				t.Fatalf("actions %v, want %v", got, tt.want)
			}
			st := servertest.WaitActions(t, s, tok, "", id)
			for i, a := range servertest.Actions(t, s, tok, "", id) {
				want := "COMPLETE"
				if tt.want[i] == "OCR" {
					want = "SKIPPED"
				}
				if quiretest.Str(t, a, "status") != want {
					t.Errorf("statuses %v: %s should be %s", st, tt.want[i], want)
				}
			}
		})
	}
}
