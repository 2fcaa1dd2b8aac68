package pipeline

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"mime"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/google/uuid"

	"quire/pipeline/convert"
	"quire/pipeline/engine"
	"quire/storage"
)

// ocrImageTypes are the image types tesseract reads directly.
var ocrImageTypes = map[string]string{
	"image/png": ".png", "image/jpeg": ".jpg", "image/tiff": ".tif", "image/bmp": ".bmp",
	"image/gif": ".gif", "image/webp": ".webp", "image/x-portable-pixmap": ".ppm",
}

// runOCR reads the text of a scan, an image or a PDF, with tesseract in
// the site's languages (processing.languages), one pass per page, pages
// in parallel (ocrpages.go): a page that reads badly is turned upright
// (tesseract's OSD) and straightened (ocrimage.go) and read again, pages
// that already carry text keep it, and each page gets
// pipeline.ocr_page_timeout. The text, pages separated by form feeds, is
// the result. A searchable PDF/A of the pages (ocrpdfa.go) is kept as an
// OCR artifact of the document: built after the action is recorded, so
// FULLTEXT and search do not wait for it; with
// addPdfDetectedCharactersAsText it is built within the action and
// promoted, so the document serves it. A PDF with text on every page is
// not recognized again: its own text is the result.
func runOCR(ctx context.Context, j *Job) (*Outcome, error) {
	if e := strings.ToUpper(j.Param("ocrEngine")); e != "" && e != "TESSERACT" {
		return nil, fmt.Errorf("ocrEngine '%s' is not available on this server; use 'TESSERACT'", j.Param("ocrEngine"))
	}
	pages := -1
	if v := strings.Trim(j.Param("ocrNumberOfPages"), `"`); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n == 0 || n < -1 {
			return nil, fmt.Errorf("invalid ocrNumberOfPages '%s'", v)
		}
		pages = n
	}
	mt, _, _ := mime.ParseMediaType(j.Doc.ContentType)
	if ocrImageTypes[mt] == "" && mt != "application/pdf" {
		return &Outcome{Status: storage.ActionSkipped, Message: fmt.Sprintf("OCR reads images and PDFs, not '%s'", j.Doc.ContentType)}, nil
	}
	conf, err := j.p.db.SiteConfig(j.Site)
	if err != nil {
		return nil, engine.Retryable(err)
	}
	langs, err := j.p.SiteOCRLanguages(ctx, conf)
	if err != nil {
		return nil, err
	}
	// An action's own ocrLanguages (checked against tesseract's when it
	// was added; checkLanguages says which is gone if one was removed
	// since) replace the site's for this scan.
	if own, ok := OCRLanguagesParam(j.paramMap()); ok && len(own) > 0 {
		langs = own
	} else if !ok {
		return nil, fmt.Errorf("invalid ocrLanguages '%s'", j.Param("ocrLanguages"))
	}
	tess, err := engine.Find(j.p.cfg.Engines.Tesseract, "tesseract", "tesseract-ocr")
	if err != nil {
		return nil, err
	}
	totext, err := engine.Find(j.p.cfg.Engines.Pdftotext, "pdftotext", "poppler-utils")
	if err != nil {
		return nil, err
	}
	dir, err := j.TempDir()
	if err != nil {
		return nil, err
	}
	// The scratch dir goes with the rendition when it is built after the
	// action; otherwise it goes now.
	owned := false
	defer func() {
		if !owned {
			os.RemoveAll(dir)
		}
	}()
	if err := checkLanguages(ctx, dir, tess, langs); err != nil {
		return nil, err
	}
	promote := strings.EqualFold(j.Param("addPdfDetectedCharactersAsText"), "true")
	// A searchable PDF is kept of a whole document, by a document that
	// may have artifacts (or promotes it as its new content).
	keep := j.Doc.ArtifactOf == "" || promote
	csvOut := strings.EqualFold(j.Param("ocrOutputType"), "CSV")
	var tables, forms bool
	for _, t := range splitList(j.Param("ocrParseTypes")) {
		tables = tables || strings.EqualFold(t, "TABLES")
		forms = forms || strings.EqualFold(t, "FORMS")
	}
	tools := ocrTools{tess: tess, langs: strings.Join(langs, "+"), wantTSV: csvOut || tables || forms}
	var list []*ocrPage
	var in string
	total := 1
	if mt == "image/tiff" {
		// A scanner's multi-page TIFF is read as the PDF of its pages
		// (img2pdf keeps each page's image as it is).
		if in, err = j.ContentFile(dir, "in.tif"); err != nil {
			return nil, err
		}
		if tiffPages(in) > 1 {
			if in, err = tiffToPDF(ctx, dir, in); err != nil {
				return nil, err
			}
			mt = "application/pdf"
		}
	}
	if mt != "application/pdf" {
		if in == "" {
			if in, err = j.ContentFile(dir, "in"+ocrImageTypes[mt]); err != nil {
				return nil, err
			}
		}
		if err := convert.CheckImageFile(in, maxOCRPixels); err != nil {
			return nil, err
		}
		if in, err = ocrInputImage(in); err != nil {
			return nil, err
		}
		dpi := imageDPI(in)
		if dpi < 70 || dpi > 2400 {
			dpi = ocrDPI // a scan without a resolution (most PNGs): read as 300 dpi
		}
		list = []*ocrPage{{n: 1, src: in, dpi: dpi}}
		in = ""
	} else {
		if tools.pdftoppm, err = engine.Find(j.p.cfg.Engines.Pdftoppm, "pdftoppm", "poppler-utils"); err != nil {
			return nil, err
		}
		if in == "" {
			if in, err = j.ContentFile(dir, "in.pdf"); err != nil {
				return nil, err
			}
		}
		var sizes [][2]float64
		var rots []int
		if total, sizes, rots, err = j.checkPDFRender(ctx, dir, tools.pdftoppm, in, &pages); err != nil {
			return nil, err
		}
		if pages < total && !promote {
			keep = false // no searchable copy of a part
		}
		// A PDF whose every page has text needs no OCR: its text is
		// the result (what FULLTEXT would read), nothing is rewritten.
		text, err := pdfPagesText(ctx, dir, totext, in, pages)
		if err == nil && allPagesHaveText(text) {
			return &Outcome{
				Texts:    []storage.TextRecord{{Kind: storage.TextOCR, ContentSHA: j.Doc.ContentSHA256, Text: truncateChars(text, -1), ContentType: "text/plain", Engine: "tesseract"}},
				Metadata: map[string]string{"pages": strconv.Itoa(strings.Count(text, "\f")), "textLayer": "true"},
				Message:  "every page has a text layer: its text is used, nothing was recognized",
			}, nil
		}
		layers := strings.Split(text, "\f")
		pdfimages, err := engine.Find(filepath.Join(filepath.Dir(tools.pdftoppm), "pdfimages"), "pdfimages", "poppler-utils")
		if err != nil {
			pdfimages, _ = engine.Find("", "pdfimages", "poppler-utils")
		}
		scans := map[int]*ocrPage{}
		if pdfimages != "" {
			if scans, err = pdfPageImages(ctx, dir, pdfimages, in, pages, sizes, rots); err != nil {
				return nil, err
			}
		}
		for n := 1; n <= pages; n++ {
			pg := scans[n]
			if pg == nil {
				pg = &ocrPage{n: n}
			}
			if n-1 < len(layers) && allPagesHaveText(layers[n-1]) {
				pg.keep, pg.layer = true, layers[n-1]
			}
			list = append(list, pg)
		}
		tools.pdf = in
	}
	tools.wantPDF = keep
	tools.bg = j.pendingArtifact != ""
	if err := j.readPages(ctx, dir, tools, list); err != nil {
		if strings.Contains(err.Error(), "Failed loading language") {
			// A language package removed since tesseract's list was
			// read: say which, as checkLanguages does.
			langCache.Lock()
			delete(langCache.have, tess)
			langCache.Unlock()
			if lerr := checkLanguages(ctx, dir, tess, langs); lerr != nil {
				return nil, lerr
			}
		}
		return nil, err
	}
	text := joinPageTexts(list)
	out := &Outcome{
		Texts:    []storage.TextRecord{{Kind: storage.TextOCR, ContentSHA: j.Doc.ContentSHA256, Text: truncateChars(text, -1), ContentType: "text/plain", Engine: "tesseract"}},
		Metadata: map[string]string{"pages": strconv.Itoa(len(list)), "languages": strings.Join(langs, "+")},
	}
	var skipped, fixed []string
	read := 0
	for _, pg := range list {
		if pg.timedOut {
			skipped = append(skipped, strconv.Itoa(pg.n))
		} else if !pg.keep {
			read++
		}
		if pg.fixed != "" {
			fixed = append(fixed, fmt.Sprintf("%d: %s", pg.n, pg.fixed))
		}
	}
	if len(skipped) > 0 {
		out.Message = fmt.Sprintf("page %s not recognized within the per-page limit of %s (pipeline.ocr_page_timeout); retry the action to try again",
			strings.Join(skipped, ", "), j.p.cfg.OCRPageTimeout)
		out.Metadata["pagesTimedOut"] = strings.Join(skipped, ",")
	}
	if len(fixed) > 0 {
		out.Metadata["pagesFixed"] = strings.Join(fixed, "; ")
	}
	if csvOut || tables || forms {
		if err := j.ocrLayout(ctx, list, csvOut, tables, forms, out); err != nil {
			return nil, err
		}
	}
	if !keep || read == 0 && in == "" {
		return out, nil
	}
	if promote || j.Doc.ArtifactOf != "" {
		pdf, err := buildSearchablePDF(ctx, dir, in, total, list, false, j.p.cfg.Engines.Ocrmypdf)
		if err != nil {
			return nil, err
		}
		if err := j.keepSearchablePDF(ctx, pdf, promote, "", out); err != nil {
			return nil, err
		}
		return out, nil
	}
	// The rendition follows the action: its artifact id is known now,
	// and the outcome records it as pending (renditions.go), so that it
	// is made even if this process stops before it is kept.
	id := j.pendingArtifact
	if id == "" {
		id = uuid.NewString()
	}
	out.Metadata["artifactId"] = id
	out.rendition = &storage.PendingRendition{ArtifactID: id, ContentSHA256: j.Doc.ContentSHA256}
	owned = true
	out.discard = func() { os.RemoveAll(dir) }
	out.background = func(bctx context.Context) {
		defer os.RemoveAll(dir)
		if err := j.keepRendition(bctx, dir, in, total, list, id); err != nil && bctx.Err() == nil {
			j.p.log.Warn("OCR searchable PDF not kept", "site", j.Site, "document", j.Doc.DocumentID, "err", err)
			// The action says so (artifactStatus FAILED): the first
			// make is given up at once, a rebuild after a start is
			// counted (renditions.go). A stop is no failure: the
			// rendition stays pending for the next start.
			j.p.failRendition(bctx, j.Site, j.Action.UserID, storage.FailRendition{DocumentID: j.Doc.DocumentID, ArtifactID: id,
				Message: "the searchable PDF could not be made: " + errorMessage(err), GiveUp: j.pendingArtifact == ""})
		}
	}
	return out, nil
}

// keepRendition builds the searchable PDF/A after the OCR action and adds
// it as the OCR artifact id, unless the document has new content since.
func (j *Job) keepRendition(ctx context.Context, dir, in string, total int, pages []*ocrPage, id string) error {
	pdf, err := buildSearchablePDF(ctx, dir, in, total, pages, true, j.p.cfg.Engines.Ocrmypdf)
	if err != nil {
		return err
	}
	doc, err := j.p.db.GetDocument(j.Site, j.Doc.DocumentID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil // deleted meanwhile
	}
	if err != nil {
		return err
	}
	if doc.ContentSHA256 != j.Doc.ContentSHA256 {
		return nil // a new version came meanwhile: its own OCR keeps its own
	}
	out := &Outcome{Metadata: map[string]string{}}
	if err := j.keepSearchablePDF(ctx, pdf, false, id, out); err != nil {
		return err
	}
	for _, c := range out.Then {
		if _, err := j.p.apply.Apply(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

// checkLanguages fails, naming the Debian package, when tesseract lacks
// one of langs (a site's processing.languages set before the package was
// removed, or on another node).
func checkLanguages(ctx context.Context, dir, tess string, langs []string) error {
	// tesseract's list is asked once and then again only when it lacks
	// a language (one may have been installed since): a process less for
	// every document.
	langCache.Lock()
	have, ok := langCache.have[tess]
	langCache.Unlock()
	if !ok || slices.ContainsFunc(langs, func(l string) bool { return !slices.Contains(have, l) }) {
		var err error
		if have, err = installedLanguages(ctx, dir, tess); err != nil {
			return err
		}
		langCache.Lock()
		langCache.have[tess] = have
		langCache.Unlock()
	}
	for _, l := range langs {
		if !slices.Contains(have, l) {
			return fmt.Errorf("tesseract has no language data for '%s' (the site's processing.languages): install the Debian package tesseract-ocr-%s", l, strings.ReplaceAll(strings.ToLower(l), "_", "-"))
		}
	}
	return nil
}

// langCache holds the languages each tesseract program listed.
var langCache = struct {
	sync.Mutex
	have map[string][]string
}{have: map[string][]string{}}

// installedLanguages lists tesseract's languages (--list-langs).
func installedLanguages(ctx context.Context, dir, tess string) ([]string, error) {
	out, err := engine.Run(ctx, dir, tess, "--list-langs")
	if err != nil {
		return nil, err
	}
	var langs []string
	for _, l := range strings.Split(string(out), "\n")[1:] {
		if l = strings.TrimSpace(l); l != "" {
			langs = append(langs, l)
		}
	}
	return langs, nil
}

// ocrInputImage returns an image ocrmypdf reads (PNG, JPEG, TIFF: what
// img2pdf embeds as it is); other formats are decoded and written as PNG.
func ocrInputImage(fn string) (string, error) {
	switch filepath.Ext(fn) {
	case ".png", ".jpg", ".tif":
		return fn, nil
	}
	f, err := os.Open(fn)
	if err != nil {
		return "", err
	}
	defer f.Close()
	img, _, err := image.Decode(f)
	if err != nil {
		return "", fmt.Errorf("the image cannot be read: %v", err)
	}
	out := strings.TrimSuffix(fn, filepath.Ext(fn)) + ".png"
	w, err := os.Create(out)
	if err != nil {
		return "", err
	}
	if err := png.Encode(w, img); err != nil {
		w.Close()
		return "", err
	}
	return out, w.Close()
}

// pdfPagesText is the text layer of a PDF's first pages (-1: all), each
// page ending with a form feed (pdftotext).
func pdfPagesText(ctx context.Context, dir, prog, fn string, pages int) (string, error) {
	dst := fn + ".txt"
	args := []string{"-enc", "UTF-8"}
	if pages > 0 {
		args = append(args, "-l", strconv.Itoa(pages))
	}
	if _, err := engine.Run(ctx, dir, prog, append(args, fn, dst)...); err != nil {
		return "", err
	}
	f, err := os.Open(dst)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxText))
	return strings.ToValidUTF8(string(b), ""), err
}

// allPagesHaveText reports whether every page of pdftotext's output has
// a letter or digit.
func allPagesHaveText(text string) bool {
	ps := strings.Split(strings.TrimSuffix(text, "\f"), "\f")
	if len(ps) == 0 || text == "" {
		return false
	}
	for _, p := range ps {
		if !strings.ContainsFunc(p, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
			return false
		}
	}
	return true
}

// ocrDPI is the resolution PDF pages are rendered at for tesseract.
const ocrDPI = 300

// maxOCRPixels bounds one image tesseract reads (a page rendered at
// ocrDPI: A4 is 8.7 megapixels, A1 70): the image and tesseract's work on
// it are held in memory.
const maxOCRPixels = 100_000_000

// checkPDFRender reads the PDF's page count and page sizes with pdfinfo
// before anything is rendered, and refuses a run that would render more
// pages than the configured limit (a 10,000-page PDF), a page too large
// to hold in memory, or more than the temp dir has room for. pages (-1:
// all) becomes the number of pages to render. It returns the page count,
// and the sizes (points) and /Rotate of the pages to render.
func (j *Job) checkPDFRender(ctx context.Context, dir, pdftoppm, fn string, pages *int) (int, [][2]float64, []int, error) {
	info, err := engine.Find(filepath.Join(filepath.Dir(pdftoppm), "pdfinfo"), "pdfinfo", "poppler-utils")
	if err != nil {
		if info, err = engine.Find("", "pdfinfo", "poppler-utils"); err != nil {
			return 0, nil, nil, err
		}
	}
	limit := j.p.cfg.OCRMaxPages
	last := limit
	if *pages > 0 {
		last = min(*pages, last)
	}
	out, err := engine.Run(ctx, dir, info, "-f", "1", "-l", strconv.Itoa(last), fn)
	if ee := (*engine.Error)(nil); errors.As(err, &ee) && ctx.Err() == nil {
		// The reasons a person can act on, as the action's message.
		if strings.Contains(ee.Stderr, "Incorrect password") {
			return 0, nil, nil, errors.New("the PDF is encrypted: OCR cannot read it without its password")
		}
		return 0, nil, nil, fmt.Errorf("the scan cannot be read as a PDF: %s", ee.Stderr)
	}
	if err != nil {
		return 0, nil, nil, err
	}
	total, sizes := parsePDFInfo(string(out))
	if total <= 0 {
		return 0, nil, nil, errors.New("pdfinfo did not report the PDF's page count")
	}
	n := total
	if *pages > 0 {
		n = min(*pages, total)
	}
	if n > limit {
		return 0, nil, nil, fmt.Errorf("the PDF has %d pages; OCR renders at most %d (pipeline.ocr_max_pages): set ocrNumberOfPages to read the first ones", total, limit)
	}
	var need int64
	for i, sz := range sizes[:min(n, len(sizes))] {
		px := int64(sz[0]/72*ocrDPI) * int64(sz[1]/72*ocrDPI)
		if px > maxOCRPixels {
			return 0, nil, nil, fmt.Errorf("page %d is %.0f x %.0f points, too large to render for OCR (at most %d megapixels at %d dpi)", i+1, sz[0], sz[1], maxOCRPixels/1_000_000, ocrDPI)
		}
		need += px // a gray PNG holds at most about a byte per pixel
	}
	if free, _, err := storage.DiskFree(dir); err == nil && free < uint64(need)+ocrTempReserve {
		return 0, nil, nil, engine.Retryable(fmt.Errorf("rendering %d pages for OCR needs about %d MB in the temp dir, which has %d MB free", n, need>>20, free>>20))
	}
	*pages = n
	return total, sizes, parsePDFRots(string(out)), nil
}

// ocrTempReserve is room left in the temp dir beyond what rendering needs.
const ocrTempReserve = 256 << 20

// parsePDFInfo reads pdfinfo's page count and the sizes (points) of the
// pages it listed.
func parsePDFInfo(out string) (int, [][2]float64) {
	total := 0
	var sizes [][2]float64
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(l, "Pages:"); ok {
			total, _ = strconv.Atoi(strings.TrimSpace(v))
			continue
		}
		// "Page    1 size:  612 x 792 pts (letter)"
		if !strings.HasPrefix(l, "Page ") {
			continue
		}
		_, rest, ok := strings.Cut(l, " size:")
		if !ok {
			continue
		}
		var w, h float64
		if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%g x %g", &w, &h); err == nil {
			sizes = append(sizes, [2]float64{w, h})
		}
	}
	return total, sizes
}

// parsePDFRots reads the /Rotate of the pages pdfinfo listed ("Page    1
// rot:  90").
func parsePDFRots(out string) []int {
	var rots []int
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "Page ") {
			continue
		}
		if _, rest, ok := strings.Cut(l, " rot:"); ok {
			r, _ := strconv.Atoi(strings.TrimSpace(rest))
			rots = append(rots, r)
		}
	}
	return rots
}

// keepSearchablePDF stores the searchable PDF/A OCR made as an OCR
// artifact of the document. Promoted (addPdfDetectedCharactersAsText), the
// document's content, url and fulltext serve it, as FormKiQ's rewrite
// does, while the scan stays the document's own content. An artifact,
// which has no artifacts of its own, gets the PDF as new content when
// promoting was asked for (its earlier content stays a version), and keeps
// none otherwise. id is the artifact's id ("": a new one).
func (j *Job) keepSearchablePDF(ctx context.Context, fn string, promote bool, id string, out *Outcome) error {
	if j.Doc.ArtifactOf != "" && !promote {
		return nil
	}
	f, err := os.Open(fn)
	if err != nil {
		return err
	}
	defer f.Close()
	m, tail, err := storage.WriteContent(ctx, j.p.apply, f, 0, nil)
	if err != nil {
		return fmt.Errorf("store searchable PDF: %w", err)
	}
	if len(m.Chunks) == 0 {
		return errors.New("OCR wrote an empty PDF")
	}
	out.Metadata["searchablePdf"] = "true"
	if j.Doc.ArtifactOf != "" {
		c, err := j.command(storage.OpUpdateDocument, storage.UpdateDocument{DocumentID: j.Doc.DocumentID, Content: &m, Chunks: tail})
		if err != nil {
			return err
		}
		out.Then = append(out.Then, c)
		// The text belongs to the rewritten content from now on.
		for i := range out.Texts {
			out.Texts[i].ContentSHA = m.SHA256
		}
		return nil
	}
	if id == "" {
		id = uuid.NewString()
	}
	art := storage.Document{DocumentID: id, ContentType: "application/pdf", UserID: j.Action.UserID, ArtifactCategory: OCRArtifactCategory}
	add, err := j.command(storage.OpAddArtifact, storage.AddArtifact{DocumentID: j.Doc.DocumentID,
		Artifact: storage.NewDocument{Document: art, Content: &m, Chunks: tail}})
	if err != nil {
		return err
	}
	out.Then = append(out.Then, add)
	out.Metadata["artifactId"] = id
	out.Metadata["artifactStatus"] = storage.ArtifactComplete // added with the outcome
	if promote {
		p, err := j.command(storage.OpPromoteArtifact, storage.ArtifactRef{DocumentID: j.Doc.DocumentID, ArtifactID: id})
		if err != nil {
			return err
		}
		out.Then = append(out.Then, p)
	}
	return nil
}

// OCRArtifactCategory is the artifactCategory of a searchable PDF the OCR
// action made.
const OCRArtifactCategory = "OCR"
