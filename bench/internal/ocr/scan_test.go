package ocr

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestScan_ImageOnlyPages: the OCR rows' scans are PDFs of A4 pages with
// no text layer (the pipeline's OCR takes a PDF's own text instead of
// reading it when every page has some, which would make the throughput
// row measure pdftotext), one distinct marker word per page.
func TestScan_ImageOnlyPages(t *testing.T) {
	for _, p := range []string{"pdfinfo", "pdftotext"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Fatalf("%s not found: install the Debian package poppler-utils (make deps does)", p)
		}
	}
	sd, err := makeScan(ocrSeed, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fn := filepath.Join(dir, "scan.pdf")
	if err := os.WriteFile(fn, sd.pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	info, err := exec.Command("pdfinfo", fn).CombinedOutput()
	if err != nil {
		t.Fatalf("pdfinfo: %v: %s", err, info)
	}
	for _, want := range []string{`(?m)^Pages:\s+2$`, `(?m)^Page size:\s+595 x 842 pts \(A4\)`} {
		if !regexp.MustCompile(want).Match(info) {
			t.Errorf("pdfinfo does not match %s:\n%s", want, info)
		}
	}
	text, err := exec.Command("pdftotext", fn, "-").CombinedOutput()
	if err != nil {
		t.Fatalf("pdftotext: %v: %s", err, text)
	}
	if s := strings.TrimSpace(strings.ReplaceAll(string(text), "\f", "")); s != "" {
		t.Errorf("the scan has a text layer: %q", s)
	}
	if len(sd.markers) != 2 || sd.markers[0] == sd.markers[1] {
		t.Errorf("markers %v: want two distinct words", sd.markers)
	}
	if n, missing := markersIn("... "+strings.ToUpper(sd.markers[1])+" ...", sd.markers); n != 1 || missing != sd.markers[0] {
		t.Errorf("markersIn = %d, %q; want 1, %q", n, missing, sd.markers[0])
	}
}
