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
	"time"

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

// brokenGhostscript puts a gs (and an ocrmypdf, the fallback without an
// sRGB profile) that fails first on PATH, the rest of PATH after it, as a
// ghostscript broken by an upgrade would: the PDF/A cannot be made.
func brokenGhostscript(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"gs", "ocrmypdf"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\necho 'broken ghostscript for test' >&2\nexit 3\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// artifactStatus reads the OCR action's metadata.artifactStatus and
// artifactMessage through GET /documents/{id}/actions.
func artifactStatus(t *testing.T, s *quiretest.Server, tok, id string) (status, msg string) {
	t.Helper()
	md, _ := ocrAction(t, s, tok, "default", id)["metadata"].(map[string]any)
	status, _ = md["artifactStatus"].(string)
	msg, _ = md["artifactMessage"].(string)
	return status, msg
}

// waitArtifactStatus waits until the OCR action of id shows want.
func waitArtifactStatus(t *testing.T, s *quiretest.Server, tok, id, want string) string {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		st, msg := artifactStatus(t, s, tok, id)
		if st == want {
			return msg
		}
		if time.Now().After(deadline) {
			t.Fatalf("artifactStatus of %s is %q (%q) after 2m, want %q", id, st, msg, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestOCR_ArtifactStatus: the OCR action says where its searchable PDF
// stands (metadata.artifactStatus on GET /documents/{id}/actions):
// PENDING while it is being made, COMPLETE once the artifact is there,
// FAILED with a plain artifactMessage when the first make fails, or when
// the rebuilds after restarts keep failing: each start tries once, and
// after storage.MaxRenditionAttempts the rendition is given up instead of
// being tried at every start forever.
func TestOCR_ArtifactStatus(t *testing.T) {
	tests := []struct {
		name string
		// broken: ghostscript fails when the held PDF/A is released.
		broken bool
		// restarts: the pipeline stops before the PDF/A is made and is
		// started again this many times with a broken ghostscript.
		restarts int
		want     string
		msg      string
	}{
		{name: "kept", want: storage.ArtifactComplete},
		{name: "make failed", broken: true, want: storage.ArtifactFailed, msg: "the searchable PDF could not be made"},
		{name: "rebuild keeps failing", restarts: storage.MaxRenditionAttempts, want: storage.ArtifactFailed, msg: "broken ghostscript for test"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := ocrServer(t)
			tok := s.Admin()
			old := s.Node.Pipeline
			release := pipeline.HoldBackground(old)
			released := false
			defer func() {
				if !released {
					release()
				}
			}()
			id := addScan(t, s, tok, "default", "status.pdf", "application/pdf", quiretest.ImagePDF(quiretest.TextImage("Zebracorn status letter")), nil)
			md, _ := ocrAction(t, s, tok, "default", id)["metadata"].(map[string]any)
			art, _ := md["artifactId"].(string)
			if art == "" {
				t.Fatalf("OCR names no searchable PDF: %v", md)
			}
			if st, msg := artifactStatus(t, s, tok, id); st != storage.ArtifactPending || msg != "" {
				t.Fatalf("while the PDF/A is held: artifactStatus %q artifactMessage %q, want PENDING and none", st, msg)
			}
			if tc.broken || tc.restarts > 0 {
				brokenGhostscript(t)
			}
			if tc.restarts > 0 {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				old.Stop(ctx)
				release()
				released = true
				for i := 1; i <= tc.restarts; i++ {
					next := pipeline.Successor(old)
					if err := next.Start(); err != nil {
						t.Fatal(err)
					}
					deadline := time.Now().Add(2 * time.Minute)
					for {
						// Each start counts one attempt; the last one
						// gives the rendition up.
						r, err := s.Node.DB.PendingRendition("default", id, art)
						if i < tc.restarts && err == nil && r.Attempts == i && r.LastError != "" {
							break
						}
						if i == tc.restarts && errors.Is(err, storage.ErrNotFound) {
							break
						}
						if time.Now().After(deadline) {
							t.Fatalf("start %d: pending rendition %+v (%v)", i, r, err)
						}
						time.Sleep(50 * time.Millisecond)
					}
					if i < tc.restarts {
						if st, _ := artifactStatus(t, s, tok, id); st != storage.ArtifactPending {
							t.Fatalf("after failed rebuild %d of %d: artifactStatus %q, want PENDING", i, tc.restarts, st)
						}
					}
					if err := next.Close(context.Background()); err != nil {
						t.Fatal(err)
					}
				}
			} else {
				release()
				released = true
			}
			msg := waitArtifactStatus(t, s, tok, id, tc.want)
			if !strings.Contains(msg, tc.msg) || (tc.msg == "") != (msg == "") {
				t.Fatalf("artifactMessage %q, want one with %q", msg, tc.msg)
			}
			ar := s.Do(http.MethodGet, "/documents/"+id+"/artifacts", nil, tok)
			if kept := strings.Contains(string(ar.Body), art); kept != (tc.want == storage.ArtifactComplete) {
				t.Fatalf("artifact %s kept = %v with artifactStatus %s: %s", art, kept, tc.want, ar.Body)
			}
			if _, err := s.Node.DB.PendingRendition("default", id, art); !errors.Is(err, storage.ErrNotFound) {
				t.Fatalf("the rendition is still pending after %s: %v", tc.want, err)
			}
			if tc.restarts > 0 {
				// Given up: another start does not try again.
				next := pipeline.Successor(old)
				if err := next.Start(); err != nil {
					t.Fatal(err)
				}
				next.Close(context.Background())
				if st, _ := artifactStatus(t, s, tok, id); st != storage.ArtifactFailed {
					t.Fatalf("after another start: artifactStatus %q", st)
				}
			}
		})
	}
}

// TestOCR_PDFAFallbackUsesConfiguredOcrmypdf: without an sRGB profile for
// ghostscript, ocrmypdf makes the PDF/A, and it is the configured
// engines.ocrmypdf (the real one), not the first ocrmypdf on PATH (here
// a broken one): the setting takes effect.
func TestOCR_PDFAFallbackUsesConfiguredOcrmypdf(t *testing.T) {
	quiretest.NeedProgram(t, "ocrmypdf", "ocrmypdf")
	real, err := exec.LookPath("ocrmypdf")
	if err != nil {
		t.Fatal(err)
	}
	pipeline.NoSRGBProfile(t) // before the server: restored after it stops
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ocrmypdf"), []byte("#!/bin/sh\necho 'the ocrmypdf on PATH, not the configured one' >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	s := ocrServer(t, func(c *quiretest.Config) { c.Pipeline.Engines.Ocrmypdf = real })
	tok := s.Admin()
	id := addScan(t, s, tok, "default", "fallback.png", "image/png", quiretest.PNG(quiretest.TextImage("Zebracorn fallback letter")), nil)
	md, _ := ocrAction(t, s, tok, "default", id)["metadata"].(map[string]any)
	art, _ := md["artifactId"].(string)
	if msg := waitArtifactStatusDone(t, s, tok, id); msg != "" {
		t.Fatalf("the PDF/A was not made by the configured ocrmypdf: %s", msg)
	}
	waitArtifact(t, s, tok, "default", id, art)
}

// waitArtifactStatusDone waits until the OCR action's PDF/A is COMPLETE
// ("") or FAILED (its artifactMessage).
func waitArtifactStatusDone(t *testing.T, s *quiretest.Server, tok, id string) string {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		switch st, msg := artifactStatus(t, s, tok, id); st {
		case storage.ArtifactComplete:
			return ""
		case storage.ArtifactFailed:
			return "FAILED: " + msg
		}
		if time.Now().After(deadline) {
			t.Fatalf("the PDF/A of %s is neither made nor given up after 3m", id)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
