package intake_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// TestDefaultProcessing_ScanThroughEachDoor (issue 46): a scanned letter,
// a PDF whose page is only an image of text, delivered with no actions
// named through each door a scanner uses — POST /documents, a WebDAV PUT
// with the site's API key, a watched folder whose intake profile names
// none — is read by the default processing (OCR, FULLTEXT) and found by
// POST /searchFulltext for a word printed on it, and only that letter.
func TestDefaultProcessing_ScanThroughEachDoor(t *testing.T) {
	for _, p := range [][2]string{{"tesseract", "tesseract-ocr"}, {"pdftoppm", "poppler-utils"}, {"pdfimages", "poppler-utils"}, {"pdftotext", "poppler-utils"}} {
		quiretest.NeedProgram(t, p[0], p[1])
	}
	root := t.TempDir()
	s := quiretest.NewServer(t, quiretest.DefaultProcessing, intakeRoot(root), func(c *quiretest.Config) { c.Pipeline.RetryBase = 50 * time.Millisecond })
	admin := s.Admin()
	key := servertest.APIKey(t, s, "READ", "WRITE", "DELETE")
	servertest.AddIntakeProfile(t, s, admin, map[string]any{"name": "scanner", "pathTemplate": "Scans/{filename}",
		"watchFolder": map[string]any{"stableSeconds": 1}})
	watched := filepath.Join(root, "default", "scanner")
	servertest.WaitFor(t, "the watched folder", func() bool { return exists(watched) })

	for _, tc := range []struct {
		door, path, word string
		deliver          func(t *testing.T, pdf []byte)
	}{
		{"POST /documents without actions", "post/letter.pdf", "Walrusberry", func(t *testing.T, pdf []byte) {
			servertest.AddDoc(t, s, admin, "", map[string]any{"path": "post/letter.pdf", "contentType": "application/pdf", "isBase64": true, "content": servertest.B64(pdf)})
		}},
		{"WebDAV PUT", "dav/letter.pdf", "Pelicanfig", func(t *testing.T, pdf []byte) {
			if code, b, _ := servertest.DavDo(t, s, "MKCOL", "/dav/default/dav", key, nil, nil); code != http.StatusCreated {
				t.Fatalf("MKCOL = %d %s", code, b)
			}
			if code, b, _ := servertest.DavDo(t, s, "PUT", "/dav/default/dav/letter.pdf", key, pdf, map[string]string{"Content-Type": "application/pdf"}); code != http.StatusCreated {
				t.Fatalf("PUT = %d %s", code, b)
			}
		}},
		{"watched folder", "Scans/letter.pdf", "Otterplum", func(t *testing.T, pdf []byte) {
			if err := os.WriteFile(filepath.Join(watched, "letter.pdf"), pdf, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.door, func(t *testing.T) {
			pdf := quiretest.ImagePDF(quiretest.TextImage("Dear Mr Becker,", "your "+tc.word+" invoice is enclosed."))
			tc.deliver(t, pdf)
			var id string
			servertest.WaitFor(t, tc.path+" filed", func() bool {
				ids := docsByPath(t, s, admin)[tc.path]
				if len(ids) == 1 {
					id = ids[0]
				}
				return id != ""
			})
			servertest.WaitActions(t, s, admin, "", id)
			got := map[string]string{}
			var types []string
			for _, a := range servertest.Actions(t, s, admin, "", id) {
				types = append(types, quiretest.Str(t, a, "type"))
				got[quiretest.Str(t, a, "type")] = quiretest.Str(t, a, "status")
			}
			if strings.Join(types, " ") != "OCR FULLTEXT" || got["OCR"] != "COMPLETE" || got["FULLTEXT"] != "COMPLETE" {
				t.Fatalf("actions %v, want OCR and FULLTEXT COMPLETE", servertest.Actions(t, s, admin, "", id))
			}
			var found []any
			servertest.WaitFor(t, "'"+tc.word+"' finds "+tc.path, func() bool {
				r := s.Do(http.MethodPost, "/searchFulltext", map[string]any{"query": map[string]any{"text": strings.ToLower(tc.word)}}, admin)
				servertest.MustStatus(t, r, http.StatusOK)
				found = quiretest.List(t, r.JSON(t), "documents")
				return len(found) > 0
			})
			if len(found) != 1 || quiretest.Obj(t, found[0])["documentId"] != id {
				t.Errorf("'%s' finds %v, want only %s", tc.word, found, id)
			}
		})
	}
}
