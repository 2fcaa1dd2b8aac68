package pipeline_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"quire/pipeline"
	"quire/quiretest"
	"quire/storage"
)

// TestOCR_PendingRenditionSurvivesStop: OCR records its text and names
// the PDF/A it will keep; the pipeline stops before the PDF/A is built
// (background work held, then cancelled by Stop, as a stopping process
// or a deposed leader cancels it). The promise is in the store: a new
// pipeline on the same store (a restart, a new leader) finds the pending
// rendition and keeps the searchable PDF under the id the action named,
// and the record goes. A document deleted meanwhile leaves neither a
// record nor an artifact.
func TestOCR_PendingRenditionSurvivesStop(t *testing.T) {
	s := ocrServer(t)
	tok := s.Admin()
	old := s.Node.Pipeline
	release := pipeline.HoldBackground(old)
	kept := addScan(t, s, tok, "default", "kept.pdf", "application/pdf", quiretest.ImagePDF(quiretest.TextImage("Zebracorn pending letter")), nil)
	gone := addScan(t, s, tok, "default", "gone.pdf", "application/pdf", quiretest.ImagePDF(quiretest.TextImage("Zebracorn deleted letter")), nil)
	art := map[string]string{}
	for _, id := range []string{kept, gone} {
		waitComplete(t, s, tok, id)
		md, _ := ocrAction(t, s, tok, "default", id)["metadata"].(map[string]any)
		a, _ := md["artifactId"].(string)
		if a == "" {
			t.Fatalf("OCR of %s names no searchable PDF: %v", id, md)
		}
		art[id] = a
		r, err := s.Node.DB.PendingRendition("default", id, a)
		if err != nil {
			t.Fatalf("the OCR outcome of %s recorded no pending rendition: %v", id, err)
		}
		if r.ArtifactID != a || r.DocumentID != id || r.SiteID != "default" || r.ContentSHA256 == "" {
			t.Fatalf("pending rendition of %s: %+v", id, r)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a stop that cancels at once, as a deposed leader's
	old.Stop(ctx)
	release()
	if ar := s.Do(http.MethodGet, "/documents/"+kept+"/artifacts", nil, tok); strings.Contains(string(ar.Body), art[kept]) {
		t.Fatalf("the held PDF/A was kept before the stop: %s", ar.Body)
	}
	if _, err := s.Node.DB.PendingRendition("default", kept, art[kept]); err != nil {
		t.Fatalf("the stop lost the pending rendition: %v", err)
	}

	if r := s.Do(http.MethodDelete, "/documents/"+gone, nil, tok); r.Status != http.StatusOK {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if _, err := s.Node.DB.PendingRendition("default", gone, art[gone]); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("deleting the document left its pending rendition: %v", err)
	}

	next := pipeline.Successor(old)
	t.Cleanup(func() { next.Close(context.Background()) })
	if err := next.Start(); err != nil {
		t.Fatal(err)
	}
	ar := waitArtifact(t, s, tok, "default", kept, art[kept])
	if !strings.Contains(string(ar), `"artifactCategory":"OCR"`) {
		t.Fatalf("OCR artifact %q: %s", art[kept], ar)
	}
	if _, err := s.Node.DB.PendingRendition("default", kept, art[kept]); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("the kept rendition is still pending: %v", err)
	}
	// The artifact is the searchable PDF of the scan.
	c := s.Do(http.MethodGet, "/documents/"+kept+"/content?artifactId="+art[kept], nil, tok)
	u, _ := c.JSON(t)["contentUrl"].(string)
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	pdf, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !strings.HasPrefix(string(pdf), "%PDF") {
		t.Fatalf("artifact content: %v %.40q", err, pdf)
	}
	fn := filepath.Join(t.TempDir(), "a.pdf")
	if err := os.WriteFile(fn, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	txt, err := exec.Command("pdftotext", fn, "-").Output()
	if err != nil || !strings.Contains(string(txt), "Zebracorn") {
		t.Fatalf("the kept PDF/A has no text layer with the scan's words: %v %q", err, txt)
	}
	// The deleted document's rendition was not made: no artifact record.
	if _, err := s.Node.DB.GetDocument("default", art[gone]); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("a rendition of the deleted document was kept: %v", err)
	}
	n := 0
	if err := s.Node.DB.PendingRenditions(func(storage.PendingRendition) error { n++; return nil }); err != nil || n != 0 {
		t.Fatalf("pending renditions left: %d %v", n, err)
	}
}
