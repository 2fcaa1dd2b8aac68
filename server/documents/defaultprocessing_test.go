package documents_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// Default processing (issue 46; API.md "Default processing"): a document
// or content version whose request names no actions gets the site's
// default actions (OCR, FULLTEXT), from every door of this package; a
// request that names actions gets exactly those.

// actionTypes returns the types of a document's actions, in order.
func actionTypes(t *testing.T, s *quiretest.Server, tok, site, id string) []string {
	t.Helper()
	var out []string
	for _, a := range servertest.Actions(t, s, tok, site, id) {
		out = append(out, quiretest.Str(t, a, "type"))
	}
	return out
}

// fulltextHas reports whether POST /searchFulltext for word answers id.
func fulltextHas(t *testing.T, s *quiretest.Server, tok, site, word, id string) bool {
	t.Helper()
	r := s.Do(http.MethodPost, "/searchFulltext"+site, map[string]any{"query": map[string]any{"text": word}}, tok)
	servertest.MustStatus(t, r, http.StatusOK)
	for _, d := range quiretest.List(t, r.JSON(t), "documents") {
		if quiretest.Obj(t, d)["documentId"] == id {
			return true
		}
	}
	return false
}

// settled waits for a document's actions to finish and the index to
// catch up, and fails t when any action did not complete or skip.
func settled(t *testing.T, s *quiretest.Server, tok, site, id string) {
	t.Helper()
	for _, st := range servertest.WaitActions(t, s, tok, site, id) {
		if st != "COMPLETE" && st != "SKIPPED" {
			t.Fatalf("actions of %s: %v", id, servertest.Actions(t, s, tok, site, id))
		}
	}
	// The last action's outcome is recorded; the index takes it within
	// a second (SERVICE-SPEC.md's freshness), so wait for the queue.
	servertest.WaitIndexed(t, s)
}

// waitFound waits (bounded) until word finds id, failing t otherwise.
func waitFound(t *testing.T, s *quiretest.Server, tok, site, word, id string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !fulltextHas(t, s, tok, site, word, id); {
		if time.Now().After(deadline) {
			t.Fatalf("'%s' does not find %s (actions %v)", word, id, servertest.Actions(t, s, tok, site, id))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func uploadTo(t *testing.T, s *quiretest.Server, r *quiretest.Response, body []byte) {
	t.Helper()
	if r.Status != http.StatusOK && r.Status != http.StatusCreated {
		t.Fatalf("upload URL: %d %s", r.Status, r.Body)
	}
	servertest.MustStatus(t, servertest.Put(s, quiretest.Str(t, r.JSON(t), "url"), body), http.StatusOK)
}

// TestDefaultProcessing_Doors: each door of POST /documents, upload URLs
// and POST /public/documents, with and without actions in the request.
// The content is a PDF with a text layer: only FULLTEXT puts its text in
// the index (the index reads plain text types itself), so a word of it is
// found exactly when FULLTEXT ran.
func TestDefaultProcessing_Doors(t *testing.T) {
	quiretest.NeedProgram(t, "pdftotext", "poppler-utils")
	s := servertest.PipelineServer(t, quiretest.DefaultProcessing)
	tok := s.Admin()
	defaults := []string{"OCR", "FULLTEXT"}
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			servertest.SetSiteConfig(t, s, tok, site.Query, map[string]any{"publicDocuments": map[string]any{"enabled": true}})
			sitePub := "?siteId=" + servertest.SiteID(site.Query)
			for _, tt := range []struct {
				name string
				// add creates a document whose content is pdf and
				// returns its id.
				add  func(t *testing.T, pdf []byte) string
				want []string
			}{
				{"POST /documents without actions", func(t *testing.T, pdf []byte) string {
					return servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "in/a.pdf", "isBase64": true, "content": servertest.B64(pdf)})
				}, defaults},
				{"POST /documents naming actions", func(t *testing.T, pdf []byte) string {
					return servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "in/b.pdf", "isBase64": true, "content": servertest.B64(pdf),
						"actions": []any{map[string]any{"type": "checksum", "parameters": map[string]any{"checksumType": "SHA256"}}}})
				}, []string{"CHECKSUM"}},
				{"POST /documents with actions []", func(t *testing.T, pdf []byte) string {
					return servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "in/c.pdf", "isBase64": true, "content": servertest.B64(pdf), "actions": []any{}})
				}, nil},
				{"POST /documents/upload, then PUT", func(t *testing.T, pdf []byte) string {
					r := s.Do(http.MethodPost, "/documents/upload"+site.Query, map[string]any{"path": "in/d.pdf", "contentType": "application/pdf"}, tok)
					uploadTo(t, s, r, pdf)
					return quiretest.Str(t, r.JSON(t), "documentId")
				}, defaults},
				{"POST /documents/upload naming FULLTEXT, then PUT", func(t *testing.T, pdf []byte) string {
					r := s.Do(http.MethodPost, "/documents/upload"+site.Query, map[string]any{"path": "in/e.pdf", "actions": []any{map[string]any{"type": "FULLTEXT"}}}, tok)
					uploadTo(t, s, r, pdf)
					return quiretest.Str(t, r.JSON(t), "documentId")
				}, []string{"FULLTEXT"}},
				{"GET /documents/upload, then PUT", func(t *testing.T, pdf []byte) string {
					r := s.Do(http.MethodGet, "/documents/upload"+servertest.Query(site.Query, "path=in/f.pdf"), nil, tok)
					uploadTo(t, s, r, pdf)
					return quiretest.Str(t, r.JSON(t), "documentId")
				}, defaults},
				{"POST /public/documents", func(t *testing.T, pdf []byte) string {
					r := s.Do(http.MethodPost, "/public/documents"+sitePub, map[string]any{"path": "in/g.pdf", "isBase64": true, "content": servertest.B64(pdf)}, "")
					servertest.MustStatus(t, r, http.StatusCreated)
					return quiretest.Str(t, r.JSON(t), "documentId")
				}, defaults},
				{"child document without actions", func(t *testing.T, pdf []byte) string {
					r := s.Do(http.MethodPost, "/documents"+site.Query, map[string]any{"path": "in/h.pdf", "isBase64": true, "content": servertest.B64(quiretest.TextPDF("cover")),
						"actions": []any{}, "documents": []any{map[string]any{"path": "in/h-1.pdf", "isBase64": true, "content": servertest.B64(pdf)}}}, tok)
					servertest.MustStatus(t, r, http.StatusCreated)
					return quiretest.Str(t, quiretest.Item(t, r.JSON(t), "documents", 0), "documentId")
				}, defaults},
			} {
				t.Run(tt.name, func(t *testing.T) {
					word := "quokka" + strings.ToLower(strings.NewReplacer(" ", "", "/", "", ",", "", "[", "", "]", "").Replace(tt.name)) + site.Name
					id := tt.add(t, quiretest.TextPDF("Invoice "+word+" payable"))
					settled(t, s, tok, site.Query, id)
					if got := actionTypes(t, s, tok, site.Query, id); !slices.Equal(got, tt.want) {
						t.Errorf("actions %v, want %v", got, tt.want)
					}
					if slices.Contains(tt.want, "FULLTEXT") {
						waitFound(t, s, tok, site.Query, word, id)
					} else if fulltextHas(t, s, tok, site.Query, word, id) {
						t.Errorf("'%s' finds the document without FULLTEXT", word)
					}
				})
			}
			t.Run("deep link", func(t *testing.T) {
				id := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"deepLinkPath": "https://example.com/letter.pdf"})
				if got := actionTypes(t, s, tok, site.Query, id); len(got) != 0 {
					t.Errorf("a deep link has no content to read, got actions %v", got)
				}
			})
		})
	}
}

// TestDefaultProcessing_NewVersionReplacesText: new content by PATCH, by
// an upload URL of the document and by setting an earlier version back
// each gets the defaults, and the index then holds that content's text
// only; a PATCH without content, or naming actions, adds none.
func TestDefaultProcessing_NewVersionReplacesText(t *testing.T) {
	quiretest.NeedProgram(t, "pdftotext", "poppler-utils")
	s := servertest.PipelineServer(t, quiretest.DefaultProcessing)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			pdf := func(w string) string { return servertest.B64(quiretest.TextPDF("Delivery note " + w)) }
			id := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "notes/n.pdf", "isBase64": true, "content": pdf("walrus")})
			settled(t, s, tok, site.Query, id)
			waitFound(t, s, tok, site.Query, "walrus", id)
			vs := s.Do(http.MethodGet, "/documents/"+id+"/versions"+site.Query, nil, tok)
			servertest.MustStatus(t, vs, http.StatusOK)
			first := quiretest.Str(t, quiretest.Item(t, vs.JSON(t), "documents", 0), "versionKey")
			docURL := "/documents/" + id + site.Query
			for _, tt := range []struct {
				name     string
				change   func(t *testing.T)
				word     string // found after the change ("" : the text stays)
				gone     string // not found after the change
				addTypes []string
			}{
				{"PATCH with content", func(t *testing.T) {
					servertest.MustStatus(t, s.Do(http.MethodPatch, docURL, map[string]any{"isBase64": true, "content": pdf("narwhal")}, tok), http.StatusOK)
				}, "narwhal", "walrus", []string{"OCR", "FULLTEXT"}},
				{"upload URL of the document", func(t *testing.T) {
					uploadTo(t, s, s.Do(http.MethodGet, "/documents/"+id+"/upload"+site.Query, nil, tok), quiretest.TextPDF("Delivery note quagga"))
				}, "quagga", "narwhal", []string{"OCR", "FULLTEXT"}},
				{"earlier version set back", func(t *testing.T) {
					servertest.MustStatus(t, s.Do(http.MethodPut, "/documents/"+id+"/versions"+site.Query, map[string]any{"versionKey": first}, tok), http.StatusOK)
				}, "walrus", "quagga", []string{"OCR", "FULLTEXT"}},
				{"PATCH without content", func(t *testing.T) {
					servertest.MustStatus(t, s.Do(http.MethodPatch, docURL, map[string]any{"metadata": []any{map[string]any{"key": "k", "value": "v"}}}, tok), http.StatusOK)
				}, "walrus", "", nil},
				{"PATCH with content and actions []", func(t *testing.T) {
					servertest.MustStatus(t, s.Do(http.MethodPatch, docURL, map[string]any{"isBase64": true, "content": pdf("okapi"), "actions": []any{}}, tok), http.StatusOK)
				}, "", "walrus", nil},
			} {
				t.Run(tt.name, func(t *testing.T) {
					before := actionTypes(t, s, tok, site.Query, id)
					tt.change(t)
					settled(t, s, tok, site.Query, id)
					if got := actionTypes(t, s, tok, site.Query, id); !slices.Equal(got[len(before):], tt.addTypes) {
						t.Errorf("actions added %v, want %v", got[len(before):], tt.addTypes)
					}
					if tt.word != "" {
						waitFound(t, s, tok, site.Query, tt.word, id)
					}
					if tt.gone != "" && fulltextHas(t, s, tok, site.Query, tt.gone, id) {
						t.Errorf("'%s', the replaced content's word, still finds the document", tt.gone)
					}
				})
			}
		})
	}
}

// TestDefaultProcessing_ScanUploadedAsTheConsoleDoes: a scanned letter (a
// PNG of text) sent as the console sends a file (POST /documents/upload
// with its path and type, then PUT of the bytes) is read by OCR and found
// by a word printed on it.
func TestDefaultProcessing_ScanUploadedAsTheConsoleDoes(t *testing.T) {
	quiretest.NeedProgram(t, "tesseract", "tesseract-ocr")
	s := servertest.PipelineServer(t, quiretest.DefaultProcessing)
	tok := s.Admin()
	scan := quiretest.PNG(quiretest.TextImage("Dear customer", "your zebracorn order shipped"))
	r := s.Do(http.MethodPost, "/documents/upload", map[string]any{"path": "post/letter.png", "contentType": "image/png"}, tok)
	uploadTo(t, s, r, scan)
	id := quiretest.Str(t, r.JSON(t), "documentId")
	settled(t, s, tok, "", id)
	acts := servertest.Actions(t, s, tok, "", id)
	if len(acts) != 2 || acts[0]["type"] != "OCR" || acts[0]["status"] != "COMPLETE" || acts[1]["type"] != "FULLTEXT" {
		t.Fatalf("actions %v, want OCR COMPLETE then FULLTEXT", acts)
	}
	waitFound(t, s, tok, "", "zebracorn", id)
}

// TestDefaultProcessing_SiteSetting: the site's processing.defaultActions
// (PATCH /sites/{siteId}/configuration) is what a document created
// without actions gets: another list, none, or the default again when
// the setting is removed; each site its own.
func TestDefaultProcessing_SiteSetting(t *testing.T) {
	s := servertest.PipelineServer(t, quiretest.DefaultProcessing)
	tok := s.Admin()
	for _, tt := range []struct {
		name    string
		setting any // processing.defaultActions; nil: not set
		want    []string
	}{
		{"checksum only", []string{"CHECKSUM"}, []string{"CHECKSUM"}},
		{"none", []string{}, nil},
		{"FULLTEXT then ANTIVIRUS", []string{"FULLTEXT", "ANTIVIRUS"}, []string{"FULLTEXT", "ANTIVIRUS"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			servertest.SetSiteConfig(t, s, tok, "?siteId=finance", map[string]any{"processing": map[string]any{"defaultActions": tt.setting}})
			id := servertest.AddDoc(t, s, tok, "?siteId=finance", map[string]any{"path": "s.txt", "content": "x", "contentType": "text/plain"})
			if got := actionTypes(t, s, tok, "?siteId=finance", id); !slices.Equal(got, tt.want) {
				t.Errorf("finance: actions %v, want %v", got, tt.want)
			}
			// The default site keeps the default (OCR, FULLTEXT: a text
			// gets no OCR).
			other := servertest.AddDoc(t, s, tok, "", map[string]any{"path": "s.txt", "content": "x", "contentType": "text/plain"})
			if got := actionTypes(t, s, tok, "", other); !slices.Equal(got, []string{"FULLTEXT"}) {
				t.Errorf("default site: actions %v, want FULLTEXT", got)
			}
		})
	}
}
