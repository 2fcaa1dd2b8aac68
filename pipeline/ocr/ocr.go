// Package ocr reads the text of scans with tesseract (issue 46): an image
// or a PDF, one tesseract pass per page, pages in parallel within the
// engine's slots and a per-page limit (pages.go); a page that reads badly
// is turned upright by tesseract's OSD and straightened in Go (image.go)
// and read again; a PDF page that is one scanned image is read from that
// image, others are rendered; pages with a text layer keep it. It also
// reads the layout of the words (CSV, tables, key-values: layout.go),
// builds the searchable PDF/A of the pages (pdfa.go) and knows tesseract's
// languages. It runs programs through engine and keeps nothing in the
// store: what a reading becomes (text records, artifacts, a pending
// rendition) the pipeline's OCR action decides.
package ocr

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"quire/pipeline/convert"
	"quire/pipeline/engine"
	"quire/storage"
)

// Config configures an Engine.
type Config struct {
	// Tesseract, Pdftotext, Pdftoppm and Ocrmypdf are the configured
	// programs ("": looked up on PATH).
	Tesseract, Pdftotext, Pdftoppm, Ocrmypdf string
	// MaxPages is the most pages of a PDF one reading renders
	// (pipeline.ocr_max_pages).
	MaxPages int
	// PageTimeout is how long one page may take; a page not read by then
	// is left without text (pipeline.ocr_page_timeout).
	PageTimeout time.Duration
	// Slots is the most pages read at once across the engine's readings.
	Slots int
}

// Engine reads scans: one per pipeline, whose slots bound the pages
// read at once across its actions.
type Engine struct {
	cfg   Config
	slots chan struct{}
}

// New makes an engine of cfg.
func New(cfg Config) *Engine {
	return &Engine{cfg: cfg, slots: make(chan struct{}, max(1, cfg.Slots))}
}

// Reads reports whether OCR reads content of media type mt (an image
// type tesseract reads, or a PDF).
func Reads(mt string) bool {
	return ocrImageTypes[mt] != "" || mt == "application/pdf"
}

// Request is one scan to read.
type Request struct {
	// TempDir is where the reading's scratch directory is made.
	TempDir string
	// ContentType is the content's media type (Reads is true of it).
	ContentType string
	// Content writes the content to a file named name in dir and returns
	// its path.
	Content func(dir, name string) (string, error)
	// Languages are tesseract's languages to read in.
	Languages []string
	// Pages is how many of a PDF's first pages to read (-1: all).
	Pages int
	// PDF asks for the pages tesseract's searchable PDF needs (kept by
	// SearchablePDF); not of a part of a PDF unless Promote.
	PDF, Promote bool
	// TSV keeps tesseract's TSV of the pages (Lines).
	TSV bool
	// Background reads at a low priority (a rendition made again).
	Background bool
}

// Reading is what a reading found. Its scratch directory Dir holds
// what SearchablePDF needs; the caller removes it.
type Reading struct {
	Dir string
	// Text is the pages' text, each page ending with a form feed.
	Text string
	// TextLayer: every page of the PDF has text, which is Text; nothing
	// was recognized.
	TextLayer bool
	// Pages is the number of pages read (or kept with their text layer).
	Pages int
	// TimedOut are the numbers of the pages past the per-page limit.
	TimedOut []string
	// Fixed says, per page turned or straightened, what was done
	// ("2: turned 180").
	Fixed []string

	pages    []*ocrPage
	in       string // the document's PDF ("" for an image)
	total    int    // its pages
	keep     bool   // a searchable PDF is wanted
	read     int    // pages recognized
	ocrmypdf string
}

// InstalledLanguages lists the languages the configured tesseract has
// (its --list-langs, osd among them), within 30 s.
func (e *Engine) InstalledLanguages(ctx context.Context) ([]string, error) {
	tess, err := engine.Find(e.cfg.Tesseract, "tesseract", "tesseract-ocr")
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	have, err := installedLanguages(cctx, "", tess)
	if err != nil {
		return nil, fmt.Errorf("tesseract does not list its languages: %w", err)
	}
	return have, nil
}

// MaxLanguages bounds processing.languages: tesseract reads a page once
// per language model it is given.
const MaxLanguages = 5

var langCode = regexp.MustCompile(`^[a-z]{3}(_[a-z]+)?$`)

// LanguageProblems checks OCR languages a site or an action gives:
// tesseract codes (not osd, which is no language), at most MaxLanguages,
// each once, each one tesseract has (installed lists them; asked only
// when langs is not empty). It returns what is wrong, in order.
func LanguageProblems(ctx context.Context, langs []string, installed func(context.Context) ([]string, error)) []string {
	var items []string
	add := func(msg string) { items = append(items, msg) }
	if len(langs) > MaxLanguages {
		add(fmt.Sprintf("at most %d languages", MaxLanguages))
	}
	var have []string
	if len(langs) > 0 {
		var err error
		if have, err = installed(ctx); err != nil {
			add(err.Error())
		}
	}
	for i, l := range langs {
		switch {
		case !langCode.MatchString(l) || l == "osd":
			add(fmt.Sprintf("invalid language '%s': a tesseract language code such as eng, deu or fra", l))
		case slices.Contains(langs[:i], l):
			add(fmt.Sprintf("language '%s' is listed twice", l))
		case have != nil && !slices.Contains(have, l):
			add(fmt.Sprintf("language '%s' is not installed: install the Debian package tesseract-ocr-%s", l, strings.ReplaceAll(l, "_", "-")))
		}
	}
	return items
}

// Available returns those of langs tesseract has, in that order
// (English alone when it has none of them: a reading then says which
// package is missing). tesseract's list is asked again at most every
// defaultLangsTTL, so a language package installed later is used without
// a restart.
func (e *Engine) Available(ctx context.Context, langs []string) ([]string, error) {
	tess, err := engine.Find(e.cfg.Tesseract, "tesseract", "tesseract-ocr")
	if err != nil {
		return nil, err
	}
	defaultLangs.Lock()
	defer defaultLangs.Unlock()
	if defaultLangs.tess != tess || time.Since(defaultLangs.at) > defaultLangsTTL {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		have, err := installedLanguages(cctx, "", tess)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("tesseract does not list its languages: %w", err)
		}
		defaultLangs.tess, defaultLangs.at = tess, time.Now()
		defaultLangs.langs = slices.DeleteFunc(langs, func(l string) bool { return !slices.Contains(have, l) })
		if len(defaultLangs.langs) == 0 {
			defaultLangs.langs = []string{"eng"}
		}
	}
	return slices.Clone(defaultLangs.langs), nil
}

// defaultLangs are the default OCR languages tesseract has, as last asked.
var defaultLangs struct {
	sync.Mutex
	tess  string
	at    time.Time
	langs []string
}

// defaultLangsTTL is how long defaultLangs is used before tesseract's list
// is asked again.
const defaultLangsTTL = 5 * time.Minute

// Read reads the scan req names.
func (e *Engine) Read(ctx context.Context, req Request) (*Reading, error) {
	tess, err := engine.Find(e.cfg.Tesseract, "tesseract", "tesseract-ocr")
	if err != nil {
		return nil, err
	}
	totext, err := engine.Find(e.cfg.Pdftotext, "pdftotext", "poppler-utils")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(req.TempDir, "quire-action-")
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(dir)
		}
	}()
	langs := req.Languages
	if err := checkLanguages(ctx, dir, tess, langs); err != nil {
		return nil, err
	}
	mt, pages, keep := req.ContentType, req.Pages, req.PDF
	tools := ocrTools{tess: tess, langs: strings.Join(langs, "+"), wantTSV: req.TSV}
	var list []*ocrPage
	var in string
	total := 1
	if mt == "image/tiff" {
		// A scanner's multi-page TIFF is read as the PDF of its pages
		// (img2pdf keeps each page's image as it is).
		if in, err = req.Content(dir, "in.tif"); err != nil {
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
			if in, err = req.Content(dir, "in"+ocrImageTypes[mt]); err != nil {
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
		if tools.pdftoppm, err = engine.Find(e.cfg.Pdftoppm, "pdftoppm", "poppler-utils"); err != nil {
			return nil, err
		}
		if in == "" {
			if in, err = req.Content(dir, "in.pdf"); err != nil {
				return nil, err
			}
		}
		var sizes [][2]float64
		var rots []int
		if total, sizes, rots, err = e.checkPDFRender(ctx, dir, tools.pdftoppm, in, &pages); err != nil {
			return nil, err
		}
		if pages < total && !req.Promote {
			keep = false // no searchable copy of a part
		}
		// A PDF whose every page has text needs no OCR: its text is
		// the result (what FULLTEXT would read), nothing is rewritten.
		text, err := pdfPagesText(ctx, dir, totext, in, pages)
		if err == nil && allPagesHaveText(text) {
			ok = true
			return &Reading{Dir: dir, Text: text, TextLayer: true}, nil
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
	tools.bg = req.Background
	if err := e.readPages(ctx, dir, tools, list); err != nil {
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
	rd := &Reading{Dir: dir, Text: joinPageTexts(list), Pages: len(list),
		pages: list, in: in, total: total, keep: keep, ocrmypdf: e.cfg.Ocrmypdf}
	for _, pg := range list {
		if pg.timedOut {
			rd.TimedOut = append(rd.TimedOut, strconv.Itoa(pg.n))
		} else if !pg.keep {
			rd.read++
		}
		if pg.fixed != "" {
			rd.Fixed = append(rd.Fixed, fmt.Sprintf("%d: %s", pg.n, pg.fixed))
		}
	}
	ok = true
	return rd, nil
}

// MakesPDF reports whether the reading makes a searchable PDF: one was
// asked for, of the whole document, and a page was recognized or the PDF
// has pages of its own.
func (r *Reading) MakesPDF() bool {
	return r.keep && !(r.read == 0 && r.in == "")
}

// SearchablePDF builds the searchable PDF/A of the reading (pdfa.go)
// in its Dir and returns its path; bg builds it at a low priority.
func (r *Reading) SearchablePDF(ctx context.Context, bg bool) (string, error) {
	return buildSearchablePDF(ctx, r.Dir, r.in, r.total, r.pages, bg, r.ocrmypdf)
}

// ocrImageTypes are the image types tesseract reads directly.
var ocrImageTypes = map[string]string{
	"image/png": ".png", "image/jpeg": ".jpg", "image/tiff": ".tif", "image/bmp": ".bmp",
	"image/gif": ".gif", "image/webp": ".webp", "image/x-portable-pixmap": ".ppm",
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
	b, err := io.ReadAll(io.LimitReader(f, engine.MaxText))
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
func (e *Engine) checkPDFRender(ctx context.Context, dir, pdftoppm, fn string, pages *int) (int, [][2]float64, []int, error) {
	info, err := engine.Find(filepath.Join(filepath.Dir(pdftoppm), "pdfinfo"), "pdfinfo", "poppler-utils")
	if err != nil {
		if info, err = engine.Find("", "pdfinfo", "poppler-utils"); err != nil {
			return 0, nil, nil, err
		}
	}
	limit := e.cfg.MaxPages
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
