package ocr

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"

	"quire/pipeline/engine"
)

// OCR page by page (issue 46, OCR speed). Each page is read by one
// tesseract pass (page segmentation 3, outputs txt, tsv and, when a
// searchable PDF is kept, pdf), on the page's own scan image when the PDF
// page is one image (pdfimages: no rendering), else on a 300 dpi gray
// rendering (pdftoppm). Only a page that reads badly costs more: little
// confidence, no words, or text lines much taller than its words (a
// skewed page, whose lines tesseract merges) gets its orientation from
// tesseract's OSD and its skew from the page image (image.go), is
// turned and straightened in Go, and is read again; the better reading
// is kept. A page turned by 90 degrees that tesseract read as it was
// (tesseract 5 reads vertical lines) keeps its text and is turned upright
// in the searchable PDF only. Pages run in parallel (up to the cores per
// document, and the engine's slots across the pipeline), each within
// pipeline.ocr_page_timeout.

// ocrPage is one page OCR reads.
type ocrPage struct {
	n     int    // page number, from 1
	src   string // the image tesseract reads; "" renders the PDF page
	dpi   int    // its resolution (0: the image's own)
	layer string // a PDF page's own text layer: kept, not recognized
	keep  bool   // the page has a text layer (layer is its text)

	text     string
	tsv      string
	pdf      string // tesseract's searchable page, "" when none
	turn     int    // degrees clockwise that turn the page upright in the PDF
	fixed    string // what was done to read the page ("turned 180", "straightened 4.0")
	timedOut bool
}

// ocrTools are the programs a page run needs.
type ocrTools struct {
	tess, pdftoppm, pdf string // pdf: the document's PDF ("" for an image)
	langs               string
	wantPDF, wantTSV    bool
	bg                  bool // a pending rendition made again: low priority (lowPriority)
}

// ocrEnv is tesseract's environment: one thread per process (pages run
// in parallel instead), as ocrmypdf runs it.
var ocrEnv = []string{"OMP_THREAD_LIMIT=1"}

// readPages reads every page, in parallel, each within the per-page limit.
func (e *Engine) readPages(ctx context.Context, dir string, t ocrTools, pages []*ocrPage) error {
	par := max(1, min(runtime.NumCPU(), len(pages)))
	work := make(chan *ocrPage)
	errs := make(chan error, par)
	var wg sync.WaitGroup
	for range par {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for pg := range work {
				if err := e.readPageSlot(ctx, dir, t, pg); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var err error
feed:
	for _, pg := range pages {
		select {
		case work <- pg:
		case err = <-errs:
			break feed
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(work)
	wg.Wait()
	close(errs)
	if err == nil {
		err = <-errs
	}
	return err
}

// readPageSlot reads a page once one of the engine's slots is free.
func (e *Engine) readPageSlot(ctx context.Context, dir string, t ocrTools, pg *ocrPage) error {
	if pg.keep {
		pg.text = pg.layer
		return nil
	}
	slots := e.slots
	select {
	case slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-slots }()
	pctx, cancel := context.WithTimeout(ctx, e.cfg.PageTimeout)
	defer cancel()
	err := e.readPage(pctx, dir, t, pg)
	if err != nil && ctx.Err() == nil && errors.Is(pctx.Err(), context.DeadlineExceeded) {
		// Past the per-page limit: the page is left without text.
		pg.text, pg.tsv, pg.pdf, pg.turn, pg.timedOut = "", "", "", 0, true
		return nil
	}
	return err
}

// readPage reads one page (see above).
func (e *Engine) readPage(ctx context.Context, dir string, t ocrTools, pg *ocrPage) error {
	if pg.src == "" {
		base := filepath.Join(dir, fmt.Sprintf("page-%d", pg.n))
		n := strconv.Itoa(pg.n)
		prog, args := lowPriority(t.bg, t.pdftoppm, []string{"-r", strconv.Itoa(ocrDPI), "-gray", "-f", n, "-l", n, "-singlefile", t.pdf, base})
		if _, err := engine.Run(ctx, dir, prog, args...); err != nil {
			return err
		}
		pg.src, pg.dpi = base+".pgm", ocrDPI
	}
	first, err := tesseractPass(ctx, dir, t, pg.src, pg.dpi, fmt.Sprintf("p%d-a", pg.n))
	if err != nil {
		return err
	}
	best := first
	if first.suspicious() {
		if second, how, err := fixPage(ctx, dir, t, pg, first); err != nil {
			return err
		} else if second != nil && second.score > first.score {
			best, pg.fixed = second, how
		}
	}
	pg.text, pg.tsv, pg.pdf = best.text, best.tsv, best.pdf
	if best == first {
		pg.turn = first.turn
	}
	return nil
}

// pageRead is one tesseract pass over a page image.
type pageRead struct {
	text, tsv, pdf string
	words          int
	meanConf       float64
	score          float64 // the confidence of its good words: the better reading scores higher
	skewedLines    float64 // share of text lines much taller than their words
	turn           int     // 90 or 270 when tesseract read the lines vertically
}

// suspicious reports whether a reading is poor enough to fix the page.
func (r *pageRead) suspicious() bool {
	return r.words == 0 || r.meanConf < ocrGoodConf || r.skewedLines > 0.25
}

// ocrGoodConf is the mean word confidence (0-100) under which a page is
// looked at for orientation: an upright page of print reads at 85-96, one
// upside down or turned the other way at about 30.
const ocrGoodConf = 60

func tesseractPass(ctx context.Context, dir string, t ocrTools, img string, dpi int, name string) (*pageRead, error) {
	base := filepath.Join(dir, name)
	args := []string{img, base, "-l", t.langs, "--psm", "3"}
	if dpi > 0 {
		args = append(args, "--dpi", strconv.Itoa(dpi))
	}
	args = append(args, "txt", "tsv")
	if t.wantPDF {
		args = append(args, "pdf")
	}
	prog, args := lowPriority(t.bg, t.tess, args)
	if _, _, err := engine.RunEnv(ctx, dir, ocrEnv, prog, 4096, args...); err != nil {
		return nil, err
	}
	text, err := readLimited(base+".txt", engine.MaxText)
	if err != nil {
		return nil, err
	}
	tsv, err := readLimited(base+".tsv", 4*engine.MaxText)
	if err != nil {
		return nil, err
	}
	os.Remove(base + ".txt")
	os.Remove(base + ".tsv")
	r := judgeTSV(tsv)
	r.text = strings.ToValidUTF8(text, "")
	if t.wantTSV {
		r.tsv = tsv
	}
	if t.wantPDF {
		r.pdf = base + ".pdf"
	}
	return r, nil
}

func readLimited(fn string, n int64) (string, error) {
	f, err := os.Open(fn)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, n))
	return string(b), err
}

// judgeTSV measures a reading from tesseract's TSV: its words and their
// confidence, whether its lines are skewed, and whether it read vertical
// lines (a page turned by 90 degrees) and which way.
func judgeTSV(tsv string) *pageRead {
	r := &pageRead{}
	type box struct{ left, top, w, h, words int }
	var lines []box
	var wordH []int
	sum := 0.0
	for i, row := range strings.Split(tsv, "\n") {
		f := strings.Split(row, "\t")
		if i == 0 || len(f) < 12 {
			continue
		}
		var n [10]int
		for k := range n {
			n[k], _ = strconv.Atoi(f[k])
		}
		switch f[0] {
		case "4":
			lines = append(lines, box{left: n[6], top: n[7], w: n[8], h: n[9]})
		case "5":
			conf, _ := strconv.ParseFloat(f[10], 64)
			if conf < 0 || strings.TrimSpace(f[11]) == "" {
				continue
			}
			r.words++
			sum += conf
			if conf >= ocrGoodConf {
				r.score += conf
			}
			if len(lines) > 0 {
				lines[len(lines)-1].words++
			}
			wordH = append(wordH, min(n[8], n[9]))
		}
	}
	if r.words == 0 {
		return r
	}
	r.meanConf = sum / float64(r.words)
	sort.Ints(wordH)
	mh := wordH[len(wordH)/2]
	var full, skewed, vertical int
	var firstV, lastV = -1, -1
	for _, l := range lines {
		if l.words < 3 {
			continue
		}
		full++
		if l.h > 2*l.w {
			vertical++
			if firstV < 0 {
				firstV = l.left
			}
			lastV = l.left
			continue
		}
		if float64(l.h) > 1.8*float64(mh) {
			skewed++
		}
	}
	if full > 0 {
		r.skewedLines = float64(skewed) / float64(full)
		if vertical*2 > full && firstV != lastV {
			// Lines read right to left: the page's top is on the right
			// (it was turned a quarter clockwise); turning it back is 270.
			r.turn = 90
			if firstV > lastV {
				r.turn = 270
			}
		}
	}
	return r
}

// fixPage turns (by tesseract's OSD, when the reading is poor) and
// straightens (by the skew of the image's lines) a page that read badly,
// and reads it again; nil when there is nothing to fix.
func fixPage(ctx context.Context, dir string, t ocrTools, pg *ocrPage, first *pageRead) (*pageRead, string, error) {
	fn, how, err := fixImage(ctx, dir, t, pg, first)
	if fn == "" || err != nil {
		return nil, "", err
	}
	second, err := tesseractPass(ctx, dir, t, fn, pg.dpi, fmt.Sprintf("p%d-b", pg.n))
	if err != nil {
		return nil, "", err
	}
	return second, how, nil
}

// fixSlots bounds the pages turned or straightened in memory at once: a
// page is up to maxFixPixels bytes, held twice while it is turned.
var fixSlots = make(chan struct{}, 2)

// fixImage writes the page turned and straightened as it needs, and says
// what was done; "" when nothing was.
func fixImage(ctx context.Context, dir string, t ocrTools, pg *ocrPage, first *pageRead) (string, string, error) {
	select {
	case fixSlots <- struct{}{}:
	case <-ctx.Done():
		return "", "", ctx.Err()
	}
	defer func() { <-fixSlots }()
	r, err := readRaster(pg.src, false)
	if err != nil {
		return "", "", nil // too large or unreadable to fix: the first reading stands
	}
	if nearlyBlank(r) {
		return "", "", nil // a blank sheet (a separator page): nothing to turn
	}
	var how []string
	if first.words == 0 || first.meanConf < ocrGoodConf {
		if deg := osdRotation(ctx, dir, t.tess, pg.src, pg.dpi); deg != 0 {
			r = r.rotate(deg)
			how = append(how, fmt.Sprintf("turned %d", deg))
		} else if ctx.Err() != nil {
			return "", "", ctx.Err()
		}
	}
	if skew, ok := estimateSkew(r); ok && math.Abs(skew) >= 0.5 {
		r = r.deskew(skew)
		how = append(how, fmt.Sprintf("straightened %.1f", skew))
	}
	if len(how) == 0 {
		return "", "", nil
	}
	fn := filepath.Join(dir, fmt.Sprintf("fixed-%d.pnm", pg.n))
	if err := r.writePNM(fn); err != nil {
		return "", "", err
	}
	return fn, strings.Join(how, ", "), nil
}

// nearlyBlank reports whether under one pixel in a thousand (sampled) is
// dark: a page without text to turn or straighten.
func nearlyBlank(r *raster) bool {
	g := r.gray()
	dark, n := 0, 0
	for i := 0; i < len(g.pix); i += 7 {
		n++
		if g.pix[i] < 128 {
			dark++
		}
	}
	return dark*1000 < n
}

// osdRotation is the turn (degrees clockwise) tesseract's orientation
// detection says stands a page upright, 0 when it is upright or OSD cannot
// tell (too little text, low confidence).
func osdRotation(ctx context.Context, dir, tess, img string, dpi int) int {
	args := []string{img, "-", "--psm", "0", "-l", "osd"}
	if dpi > 0 {
		args = append(args, "--dpi", strconv.Itoa(dpi))
	}
	out, _, err := engine.RunEnv(ctx, dir, ocrEnv, tess, 4096, args...)
	if err != nil {
		return 0 // too few characters to tell
	}
	rot, conf := 0, 0.0
	for _, l := range strings.Split(string(out), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "Rotate":
			rot, _ = strconv.Atoi(strings.TrimSpace(v))
		case "Orientation confidence":
			conf, _ = strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	if conf < ocrOSDConfidence {
		return 0
	}
	switch rot {
	case 90, 180, 270:
		return rot
	}
	return 0
}

// ocrOSDConfidence is the orientation confidence above which a page is
// turned (ocrmypdf's default is 14: a letter of a few lines turned by 90
// degrees scores 2-3).
const ocrOSDConfidence = 2

// pdfPageImages finds, among the first n pages of a PDF, those that are
// one scanned image covering the page (an office scan), extracts those
// images as they are (pdfimages -j: a JPEG stays the JPEG it is) and
// returns them by page number with their resolution; other pages are
// rendered. sizes are the pages' sizes in points (pdfinfo), rots their
// /Rotate.
func pdfPageImages(ctx context.Context, dir, pdfimages, fn string, n int, sizes [][2]float64, rots []int) (map[int]*ocrPage, error) {
	out, err := engine.Run(ctx, dir, pdfimages, "-list", "-f", "1", "-l", strconv.Itoa(n), fn)
	if err != nil {
		return nil, err
	}
	type img struct {
		num, w, h  int
		xppi, yppi float64
		ok         bool
	}
	per := map[int][]img{}
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) < 14 {
			continue
		}
		page, err := strconv.Atoi(f[0])
		if err != nil {
			continue // the header
		}
		var m img
		m.num, _ = strconv.Atoi(f[1])
		m.w, _ = strconv.Atoi(f[3])
		m.h, _ = strconv.Atoi(f[4])
		m.xppi, _ = strconv.ParseFloat(f[12], 64)
		m.yppi, _ = strconv.ParseFloat(f[13], 64)
		// Gray or RGB (an ICC-based space of one or three components
		// too); not CMYK, indexed or JPEG 2000, which are rendered.
		m.ok = f[2] == "image" && (f[5] == "gray" || f[5] == "rgb" || f[5] == "icc" && (f[6] == "1" || f[6] == "3")) && f[8] != "jpx"
		if f[2] == "smask" || f[2] == "stencil" || f[2] == "image" {
			per[page] = append(per[page], m)
		}
	}
	use := map[int]img{}
	for page, ims := range per {
		if page < 1 || page > min(n, len(sizes)) || len(ims) != 1 || !ims[0].ok {
			continue
		}
		m, sz := ims[0], sizes[page-1]
		if page-1 < len(rots) && rots[page-1]%360 != 0 {
			continue
		}
		if math.Abs(m.xppi-m.yppi) > 1 || m.xppi < 100 || m.xppi > 1200 {
			continue
		}
		// The image covers the page (within 2%).
		if math.Abs(float64(m.w)/m.xppi*72-sz[0]) > 0.02*sz[0] || math.Abs(float64(m.h)/m.yppi*72-sz[1]) > 0.02*sz[1] {
			continue
		}
		use[page] = m
	}
	pages := map[int]*ocrPage{}
	if len(use) == 0 {
		return pages, nil
	}
	prefix := filepath.Join(dir, "img")
	if _, err := engine.Run(ctx, dir, pdfimages, "-j", "-f", "1", "-l", strconv.Itoa(n), fn, prefix); err != nil {
		return nil, err
	}
	for page, m := range use {
		files, _ := filepath.Glob(fmt.Sprintf("%s-%03d.*", prefix, m.num))
		if len(files) != 1 {
			continue
		}
		pages[page] = &ocrPage{n: page, src: files[0], dpi: int(math.Round(m.xppi))}
	}
	return pages, nil
}

// imageDPI reads the resolution a PNG (pHYs), JPEG (JFIF) or TIFF (its
// first page's XResolution) declares, 0 when it declares none.
func imageDPI(fn string) int {
	f, err := os.Open(fn)
	if err != nil {
		return 0
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 4096)
	head, _ := br.Peek(20)
	switch {
	case len(head) >= 8 && (string(head[:4]) == "II*\x00" || string(head[:4]) == "MM\x00*"):
		return tiffDPI(f)
	case len(head) >= 18 && head[0] == 0xFF && head[1] == 0xD8 && head[2] == 0xFF && head[3] == 0xE0 && string(head[6:11]) == "JFIF\x00":
		units, x := head[13], float64(binary.BigEndian.Uint16(head[14:16]))
		switch units {
		case 1:
			return int(x)
		case 2:
			return int(math.Round(x * 2.54))
		}
	case len(head) >= 8 && string(head[:8]) == "\x89PNG\r\n\x1a\n":
		br.Discard(8)
		for range 64 {
			var h [8]byte
			if _, err := io.ReadFull(br, h[:]); err != nil {
				return 0
			}
			n, typ := binary.BigEndian.Uint32(h[:4]), string(h[4:])
			if typ == "IDAT" || n > 1<<20 {
				return 0
			}
			body := make([]byte, n+4)
			if _, err := io.ReadFull(br, body); err != nil {
				return 0
			}
			if typ == "pHYs" && n == 9 && body[8] == 1 {
				return int(math.Round(float64(binary.BigEndian.Uint32(body[:4])) * 0.0254))
			}
		}
	}
	return 0
}

// joinPageTexts is the document's text: each page's text ending with a
// form feed, as pdftotext gives it.
func joinPageTexts(pages []*ocrPage) string {
	var b strings.Builder
	for _, pg := range pages {
		t := strings.TrimRight(pg.text, " \t\r\n\f")
		b.WriteString(t)
		if t != "" {
			b.WriteString("\n")
		}
		b.WriteString("\f")
	}
	return b.String()
}

// tiffDPI reads the XResolution and ResolutionUnit of a TIFF's first
// page, 0 when it has none.
func tiffDPI(f *os.File) int {
	var h [8]byte
	if _, err := f.ReadAt(h[:], 0); err != nil {
		return 0
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if h[0] == 'M' {
		bo = binary.BigEndian
	}
	off := int64(bo.Uint32(h[4:]))
	var c [2]byte
	if _, err := f.ReadAt(c[:], off); err != nil {
		return 0
	}
	res, unit := 0.0, 2 // inches unless told otherwise
	for i := range int64(min(bo.Uint16(c[:]), 1000)) {
		var e [12]byte
		if _, err := f.ReadAt(e[:], off+2+12*i); err != nil {
			return 0
		}
		switch bo.Uint16(e[:2]) {
		case 282: // XResolution, RATIONAL at an offset
			var r [8]byte
			if _, err := f.ReadAt(r[:], int64(bo.Uint32(e[8:]))); err != nil {
				return 0
			}
			if d := bo.Uint32(r[4:]); d != 0 {
				res = float64(bo.Uint32(r[:4])) / float64(d)
			}
		case 296: // ResolutionUnit, SHORT
			unit = int(bo.Uint16(e[8:10]))
		}
	}
	switch unit {
	case 2:
		return int(math.Round(res))
	case 3:
		return int(math.Round(res * 2.54))
	}
	return 0
}

// tiffPages counts the pages (image file directories) of a TIFF, 0 when
// it cannot tell.
func tiffPages(fn string) int {
	f, err := os.Open(fn)
	if err != nil {
		return 0
	}
	defer f.Close()
	var h [8]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		return 0
	}
	var bo binary.ByteOrder
	switch string(h[:4]) {
	case "II*\x00":
		bo = binary.LittleEndian
	case "MM\x00*":
		bo = binary.BigEndian
	default:
		return 0
	}
	off, n := int64(bo.Uint32(h[4:])), 0
	for off != 0 && n < 10_000 {
		var c [2]byte
		if _, err := f.ReadAt(c[:], off); err != nil {
			return n
		}
		var next [4]byte
		if _, err := f.ReadAt(next[:], off+2+12*int64(bo.Uint16(c[:]))); err != nil {
			return n + 1
		}
		n++
		off = int64(bo.Uint32(next[:]))
	}
	return n
}

// tiffToPDF makes a PDF of a multi-page TIFF's pages (img2pdf).
func tiffToPDF(ctx context.Context, dir, fn string) (string, error) {
	img2pdf, err := engine.Find("", "img2pdf", "img2pdf")
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "in.pdf")
	if _, err := engine.Run(ctx, dir, img2pdf, "-o", out, fn); err != nil {
		return "", fmt.Errorf("the TIFF cannot be read: %w", err)
	}
	return out, nil
}
