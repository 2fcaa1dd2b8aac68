package pipeline_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quire/pipeline/pdfwork"
	"quire/quiretest"
)

// TestEngines_RelativeDataDir runs every external engine on a server whose
// data dir is given relative, as make run gives it (--data-dir ./data):
// tesseract, pdfinfo, pdfimages or pdftoppm, qpdf and ghostscript (OCR of a
// PNG, whose searchable PDF/A follows the action, and of a scanned PDF,
// with the searchable rewrite), pdftotext (FULLTEXT of a PDF),
// soffice (PDFEXPORT of a Word document), clamd (ANTIVIRUS), pdfinfo and
// qpdf (examine), and qpdf's overlay (a watermark stamped in a relative
// temp dir). Before issue 46 the engines got paths relative to the server's
// working directory while running in their scratch directory: pdfinfo
// answered "Couldn't open file 'data/tmp/quire-action-N/in.pdf'".
func TestEngines_RelativeDataDir(t *testing.T) {
	for _, p := range [][2]string{{"tesseract", "tesseract-ocr"}, {"pdfinfo", "poppler-utils"}, {"pdftoppm", "poppler-utils"},
		{"pdfimages", "poppler-utils"}, {"pdftotext", "poppler-utils"}, {"gs", "ghostscript"}, {"soffice", "libreoffice-writer-nogui"}, {"qpdf", "qpdf"}} {
		quiretest.NeedProgram(t, p[0], p[1])
	}
	clamd := quiretest.Clamd(t)
	t.Chdir(t.TempDir())
	s := quiretest.StartServer(t, "data", func(c *quiretest.Config) {
		c.Pipeline.RetryBase = 50 * time.Millisecond
		c.Pipeline.Engines.Clamd = clamd
	})
	tok := s.Admin()
	b64 := base64.StdEncoding.EncodeToString
	img := quiretest.TextImage("Relative data dir", "Zebracorn invoice")
	docs := []struct {
		name  string
		body  map[string]any
		check func(t *testing.T, id string)
	}{
		{"OCR of a PNG", map[string]any{"path": "scan.png", "contentType": "image/png", "isBase64": true, "content": b64(quiretest.PNG(img)),
			"actions": []map[string]any{{"type": "OCR"}}}, func(t *testing.T, id string) {
			wantOCR(t, s, tok, id, "Zebracorn")
			r := s.Do(http.MethodGet, "/documents/"+id+"/actions", nil, tok)
			md, _ := quiretest.Obj(t, quiretest.List(t, r.JSON(t), "actions")[0])["metadata"].(map[string]any)
			art, _ := md["artifactId"].(string)
			if art == "" {
				t.Fatalf("OCR names no searchable PDF: %s", r.Body)
			}
			waitArtifact(t, s, tok, "default", id, art)
		}},
		{"OCR of a scanned PDF, searchable rewrite", map[string]any{"path": "scan.pdf", "contentType": "application/pdf", "isBase64": true,
			"content": b64(quiretest.ImagePDF(img)),
			"actions": []map[string]any{{"type": "OCR", "parameters": map[string]any{"addPdfDetectedCharactersAsText": "true"}}}},
			func(t *testing.T, id string) { wantOCR(t, s, tok, id, "Zebracorn") }},
		{"FULLTEXT of a PDF", map[string]any{"path": "text.pdf", "contentType": "application/pdf", "isBase64": true,
			"content": b64(quiretest.TextPDF("Umbrella Logistics agreement")), "actions": []map[string]any{{"type": "FULLTEXT"}}},
			func(t *testing.T, id string) {
				r := s.Do(http.MethodGet, "/documents/"+id+"/fulltext", nil, tok)
				if c, _ := r.JSON(t)["content"].(string); !strings.Contains(c, "Umbrella") {
					t.Fatalf("fulltext: %s", r.Body)
				}
			}},
		{"PDFEXPORT of a Word document", map[string]any{"path": "memo.docx", "isBase64": true,
			"contentType": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
			"content":     b64(quiretest.DOCX("Memo")), "actions": []map[string]any{{"type": "PDFEXPORT"}}},
			func(t *testing.T, id string) {
				r := s.Do(http.MethodGet, "/documents/"+id+"/artifacts", nil, tok)
				if !strings.Contains(string(r.Body), "application/pdf") {
					t.Fatalf("no PDF rendition: %s", r.Body)
				}
			}},
		{"ANTIVIRUS", map[string]any{"path": "clean.txt", "content": "nothing to see", "actions": []map[string]any{{"type": "ANTIVIRUS"}}},
			func(t *testing.T, id string) {
				r := s.Do(http.MethodGet, "/documents/"+id+"/tags/CLAMAV_SCAN_STATUS", nil, tok)
				if v := r.JSON(t)["value"]; v != "CLEAN" {
					t.Fatalf("scan status %s", r.Body)
				}
			}},
	}
	ids := make([]string, len(docs))
	for i, d := range docs {
		r := s.Do(http.MethodPost, "/documents", d.body, tok)
		if r.Status != http.StatusCreated {
			t.Fatalf("%s: add: %d %s", d.name, r.Status, r.Body)
		}
		ids[i] = quiretest.Str(t, r.JSON(t), "documentId")
	}
	for i, d := range docs {
		t.Run(d.name, func(t *testing.T) {
			waitComplete(t, s, tok, ids[i])
			d.check(t, ids[i])
		})
	}
	t.Run("examine PDF", func(t *testing.T) {
		r := s.Do(http.MethodGet, "/objects/examine/pdf", nil, tok)
		m := r.JSON(t)
		req, err := http.NewRequest(http.MethodPut, quiretest.Str(t, m, "uploadUrl"), bytes.NewReader(quiretest.FormPDF("Invoice 7", [][2]string{{"name", "Ann"}})))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		e := s.Do(http.MethodGet, "/objects/examine/"+quiretest.Str(t, m, "id")+"/pdf", nil, tok)
		if e.Status != http.StatusCreated || !strings.Contains(string(e.Body), `"name"`) {
			t.Fatalf("examine: %d %s", e.Status, e.Body)
		}
	})
	t.Run("watermark in a relative temp dir", func(t *testing.T) {
		if err := os.Mkdir("wm", 0o700); err != nil {
			t.Fatal(err)
		}
		st, err := pdfwork.Watermark(context.Background(), "wm", bytes.NewReader(quiretest.TextPDF("Contract")), "application/pdf",
			[]pdfwork.Mark{{Text: "DRAFT", FontSize: 48, Opacity: 0.5, XAnchor: "CENTER", YAnchor: "CENTER"}})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if st.Size == 0 || !filepath.IsAbs(st.Name()) && !strings.HasPrefix(st.Name(), "wm") {
			t.Fatalf("stamped %s, %d bytes", st.Name(), st.Size)
		}
	})
}

// waitComplete waits until every action of a document is COMPLETE, and
// fails with their messages when one fails.
func waitComplete(t *testing.T, s *quiretest.Server, tok, id string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		r := s.Do(http.MethodGet, "/documents/"+id+"/actions", nil, tok)
		acts := quiretest.List(t, r.JSON(t), "actions")
		done := len(acts) > 0
		for _, a := range acts {
			switch st := quiretest.Obj(t, a)["status"]; st {
			case "COMPLETE":
			case "FAILED", "MAX_RETRIES_REACHED", "SKIPPED":
				t.Fatalf("action %s: %s", st, r.Body)
			default:
				done = false
			}
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("actions not complete within 3m: %s", r.Body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// wantOCR checks that the document's OCR text holds want.
func wantOCR(t *testing.T, s *quiretest.Server, tok, id, want string) {
	t.Helper()
	r := s.Do(http.MethodGet, "/documents/"+id+"/ocr", nil, tok)
	if d, _ := r.JSON(t)["data"].(string); !strings.Contains(d, want) {
		t.Fatalf("OCR text lacks %q: %s", want, r.Body)
	}
}
