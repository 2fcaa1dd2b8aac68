package main

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
	ocrDocs       = pipelineWorkers // throughput documents: one per worker
	ocrPages      = 5               // pages per throughput document
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
			s.rep.notMeasured("OCR rows", fmt.Sprintf("no %s on PATH (make deps installs it)", p))
			return nil
		}
	}
	pages, scanPages := s.cfg.ocrPages, s.cfg.ocrScanPages
	if pages <= 0 {
		pages = ocrPages
		if s.cfg.quick {
			pages = ocrPagesQuick
		}
	}
	if scanPages <= 0 {
		scanPages = ocrScanPages
		if s.cfg.quick {
			scanPages = ocrScanQuick
		}
	}
	dir := filepath.Join(s.root, "ocr-pages")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	s.logf("ocr: generating %d scans of %d pages and one of %d (A4, 300 dpi)", ocrDocs, pages, scanPages)
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

	s.logf("ocr baseline: tesseract on %d pages, %d at a time", total, pipelineWorkers)
	tessTook, tessText, tessCPU, err := tesseractPagesCPU(ctx, dir, jpegs, pipelineWorkers)
	if err != nil {
		return fmt.Errorf("tesseract baseline: %w", err)
	}
	tessFound, tessMissing := markersIn(tessText, markers)

	srv, err := startServer(ctx, s.cfg.bin, filepath.Join(s.root, "ocr"), filepath.Join(s.root, "ocr.log"))
	if err != nil {
		return err
	}
	defer srv.stop()
	idle := srv.rss.current()
	srv.rss.resetPeak()
	s.logf("quire ocr: %d PDFs of %d pages with an OCR action", ocrDocs, pages)
	q, err := quireOCR(ctx, srv, docs)
	if err != nil {
		return srv.withLog(err)
	}
	s.logf("ocr: ocrmypdf on the same %d PDFs, %d at a time", ocrDocs, pipelineWorkers)
	myTook, myText, err := ocrmypdfDocs(ctx, dir, docs, pipelineWorkers)
	if err != nil {
		return fmt.Errorf("ocrmypdf run directly: %w", err)
	}
	myFound, myMissing := markersIn(myText, markers)

	perMin := func(d time.Duration) float64 { return float64(total) / d.Minutes() }
	name := fmt.Sprintf("OCR throughput, %d scanned pages (%d PDFs of %d), OCR action", total, ocrDocs, pages)
	if q.failed != "" {
		s.rep.rows = append(s.rep.rows, row{name: name, quire: "failed", baseline: fmt.Sprintf("%.1f pages/min", perMin(tessTook)), ratio: "-",
			target: fmt.Sprintf(">= %.1f", ocrTarget), status: "MISS"})
		s.rep.note("OCR throughput: %s", q.failed)
	} else {
		ratio := perMin(q.took) / perMin(tessTook)
		s.rep.rows = append(s.rep.rows, row{name: name,
			quire: fmt.Sprintf("%.1f pages/min", perMin(q.took)), baseline: fmt.Sprintf("%.1f pages/min", perMin(tessTook)),
			ratio: fmt.Sprintf("%.2f", ratio), target: fmt.Sprintf(">= %.1f", ocrTarget), status: status(ratio >= ocrTarget && q.found == total)})
	}
	if q.cpuAll > 0 && tessCPU > 0 {
		// CPU time moves less than wall time with the load of a shared
		// machine: what each page cost, whatever else ran.
		s.rep.rows = append(s.rep.rows, row{name: "  CPU per page: server and engines, OCR actions done (PDF/A kept too)",
			quire:    fmt.Sprintf("%.2f s (%.2f s)", q.cpu.Seconds()/float64(total), q.cpuAll.Seconds()/float64(total)),
			baseline: fmt.Sprintf("%.2f s", tessCPU.Seconds()/float64(total)),
			ratio:    fmt.Sprintf("%.2f (%.2f)", q.cpu.Seconds()/tessCPU.Seconds(), q.cpuAll.Seconds()/tessCPU.Seconds()), target: "-", status: "info"})
	}
	s.rep.rows = append(s.rep.rows, row{name: "  ocrmypdf run directly (the pipeline's options before issue 46)",
		quire: fmt.Sprintf("%.1f pages/min", perMin(myTook)), baseline: fmt.Sprintf("%.1f pages/min", perMin(tessTook)),
		ratio: fmt.Sprintf("%.2f", perMin(myTook)/perMin(tessTook)), target: "-", status: "info"})
	s.rep.note("OCR throughput: quire %.1fs from the first create to the last OCR action done (the searchable PDF/A renditions, built after the actions, were all kept at %s), tesseract %.1fs, ocrmypdf %.1fs; markers read (one made-up word per page): quire %d/%d, tesseract %d/%d, ocrmypdf %d/%d%s",
		q.took.Seconds(), q.renditions, tessTook.Seconds(), myTook.Seconds(), q.found, total, tessFound, total, myFound, total, missingNote(q.missing, tessMissing, myMissing))
	s.rep.note("OCR baselines: %s (txt, -l %s: the server's default languages, --dpi %d) on each page's JPEG, %d processes at a time (the pipeline's workers), OMP_THREAD_LIMIT=1 as ocrmypdf sets it; ocrmypdf %s on each PDF, then pdftotext, %d at a time",
		tesseractVersion(ctx), ocrLanguages(ctx), scanDPI, pipelineWorkers, strings.Join(ocrmypdfArgs, " "), pipelineWorkers)
	s.rep.addAnon("server peak anonymous memory, OCR", idle, srv.rss.resetPeak(), anonTarget)
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
	err := parallel(ctx, len(pages), workers, func(i int) error {
		out := strings.TrimSuffix(pages[i], ".jpg") + "-tess"
		cmd := exec.CommandContext(ctx, "tesseract", pages[i], out, "-l", ocrLanguages(ctx), "--dpi", strconv.Itoa(scanDPI))
		cmd.Dir, cmd.Env = dir, ocrEnv()
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("tesseract %s: %w: %s", filepath.Base(pages[i]), err, tail(b))
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
	err := parallel(ctx, len(docs), workers, func(i int) error {
		in, out := filepath.Join(dir, fmt.Sprintf("in-%d.pdf", i)), filepath.Join(dir, fmt.Sprintf("out-%d.pdf", i))
		cmd := exec.CommandContext(ctx, "ocrmypdf", append(slices.Clone(ocrmypdfArgs), in, out)...)
		cmd.Dir, cmd.Env = dir, os.Environ()
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("ocrmypdf: %w: %s", err, tail(b))
		}
		cmd = exec.CommandContext(ctx, "pdftotext", "-enc", "UTF-8", out, out+".txt")
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("pdftotext: %w: %s", err, tail(b))
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
func quireOCR(ctx context.Context, srv *server, docs []scanDoc) (ocrRun, error) {
	var r ocrRun
	ids := make([]string, len(docs))
	cpu0, cpuErr := processCPU(srv.pid())
	t0 := time.Now()
	err := parallel(ctx, len(docs), len(docs), func(i int) error {
		var c struct {
			DocumentID string `json:"documentId"`
		}
		err := srv.doJSON(ctx, http.MethodPost, "/documents", map[string]any{"path": fmt.Sprintf("scans/ocr-%02d.pdf", i), "contentType": "application/pdf",
			"isBase64": true, "content": base64.StdEncoding.EncodeToString(docs[i].pdf), "actions": []map[string]any{{"type": "OCR"}}}, http.StatusCreated, &c)
		ids[i] = c.DocumentID
		return err
	})
	if err != nil {
		return r, err
	}
	acts := make([][]actionInfo, len(docs))
	for i, id := range ids {
		if acts[i], err = waitActions(ctx, srv, id, ocrWait); err != nil {
			return r, err
		}
	}
	r.took = time.Since(t0)
	cpu1, err1 := processCPU(srv.pid())
	var markers []string
	var texts []string
	for i, id := range ids {
		markers = append(markers, docs[i].markers...)
		a := findAction(acts[i], "OCR")
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
	cpu2, err2 := processCPU(srv.pid())
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
func waitRenditions(ctx context.Context, srv *server, ids []string, acts [][]actionInfo, t0 time.Time) string {
	deadline := time.Now().Add(ocrWait)
	for i, id := range ids {
		a := findAction(acts[i], "OCR")
		if a == nil || a.Metadata["artifactId"] == "" {
			return fmt.Sprintf("never: document %d's OCR names no artifact", i)
		}
		for {
			var out struct {
				Documents []artifactInfo `json:"documents"`
			}
			if err := srv.doJSON(ctx, http.MethodGet, "/documents/"+url.PathEscape(id)+"/artifacts", nil, http.StatusOK, &out); err != nil {
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
	return secs(time.Since(t0))
}

// ocrProblem says what is wrong with a finished OCR action of a scan of
// pages pages, "" when nothing is.
func ocrProblem(a *actionInfo, pages int) string {
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

// actionInfo is one action as GET /documents/{id}/actions shows it.
type actionInfo struct {
	Type     string            `json:"type"`
	Status   string            `json:"status"`
	Message  string            `json:"message"`
	Metadata map[string]string `json:"metadata"`
}

// finalAction reports whether an action status is final.
func finalAction(status string) bool {
	switch status {
	case "COMPLETE", "FAILED", "SKIPPED", "MAX_RETRIES_REACHED":
		return true
	}
	return false
}

// findAction returns the last action of type typ, nil if none.
func findAction(acts []actionInfo, typ string) *actionInfo {
	for i := len(acts) - 1; i >= 0; i-- {
		if acts[i].Type == typ {
			return &acts[i]
		}
	}
	return nil
}

// documentActions reads a document's actions.
func documentActions(ctx context.Context, srv *server, id string) ([]actionInfo, error) {
	var out struct {
		Actions []actionInfo `json:"actions"`
	}
	err := srv.doJSON(ctx, http.MethodGet, "/documents/"+url.PathEscape(id)+"/actions", nil, http.StatusOK, &out)
	return out.Actions, err
}

// waitActions polls a document's actions every 100 ms until each has a
// final status, for at most limit.
func waitActions(ctx context.Context, srv *server, id string, limit time.Duration) ([]actionInfo, error) {
	deadline := time.Now().Add(limit)
	for {
		if err := srv.checkAlive(); err != nil {
			return nil, err
		}
		acts, err := documentActions(ctx, srv, id)
		if err != nil {
			return nil, err
		}
		if len(acts) > 0 && !slices.ContainsFunc(acts, func(a actionInfo) bool { return !finalAction(a.Status) }) {
			return acts, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("actions of %s not finished after %s: %+v", id, limit, acts)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ocrText reads a document's OCR text (GET /documents/{id}/ocr).
func ocrText(ctx context.Context, srv *server, id string) (string, error) {
	var out struct {
		Data *string `json:"data"`
	}
	if err := srv.doJSON(ctx, http.MethodGet, "/documents/"+url.PathEscape(id)+"/ocr", nil, http.StatusOK, &out); err != nil {
		return "", err
	}
	if out.Data == nil {
		return "", fmt.Errorf("GET /documents/%s/ocr has no data", id)
	}
	return *out.Data, nil
}

// ocrDefaults says how the upload-to-searchable row asks for OCR.
const (
	ocrDefaultsAuto    = "auto"    // the server's default processing when it gives OCR and FULLTEXT, else named actions
	ocrDefaultsNamed   = "named"   // the request names OCR and FULLTEXT
	ocrDefaultsDefault = "default" // the server's default processing, or the row is not measured
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
func (s *session) scanToSearchable(ctx context.Context, srv *server, dir string, scan scanDoc, files []string) error {
	pages := len(scan.pages)
	name := fmt.Sprintf("OCR: upload to searchable, a %d-page scan", pages)
	useDefault := false
	how := "the request names OCR and FULLTEXT with characterMax -1"
	if s.cfg.ocrDefaults != ocrDefaultsNamed {
		// A one-page scan created without actions shows what default
		// processing gives a scan on this server.
		probe, err := makeScan(ocrSeed+1, 0, 1)
		if err != nil {
			return err
		}
		id, types, err := probeDefaults(ctx, srv, "default", map[string]any{"contentType": "application/pdf", "isBase64": true,
			"content": base64.StdEncoding.EncodeToString(probe.pdf)})
		if err != nil {
			return srv.withLog(err)
		}
		if len(types) > 0 {
			// Let the probe's own processing end before the measured scan.
			if _, err := waitActions(ctx, srv, id, ocrWait); err != nil {
				return srv.withLog(err)
			}
		}
		switch {
		case givesOCRThenFulltext(types):
			useDefault, how = true, fmt.Sprintf("no actions named: the server's default processing gave %s", strings.Join(types, ", "))
		case s.cfg.ocrDefaults == ocrDefaultsDefault:
			s.rep.notMeasured(name+" (default processing)", fmt.Sprintf("a scan created without actions got [%s], not OCR then FULLTEXT: default processing (processing.defaultActions) is not in force yet", strings.Join(types, ", ")))
			return nil
		default:
			how = fmt.Sprintf("the request names OCR and FULLTEXT with characterMax -1 (a scan created without actions got [%s]: no default processing yet)", strings.Join(types, ", "))
		}
	}
	s.logf("ocr baseline: tesseract on the %d pages one after another", pages)
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
	s.logf("quire: a %d-page scan until %q finds it", pages, word)
	t0 := time.Now()
	var c uploadResponse
	if err := srv.doJSON(ctx, http.MethodPost, "/documents/upload", body, http.StatusCreated, &c); err != nil {
		return srv.withLog(err)
	}
	if err := putUpload(ctx, srv, c.URL, scan.pdf, "application/pdf"); err != nil {
		return srv.withLog(err)
	}
	answered := time.Since(t0)
	// Poll the search, and the actions until they are all done; the
	// search must find the document within searchGrace of that (a second
	// of index lag is the bound, SERVICE-SPEC's read-your-writes).
	const searchGrace = 10 * time.Second
	var ocrDone, allDone time.Duration
	var acts []actionInfo
	for {
		if time.Since(t0) > ocrWait {
			return srv.withLog(fmt.Errorf("%d-page scan: actions not done after %s: %+v", pages, ocrWait, acts))
		}
		if allDone == 0 {
			var err error
			if acts, err = documentActions(ctx, srv, c.DocumentID); err != nil {
				return srv.withLog(err)
			}
			if a := findAction(acts, "OCR"); a != nil && finalAction(a.Status) && ocrDone == 0 {
				ocrDone = time.Since(t0)
				if why := ocrProblem(a, pages); why != "" {
					s.rep.rows = append(s.rep.rows, row{name: name, quire: "failed", baseline: secs(seq), ratio: "-", target: "-", status: "MISS"})
					s.rep.note("upload to searchable (%s): %s", how, why)
					return nil
				}
			}
			if len(acts) > 0 && !slices.ContainsFunc(acts, func(a actionInfo) bool { return !finalAction(a.Status) }) {
				allDone = time.Since(t0)
			}
		}
		found, err := searchFinds(ctx, srv, word, c.DocumentID)
		if err != nil {
			return srv.withLog(err)
		}
		if found {
			break
		}
		if allDone > 0 && time.Since(t0)-allDone > searchGrace {
			var done []string
			for _, a := range acts {
				done = append(done, fmt.Sprintf("%s %s %v", a.Type, a.Status, a.Metadata))
			}
			s.rep.rows = append(s.rep.rows, row{name: name, quire: "not found", baseline: secs(seq), ratio: "-", target: "-", status: "MISS"})
			s.rep.note("upload to searchable (%s): %q (page %d) found nothing %s after every action was done: %s", how, word, pages, searchGrace, strings.Join(done, "; "))
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	took := time.Since(t0)
	s.rep.rows = append(s.rep.rows, row{name: name, quire: secs(took), baseline: secs(seq),
		ratio: fmt.Sprintf("%.2f", took.Seconds()/seq.Seconds()), target: "-", status: "info"})
	s.rep.note("upload to searchable: %s; POST /documents/upload and the PUT of the scan answered in %s, the OCR action was done at %s, POST /searchFulltext found the document by %q (printed on page %d only) at %s (polled every 100 ms); baseline: tesseract reading the %d pages one after another (OMP_THREAD_LIMIT=1; the pipeline reads a document's pages in parallel, up to the cores)",
		how, millis(answered), secs(ocrDone), word, pages, secs(took), pages)
	return nil
}

// searchFinds reports whether POST /searchFulltext for word finds the
// document id.
func searchFinds(ctx context.Context, srv *server, word, id string) (bool, error) {
	var out struct {
		Documents []struct {
			DocumentID string `json:"documentId"`
		} `json:"documents"`
	}
	if err := srv.doJSON(ctx, http.MethodPost, "/searchFulltext", map[string]any{"query": map[string]any{"text": word}}, http.StatusOK, &out); err != nil {
		return false, err
	}
	for _, d := range out.Documents {
		if d.DocumentID == id {
			return true, nil
		}
	}
	return false, nil
}

// secs formats d in seconds.
func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// notMeasured adds a row that could not be measured on this server or
// machine, and why.
func (r *report) notMeasured(name, why string) {
	r.rows = append(r.rows, row{name: name, quire: "not measured", baseline: "-", ratio: "-", target: "-", status: "n/a"})
	r.note("%s: not measured: %s", strings.TrimSpace(name), why)
}
