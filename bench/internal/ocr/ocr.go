package ocr

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"quire/storage"

	"quire/bench/internal/harness"
)

// The OCR rows (issue 46; go run ./bench -ocr-only runs them alone), on
// scans generated in the run (scan.go: A4 at 300 dpi, gray JPEG in a PDF
// without a text layer, a typed page of office English each):
//
//   - throughput: ocrDocs PDFs of -ocr-pages pages each are created with
//     an OCR action at once, one per pipeline worker; pages per minute
//     from the first create until every OCR action has finished (the
//     text is recorded and FULLTEXT can run), beside tesseract run
//     directly on the same page images in the same run, as many at a time
//     as the pipeline has workers. Quire's OCR reads each page with one
//     tesseract pass (pipeline/ocr/pages.go) and builds the searchable
//     PDF/A after the action (pipeline/ocr/pdfa.go): the note gives the
//     time until every rendition was kept too. An info row gives the CPU
//     time per page (the server and its engines, /proc's utime+stime with
//     cutime+cstime, to the actions done and to the renditions kept)
//     against the tesseract processes': it moves less with the load of a
//     shared machine than the wall-time rate. An info row shows ocrmypdf
//     run directly with the options the pipeline used before (issue 46's
//     speed work) on the same PDFs;
//   - upload to searchable: one scan of -ocr-scan-pages pages (10) is
//     created and POST /searchFulltext is polled for a word printed only
//     on its last page until it finds the document. The request names OCR
//     and FULLTEXT (characterMax -1: FULLTEXT keeps the first 2,048
//     characters otherwise) while the server has no default processing;
//     once a
//     document created without actions gets OCR and FULLTEXT by default
//     (issue 46, processing.defaultActions), the row names none and says
//     so (-ocr-defaults chooses); a search that still finds nothing 10 s
//     after every action is done is a MISS naming what the actions did.
//     Beside it: tesseract reading the same pages one after another (the
//     pipeline reads a document's pages in parallel, up to the cores).
//
// Every run checks that OCR read the pages: each page's marker word must
// be in the text (GET /documents/{id}/ocr; tesseract's and ocrmypdf's
// output for the baselines).
const (
	ocrDocs       = harness.PipelineWorkers // throughput documents: one per worker
	ocrPages      = 5                       // pages per throughput document
	ocrPagesQuick = 1
	ocrScanPages  = 10 // pages of the upload-to-searchable scan
	ocrScanQuick  = 3
	ocrTarget     = 0.8 // quire pages/min / tesseract pages/min
	ocrSeed       = 46
	ocrWait       = 30 * time.Minute // bound of one OCR row's wait
)

// ocrmypdfArgs are the ocrmypdf options the pipeline used before it read
// pages with tesseract itself (issue 46), for the ocrmypdf info row.
var ocrmypdfArgs = []string{"--rotate-pages", "--rotate-pages-threshold", "2", "--deskew", "--skip-text",
	"-l", "eng", "--output-type", "pdfa", "--jobs", "1", "--tesseract-timeout", "120"}

// ocrLanguages are the languages the server reads a site's scans in when
// the site chose none (storage.DefaultOCRLanguages, those tesseract has):
// the tesseract baseline reads the same pages in the same languages.
func ocrLanguages(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "tesseract", "--list-langs").Output()
	if err != nil {
		return "eng"
	}
	have := strings.Fields(string(out))
	var langs []string
	for _, l := range storage.DefaultOCRLanguages {
		if slices.Contains(have, l) {
			langs = append(langs, l)
		}
	}
	if len(langs) == 0 {
		return "eng"
	}
	return strings.Join(langs, "+")
}

// ocrEnv is the engines' environment: one thread per tesseract, as
// ocrmypdf sets it for a --jobs 1 run of more than one page (its
// tesseract plugin: OMP_THREAD_LIMIT = jobs / pages, at least 1).
func ocrEnv() []string { return append(os.Environ(), "OMP_THREAD_LIMIT=1") }

// ocrBench runs the OCR rows on a server of its own.
func (s *session) ocrBench(ctx context.Context) error {
	for _, p := range []string{"tesseract", "ocrmypdf", "pdftotext"} {
		if _, err := exec.LookPath(p); err != nil {
			s.Rep.NotMeasured("OCR rows", fmt.Sprintf("no %s on PATH (make deps installs it)", p))
			return nil
		}
	}
	pages, scanPages := s.Cfg.OCRPages, s.Cfg.OCRScanPages
	if pages <= 0 {
		pages = ocrPages
		if s.Cfg.Quick {
			pages = ocrPagesQuick
		}
	}
	if scanPages <= 0 {
		scanPages = ocrScanPages
		if s.Cfg.Quick {
			scanPages = ocrScanQuick
		}
	}
	dir := filepath.Join(s.Root, "ocr-pages")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	s.Logf("ocr: generating %d scans of %d pages and one of %d (A4, 300 dpi)", ocrDocs, pages, scanPages)
	docs := make([]scanDoc, ocrDocs)
	var jpegs []string // every page of docs, for tesseract
	var markers []string
	for d := range docs {
		sd, err := makeScan(ocrSeed, d, pages)
		if err != nil {
			return fmt.Errorf("ocr pages: %w", err)
		}
		docs[d] = sd
		fns, err := writePages(dir, fmt.Sprintf("d%d", d), sd)
		if err != nil {
			return err
		}
		jpegs = append(jpegs, fns...)
		markers = append(markers, sd.markers...)
	}
	scan, err := makeScan(ocrSeed, ocrDocs, scanPages)
	if err != nil {
		return fmt.Errorf("ocr pages: %w", err)
	}
	scanFiles, err := writePages(dir, "scan", scan)
	if err != nil {
		return err
	}
	total := ocrDocs * pages

	s.Logf("ocr baseline: tesseract on %d pages, %d at a time", total, harness.PipelineWorkers)
	tessTook, tessText, tessCPU, err := tesseractPagesCPU(ctx, dir, jpegs, harness.PipelineWorkers)
	if err != nil {
		return fmt.Errorf("tesseract baseline: %w", err)
	}
	tessFound, tessMissing := markersIn(tessText, markers)

	srv, err := harness.StartServer(ctx, s.Cfg.Bin, filepath.Join(s.Root, "ocr"), filepath.Join(s.Root, "ocr.log"))
	if err != nil {
		return err
	}
	defer srv.Stop()
	idle := srv.RSS.Current()
	srv.RSS.ResetPeak()
	s.Logf("quire ocr: %d PDFs of %d pages with an OCR action", ocrDocs, pages)
	q, err := quireOCR(ctx, srv, docs)
	if err != nil {
		return srv.WithLog(err)
	}
	s.Logf("ocr: ocrmypdf on the same %d PDFs, %d at a time", ocrDocs, harness.PipelineWorkers)
	myTook, myText, err := ocrmypdfDocs(ctx, dir, docs, harness.PipelineWorkers)
	if err != nil {
		return fmt.Errorf("ocrmypdf run directly: %w", err)
	}
	myFound, myMissing := markersIn(myText, markers)

	perMin := func(d time.Duration) float64 { return float64(total) / d.Minutes() }
	name := fmt.Sprintf("OCR throughput, %d scanned pages (%d PDFs of %d), OCR action", total, ocrDocs, pages)
	if q.failed != "" {
		s.Rep.Rows = append(s.Rep.Rows, harness.Row{Name: name, Quire: "failed", Baseline: fmt.Sprintf("%.1f pages/min", perMin(tessTook)), Ratio: "-",
			Target: fmt.Sprintf(">= %.1f", ocrTarget), Status: "MISS"})
		s.Rep.Note("OCR throughput: %s", q.failed)
	} else {
		ratio := perMin(q.took) / perMin(tessTook)
		s.Rep.Rows = append(s.Rep.Rows, harness.Row{Name: name,
			Quire: fmt.Sprintf("%.1f pages/min", perMin(q.took)), Baseline: fmt.Sprintf("%.1f pages/min", perMin(tessTook)),
			Ratio: fmt.Sprintf("%.2f", ratio), Target: fmt.Sprintf(">= %.1f", ocrTarget), Status: harness.Status(ratio >= ocrTarget && q.found == total)})
	}
	if q.cpuAll > 0 && tessCPU > 0 {
		// CPU time moves less than wall time with the load of a shared
		// machine: what each page cost, whatever else ran.
		s.Rep.Rows = append(s.Rep.Rows, harness.Row{Name: "  CPU per page: server and engines, OCR actions done (PDF/A kept too)",
			Quire:    fmt.Sprintf("%.2f s (%.2f s)", q.cpu.Seconds()/float64(total), q.cpuAll.Seconds()/float64(total)),
			Baseline: fmt.Sprintf("%.2f s", tessCPU.Seconds()/float64(total)),
			Ratio:    fmt.Sprintf("%.2f (%.2f)", q.cpu.Seconds()/tessCPU.Seconds(), q.cpuAll.Seconds()/tessCPU.Seconds()), Target: "-", Status: "info"})
	}
	s.Rep.Rows = append(s.Rep.Rows, harness.Row{Name: "  ocrmypdf run directly (the pipeline's options before issue 46)",
		Quire: fmt.Sprintf("%.1f pages/min", perMin(myTook)), Baseline: fmt.Sprintf("%.1f pages/min", perMin(tessTook)),
		Ratio: fmt.Sprintf("%.2f", perMin(myTook)/perMin(tessTook)), Target: "-", Status: "info"})
	s.Rep.Note("OCR throughput: quire %.1fs from the first create to the last OCR action done (the searchable PDF/A renditions, built after the actions, were all kept at %s), tesseract %.1fs, ocrmypdf %.1fs; markers read (one made-up word per page): quire %d/%d, tesseract %d/%d, ocrmypdf %d/%d%s",
		q.took.Seconds(), q.renditions, tessTook.Seconds(), myTook.Seconds(), q.found, total, tessFound, total, myFound, total, missingNote(q.missing, tessMissing, myMissing))
	s.Rep.Note("OCR baselines: %s (txt, -l %s: the server's default languages, --dpi %d) on each page's JPEG, %d processes at a time (the pipeline's workers), OMP_THREAD_LIMIT=1 as ocrmypdf sets it; ocrmypdf %s on each PDF, then pdftotext, %d at a time",
		tesseractVersion(ctx), ocrLanguages(ctx), scanDPI, harness.PipelineWorkers, strings.Join(ocrmypdfArgs, " "), harness.PipelineWorkers)
	s.Rep.AddAnon("server peak anonymous memory, OCR", idle, srv.RSS.ResetPeak(), harness.AnonTarget)
	return s.scanToSearchable(ctx, srv, dir, scan, scanFiles)
}

// missingNote names the first marker each reader missed.
func missingNote(q, tess, my string) string {
	var parts []string
	for _, m := range [][2]string{{"quire", q}, {"tesseract", tess}, {"ocrmypdf", my}} {
		if m[1] != "" {
			parts = append(parts, fmt.Sprintf("%s missed %s", m[0], m[1]))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (first missed: " + strings.Join(parts, ", ") + ")"
}

// writePages writes a scan's pages as JPEG files named prefix-N.jpg and
// returns their paths.
func writePages(dir, prefix string, sd scanDoc) ([]string, error) {
	var fns []string
	for i, jb := range sd.pages {
		fn := filepath.Join(dir, fmt.Sprintf("%s-%02d.jpg", prefix, i+1))
		if err := os.WriteFile(fn, jb, 0o644); err != nil {
			return nil, err
		}
		fns = append(fns, fn)
	}
	return fns, nil
}

// tesseractPages reads every page file with tesseract, workers at a time,
// and returns the time it took and the text of all pages.
func tesseractPages(ctx context.Context, dir string, pages []string, workers int) (time.Duration, string, error) {
	took, text, _, err := tesseractPagesCPU(ctx, dir, pages, workers)
	return took, text, err
}

// tesseractPagesCPU is tesseractPages that also returns the CPU time the
// tesseract processes used.
func tesseractPagesCPU(ctx context.Context, dir string, pages []string, workers int) (time.Duration, string, time.Duration, error) {
	texts := make([]string, len(pages))
	var mu sync.Mutex
	var cpu time.Duration
	t0 := time.Now()
	err := harness.Parallel(ctx, len(pages), workers, func(i int) error {
		out := strings.TrimSuffix(pages[i], ".jpg") + "-tess"
		cmd := exec.CommandContext(ctx, "tesseract", pages[i], out, "-l", ocrLanguages(ctx), "--dpi", strconv.Itoa(scanDPI))
		cmd.Dir, cmd.Env = dir, ocrEnv()
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("tesseract %s: %w: %s", filepath.Base(pages[i]), err, harness.Tail(b))
		}
		mu.Lock()
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		mu.Unlock()
		b, err := os.ReadFile(out + ".txt")
		texts[i] = string(b)
		return err
	})
	return time.Since(t0), strings.Join(texts, "\f"), cpu, err
}

// ocrmypdfDocs runs ocrmypdf with the pipeline's options on every
// document's PDF, workers at a time, then pdftotext on its output, as
// the pipeline does; it returns the time and the text of all documents.
func ocrmypdfDocs(ctx context.Context, dir string, docs []scanDoc, workers int) (time.Duration, string, error) {
	texts := make([]string, len(docs))
	for i, d := range docs {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("in-%d.pdf", i)), d.pdf, 0o644); err != nil {
			return 0, "", err
		}
	}
	t0 := time.Now()
	err := harness.Parallel(ctx, len(docs), workers, func(i int) error {
		in, out := filepath.Join(dir, fmt.Sprintf("in-%d.pdf", i)), filepath.Join(dir, fmt.Sprintf("out-%d.pdf", i))
		cmd := exec.CommandContext(ctx, "ocrmypdf", append(slices.Clone(ocrmypdfArgs), in, out)...)
		cmd.Dir, cmd.Env = dir, os.Environ()
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("ocrmypdf: %w: %s", err, harness.Tail(b))
		}
		cmd = exec.CommandContext(ctx, "pdftotext", "-enc", "UTF-8", out, out+".txt")
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("pdftotext: %w: %s", err, harness.Tail(b))
		}
		b, err := os.ReadFile(out + ".txt")
		texts[i] = string(b)
		return err
	})
	return time.Since(t0), strings.Join(texts, "\f"), err
}

// tesseractVersion is tesseract's first version line, for the report.
func tesseractVersion(ctx context.Context) string {
	b, err := exec.CommandContext(ctx, "tesseract", "--version").CombinedOutput()
	if err != nil {
		return "tesseract"
	}
	return strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
}

// ocrRun is what the throughput row measured through Quire.
type ocrRun struct {
	took    time.Duration
	found   int    // markers in the OCR texts
	missing string // the first marker missing
	failed  string // why an OCR action did not complete, "" when all did
	// renditions: when every searchable PDF/A named by the OCR actions
	// was kept (from the first create), or why not.
	renditions string
	// cpu, cpuAll: the CPU time of the server and its engines from the
	// first create until the OCR actions were done, and until the
	// renditions were kept too (0: not measured)
	cpu, cpuAll time.Duration
}

// quireOCR creates the documents at once, each with an OCR action, and
// waits until every OCR action has finished; it checks the outcome (every
// page read, none past the per-page limit, no text layer taken instead)
// and reads the OCR text back.
func quireOCR(ctx context.Context, srv *harness.Server, docs []scanDoc) (ocrRun, error) {
	var r ocrRun
	ids := make([]string, len(docs))
	cpu0, cpuErr := harness.ProcessCPU(srv.PID())
	t0 := time.Now()
	err := harness.Parallel(ctx, len(docs), len(docs), func(i int) error {
		var c struct {
			DocumentID string `json:"documentId"`
		}
		err := srv.DoJSON(ctx, http.MethodPost, "/documents", map[string]any{"path": fmt.Sprintf("scans/ocr-%02d.pdf", i), "contentType": "application/pdf",
			"isBase64": true, "content": base64.StdEncoding.EncodeToString(docs[i].pdf), "actions": []map[string]any{{"type": "OCR"}}}, http.StatusCreated, &c)
		ids[i] = c.DocumentID
		return err
	})
	if err != nil {
		return r, err
	}
	acts := make([][]harness.ActionInfo, len(docs))
	for i, id := range ids {
		if acts[i], err = harness.WaitActions(ctx, srv, id, ocrWait); err != nil {
			return r, err
		}
	}
	r.took = time.Since(t0)
	cpu1, err1 := harness.ProcessCPU(srv.PID())
	var markers []string
	var texts []string
	for i, id := range ids {
		markers = append(markers, docs[i].markers...)
		a := harness.FindAction(acts[i], "OCR")
		if why := ocrProblem(a, len(docs[i].pages)); why != "" {
			r.failed = fmt.Sprintf("document %d: %s", i, why)
			continue
		}
		text, err := ocrText(ctx, srv, id)
		if err != nil {
			return r, err
		}
		texts = append(texts, text)
	}
	r.found, r.missing = markersIn(strings.Join(texts, "\f"), markers)
	r.renditions = waitRenditions(ctx, srv, ids, acts, t0)
	cpu2, err2 := harness.ProcessCPU(srv.PID())
	if cpuErr == nil && err1 == nil && err2 == nil {
		r.cpu, r.cpuAll = cpu1-cpu0, cpu2-cpu0
	}
	return r, nil
}

// artifactInfo is an item of GET /documents/{id}/artifacts.
type artifactInfo struct {
	ArtifactID string `json:"artifactId"`
}

// waitRenditions waits until the OCR artifact each OCR action names
// (metadata artifactId) is kept, and says when that was, from t0.
func waitRenditions(ctx context.Context, srv *harness.Server, ids []string, acts [][]harness.ActionInfo, t0 time.Time) string {
	deadline := time.Now().Add(ocrWait)
	for i, id := range ids {
		a := harness.FindAction(acts[i], "OCR")
		if a == nil || a.Metadata["artifactId"] == "" {
			return fmt.Sprintf("never: document %d's OCR names no artifact", i)
		}
		for {
			var out struct {
				Documents []artifactInfo `json:"documents"`
			}
			if err := srv.DoJSON(ctx, http.MethodGet, "/documents/"+url.PathEscape(id)+"/artifacts", nil, http.StatusOK, &out); err != nil {
				return "not known: " + err.Error()
			}
			if slices.ContainsFunc(out.Documents, func(x artifactInfo) bool { return x.ArtifactID == a.Metadata["artifactId"] }) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Sprintf("not within %s (document %d)", ocrWait, i)
			}
			select {
			case <-ctx.Done():
				return ctx.Err().Error()
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return harness.Secs(time.Since(t0))
}

// ocrProblem says what is wrong with a finished OCR action of a scan of
// pages pages, "" when nothing is.
func ocrProblem(a *harness.ActionInfo, pages int) string {
	switch {
	case a == nil:
		return "no OCR action"
	case a.Status != "COMPLETE":
		return fmt.Sprintf("OCR %s: %s", a.Status, a.Message)
	case a.Metadata["textLayer"] == "true":
		return "OCR took a text layer instead of reading the scan (the generated PDF has text)"
	case a.Metadata["pagesTimedOut"] != "":
		return "pages past the per-page limit: " + a.Metadata["pagesTimedOut"]
	case a.Metadata["pages"] != strconv.Itoa(pages):
		return fmt.Sprintf("OCR read %q pages of %d", a.Metadata["pages"], pages)
	}
	return ""
}

// ocrText reads a document's OCR text (GET /documents/{id}/ocr).
func ocrText(ctx context.Context, srv *harness.Server, id string) (string, error) {
	var out struct {
		Data *string `json:"data"`
	}
	if err := srv.DoJSON(ctx, http.MethodGet, "/documents/"+url.PathEscape(id)+"/ocr", nil, http.StatusOK, &out); err != nil {
		return "", err
	}
	if out.Data == nil {
		return "", fmt.Errorf("GET /documents/%s/ocr has no data", id)
	}
	return *out.Data, nil
}

// The values of -ocr-defaults: how the upload-to-searchable row asks for OCR.
const (
	DefaultsAuto    = "auto"    // the server's default processing when it gives OCR and FULLTEXT, else named actions
	DefaultsNamed   = "named"   // the request names OCR and FULLTEXT
	DefaultsDefault = "default" // the server's default processing, or the row is not measured
)

// givesOCRThenFulltext reports whether types has OCR and, after it,
// FULLTEXT.
func givesOCRThenFulltext(types []string) bool {
	o, f := slices.Index(types, "OCR"), slices.Index(types, "FULLTEXT")
	return o >= 0 && f > o
}

// scanToSearchable measures the time from the create of a scan until a
// word printed on its last page finds it, beside tesseract reading its
// pages one after another.
func (s *session) scanToSearchable(ctx context.Context, srv *harness.Server, dir string, scan scanDoc, files []string) error {
	pages := len(scan.pages)
	name := fmt.Sprintf("OCR: upload to searchable, a %d-page scan", pages)
	useDefault := false
	how := "the request names OCR and FULLTEXT with characterMax -1"
	if s.Cfg.OCRDefaults != DefaultsNamed {
		// A one-page scan created without actions shows what default
		// processing gives a scan on this server.
		probe, err := makeScan(ocrSeed+1, 0, 1)
		if err != nil {
			return err
		}
		id, types, err := harness.ProbeDefaults(ctx, srv, "default", map[string]any{"contentType": "application/pdf", "isBase64": true,
			"content": base64.StdEncoding.EncodeToString(probe.pdf)})
		if err != nil {
			return srv.WithLog(err)
		}
		if len(types) > 0 {
			// Let the probe's own processing end before the measured scan.
			if _, err := harness.WaitActions(ctx, srv, id, ocrWait); err != nil {
				return srv.WithLog(err)
			}
		}
		switch {
		case givesOCRThenFulltext(types):
			useDefault, how = true, fmt.Sprintf("no actions named: the server's default processing gave %s", strings.Join(types, ", "))
		case s.Cfg.OCRDefaults == DefaultsDefault:
			s.Rep.NotMeasured(name+" (default processing)", fmt.Sprintf("a scan created without actions got [%s], not OCR then FULLTEXT: default processing (processing.defaultActions) is not in force yet", strings.Join(types, ", ")))
			return nil
		default:
			how = fmt.Sprintf("the request names OCR and FULLTEXT with characterMax -1 (a scan created without actions got [%s]: no default processing yet)", strings.Join(types, ", "))
		}
	}
	s.Logf("ocr baseline: tesseract on the %d pages one after another", pages)
	seq, _, err := tesseractPages(ctx, dir, files, 1)
	if err != nil {
		return fmt.Errorf("tesseract baseline: %w", err)
	}
	word := scan.markers[pages-1]
	// Through the upload URL, as a scanner's app sends a scan: a 10-page
	// scan is above POST /documents' 5 MB of inline content.
	body := map[string]any{"path": fmt.Sprintf("scans/letter-%dp.pdf", pages), "contentType": "application/pdf"}
	if !useDefault {
		// FULLTEXT keeps the first 2,048 characters unless told otherwise
		// (FormKiQ's characterMax): a word on page 10 needs them all.
		body["actions"] = []map[string]any{{"type": "OCR"}, {"type": "FULLTEXT", "parameters": map[string]any{"characterMax": "-1"}}}
	}
	s.Logf("quire: a %d-page scan until %q finds it", pages, word)
	t0 := time.Now()
	var c harness.UploadResponse
	if err := srv.DoJSON(ctx, http.MethodPost, "/documents/upload", body, http.StatusCreated, &c); err != nil {
		return srv.WithLog(err)
	}
	if err := harness.PutUpload(ctx, srv, c.URL, scan.pdf, "application/pdf"); err != nil {
		return srv.WithLog(err)
	}
	answered := time.Since(t0)
	// Poll the search, and the actions until they are all done; the
	// search must find the document within searchGrace of that (a second
	// of index lag is the bound, SERVICE-SPEC's read-your-writes).
	const searchGrace = 10 * time.Second
	var ocrDone, allDone time.Duration
	var acts []harness.ActionInfo
	for {
		if time.Since(t0) > ocrWait {
			return srv.WithLog(fmt.Errorf("%d-page scan: actions not done after %s: %+v", pages, ocrWait, acts))
		}
		if allDone == 0 {
			var err error
			if acts, err = harness.DocumentActions(ctx, srv, c.DocumentID); err != nil {
				return srv.WithLog(err)
			}
			if a := harness.FindAction(acts, "OCR"); a != nil && harness.FinalAction(a.Status) && ocrDone == 0 {
				ocrDone = time.Since(t0)
				if why := ocrProblem(a, pages); why != "" {
					s.Rep.Rows = append(s.Rep.Rows, harness.Row{Name: name, Quire: "failed", Baseline: harness.Secs(seq), Ratio: "-", Target: "-", Status: "MISS"})
					s.Rep.Note("upload to searchable (%s): %s", how, why)
					return nil
				}
			}
			if len(acts) > 0 && !slices.ContainsFunc(acts, func(a harness.ActionInfo) bool { return !harness.FinalAction(a.Status) }) {
				allDone = time.Since(t0)
			}
		}
		found, err := searchFinds(ctx, srv, word, c.DocumentID)
		if err != nil {
			return srv.WithLog(err)
		}
		if found {
			break
		}
		if allDone > 0 && time.Since(t0)-allDone > searchGrace {
			var done []string
			for _, a := range acts {
				done = append(done, fmt.Sprintf("%s %s %v", a.Type, a.Status, a.Metadata))
			}
			s.Rep.Rows = append(s.Rep.Rows, harness.Row{Name: name, Quire: "not found", Baseline: harness.Secs(seq), Ratio: "-", Target: "-", Status: "MISS"})
			s.Rep.Note("upload to searchable (%s): %q (page %d) found nothing %s after every action was done: %s", how, word, pages, searchGrace, strings.Join(done, "; "))
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	took := time.Since(t0)
	s.Rep.Rows = append(s.Rep.Rows, harness.Row{Name: name, Quire: harness.Secs(took), Baseline: harness.Secs(seq),
		Ratio: fmt.Sprintf("%.2f", took.Seconds()/seq.Seconds()), Target: "-", Status: "info"})
	s.Rep.Note("upload to searchable: %s; POST /documents/upload and the PUT of the scan answered in %s, the OCR action was done at %s, POST /searchFulltext found the document by %q (printed on page %d only) at %s (polled every 100 ms); baseline: tesseract reading the %d pages one after another (OMP_THREAD_LIMIT=1; the pipeline reads a document's pages in parallel, up to the cores)",
		how, harness.Millis(answered), harness.Secs(ocrDone), word, pages, harness.Secs(took), pages)
	return nil
}

// searchFinds reports whether POST /searchFulltext for word finds the
// document id.
func searchFinds(ctx context.Context, srv *harness.Server, word, id string) (bool, error) {
	var out struct {
		Documents []struct {
			DocumentID string `json:"documentId"`
		} `json:"documents"`
	}
	if err := srv.DoJSON(ctx, http.MethodPost, "/searchFulltext", map[string]any{"query": map[string]any{"text": word}}, http.StatusOK, &out); err != nil {
		return false, err
	}
	for _, d := range out.Documents {
		if d.DocumentID == id {
			return true, nil
		}
	}
	return false, nil
}
