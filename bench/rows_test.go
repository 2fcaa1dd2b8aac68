package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"quire/node"
	"quire/storage"
)

// TestProcessing_ReadersAgreeWithServer reads a real node through the
// bench's readers of default processing: what a site's configuration
// holds (stored through storage, as PATCH will once it keeps the
// section) and which actions a document has. The rows decide from these
// whether default processing can be measured; a reader that silently read
// nothing would report "not measurable yet" forever, or measure the
// sustained rows without processing under the processing label.
func TestProcessing_ReadersAgreeWithServer(t *testing.T) {
	p, err := startInproc(t.TempDir(), node.ClusterConfig{})
	if err != nil {
		t.Fatalf("start a node: %v", err)
	}
	t.Cleanup(p.close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	if got, set, err := siteProcessing(ctx, p.srv, "default"); err != nil || set {
		t.Errorf("siteProcessing of a new site = %v, %v, %v; want no list", got, set, err)
	}
	for _, want := range [][]string{{"FULLTEXT"}, {}} {
		c, err := p.n.DB.SiteConfig("default")
		if err != nil {
			t.Fatal(err)
		}
		w := slices.Clone(want)
		c.Processing = &storage.ProcessingConfig{DefaultActions: &w}
		if _, err := p.n.DB.Apply(ctx, storage.MustCommand(storage.OpSetSiteConfig, "default", "bench", time.Now(), *c)); err != nil {
			t.Fatal(err)
		}
		got, set, err := siteProcessing(ctx, p.srv, "default")
		if err != nil || !set || !slices.Equal(got, want) {
			t.Errorf("siteProcessing after storing %v = %v, %v, %v", want, got, set, err)
		}
	}

	var c struct {
		DocumentID string `json:"documentId"`
	}
	if err := p.srv.doJSON(ctx, http.MethodPost, "/documents", map[string]any{"path": "a.txt", "contentType": "text/plain", "content": "a",
		"actions": []map[string]any{{"type": "CHECKSUM", "parameters": map[string]any{"checksumType": "SHA256"}}, {"type": "FULLTEXT"}}}, http.StatusCreated, &c); err != nil {
		t.Fatal(err)
	}
	acts, err := documentActions(ctx, p.srv, c.DocumentID)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, a := range acts {
		types = append(types, a.Type)
		if a.Status == "" {
			t.Errorf("action %s read without a status", a.Type)
		}
	}
	if !slices.Equal(types, []string{"CHECKSUM", "FULLTEXT"}) {
		t.Errorf("documentActions read %v, want CHECKSUM, FULLTEXT", types)
	}
	// The probe reads the same way (its document names no actions: what
	// it gets is the server's default processing, none or some).
	id, probed, err := probeDefaults(ctx, p.srv, "default", map[string]any{"contentType": "text/plain", "content": "probe"})
	if err != nil {
		t.Fatal(err)
	}
	again, err := documentActions(ctx, p.srv, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != len(probed) {
		t.Errorf("probeDefaults read %v, the document has %d actions", probed, len(again))
	}
}

// TestProcessing_Measurable: a variant is measured only when the server
// does what it asks.
func TestProcessing_Measurable(t *testing.T) {
	on := []string{"OCR", "FULLTEXT"}
	for _, tt := range []struct {
		name string
		st   processingState
		ok   bool
		why  string
	}{
		{"off, nothing applied", processingState{want: []string{}}, true, ""},
		{"off, yet applied", processingState{want: []string{}, applied: on, readBack: "no processing.defaultActions"}, false, "did not turn default processing off"},
		{"on, dropped by PATCH", processingState{want: on, readBack: "no processing.defaultActions"}, false, "did not keep the processing section"},
		{"on, stored, not applied", processingState{want: on, stored: true}, false, "does not apply it"},
		{"on, stored and applied", processingState{want: on, stored: true, applied: on}, true, ""},
		{"on, applied without OCR for text", processingState{want: on, stored: true, applied: []string{"FULLTEXT"}}, true, ""},
	} {
		ok, why := tt.st.measurable()
		if ok != tt.ok || !strings.Contains(why, tt.why) {
			t.Errorf("%s: measurable() = %v, %q; want %v, %q", tt.name, ok, why, tt.ok, tt.why)
		}
	}
}

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

// TestConsoleRows_AgreeWithConsole: the console rows' baseline sends as
// many tag requests at a time, each naming as many documents, as the
// console's bulk jobs do, and the search page's pause after a key leaves
// room for the 150 ms goal.
func TestConsoleRows_AgreeWithConsole(t *testing.T) {
	for _, c := range []struct {
		file, re string
		check    func(n int) bool
		what     string
	}{
		{"../console/js/bulk.js", `const PARALLEL = (\d+);`, func(n int) bool { return n == consoleBulkParallel }, "PARALLEL is consoleBulkParallel"},
		{"../console/js/bulkbar.js", `const TAG_BATCH = (\d+);`, func(n int) bool { return n == consoleTagBatch }, "TAG_BATCH is consoleTagBatch"},
		{"../console/pages/search.js", `const TYPING_MS = (\d+);`, func(n int) bool { return time.Duration(n)*time.Millisecond <= typingTarget/2 }, "TYPING_MS at most half of typingTarget"},
	} {
		b, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(c.re).FindSubmatch(b)
		if m == nil {
			t.Errorf("%s: no %s", c.file, c.re)
			continue
		}
		n, _ := strconv.Atoi(string(m[1]))
		if !c.check(n) {
			t.Errorf("%s: %s: want %s", c.file, m[0], c.what)
		}
	}
}

// TestScaleDigest_Row runs the replica digest row on a small corpus: it
// counts the corpus's documents, and the row and its note are reported.
func TestScaleDigest_Row(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	if err := loadCorpus(ctx, dir, newCorpus(), 200); err != nil {
		t.Fatal(err)
	}
	s := &session{rep: &report{}, root: t.TempDir(), progress: io.Discard}
	if err := s.scaleDigest(ctx, dir, 200); err != nil {
		t.Fatal(err)
	}
	if len(s.rep.rows) != 1 || !strings.HasPrefix(s.rep.rows[0].name, "replica digest walk") || s.rep.rows[0].ratio == "" {
		t.Fatalf("rows %+v", s.rep.rows)
	}
	if len(s.rep.notes) != 1 || !strings.Contains(s.rep.notes[0], ": 200 documents,") {
		t.Fatalf("notes %q", s.rep.notes)
	}
	t.Logf("%+v; %s", s.rep.rows[0], s.rep.notes[0])
}
