package pipeline

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"quire/storage"
)

// ocrImageTypes are the image types tesseract reads directly.
var ocrImageTypes = map[string]string{
	"image/png": ".png", "image/jpeg": ".jpg", "image/tiff": ".tif", "image/bmp": ".bmp",
	"image/gif": ".gif", "image/webp": ".webp", "image/x-portable-pixmap": ".ppm",
}

// runOCR reads the text of an image or a PDF with tesseract (PDF pages are
// rendered with pdftoppm first). With addPdfDetectedCharactersAsText a PDF
// is also rewritten by ocrmypdf with a text layer, as the document's new
// content.
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
	tess, err := program(j.p.cfg.Engines.Tesseract, "tesseract", "tesseract-ocr")
	if err != nil {
		return nil, err
	}
	mt, _, _ := mime.ParseMediaType(j.Doc.ContentType)
	dir, err := j.TempDir()
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var images []string
	switch {
	case ocrImageTypes[mt] != "":
		fn, err := j.ContentFile(dir, "in"+ocrImageTypes[mt])
		if err != nil {
			return nil, err
		}
		if err := checkImageFile(fn, maxOCRPixels); err != nil {
			return nil, err
		}
		images = []string{fn}
	case mt == "application/pdf":
		ppm, err := program(j.p.cfg.Engines.Pdftoppm, "pdftoppm", "poppler-utils")
		if err != nil {
			return nil, err
		}
		fn, err := j.ContentFile(dir, "in.pdf")
		if err != nil {
			return nil, err
		}
		if err := j.checkPDFRender(ctx, dir, ppm, fn, &pages); err != nil {
			return nil, err
		}
		args := []string{"-r", strconv.Itoa(ocrDPI), "-gray", "-png"}
		if pages > 0 {
			args = append(args, "-l", strconv.Itoa(pages))
		}
		if _, err := runProgram(ctx, dir, ppm, append(args, fn, filepath.Join(dir, "page"))...); err != nil {
			return nil, err
		}
		images, _ = filepath.Glob(filepath.Join(dir, "page-*.png"))
		// page-1 … page-10: numeric order, whatever the zero padding.
		sort.Slice(images, func(a, b int) bool { return pageNum(images[a]) < pageNum(images[b]) })
	default:
		return &Outcome{Status: storage.ActionSkipped, Message: fmt.Sprintf("OCR reads images and PDFs, not '%s'", j.Doc.ContentType)}, nil
	}
	if pages > 0 && len(images) > pages {
		images = images[:pages]
	}
	var text strings.Builder
	for i, img := range images {
		out, err := runProgram(ctx, dir, tess, img, "stdout", "-l", "eng")
		if err != nil {
			return nil, err
		}
		if i > 0 {
			text.WriteString("\f")
		}
		text.Write(out)
		if text.Len() > maxText {
			break
		}
	}
	out := &Outcome{
		Texts:    []storage.TextRecord{{Kind: storage.TextOCR, ContentSHA: j.Doc.ContentSHA256, Text: truncateChars(strings.ToValidUTF8(text.String(), ""), -1), ContentType: "text/plain", Engine: "tesseract"}},
		Metadata: map[string]string{"pages": strconv.Itoa(len(images))},
	}
	if mt == "application/pdf" && strings.EqualFold(j.Param("addPdfDetectedCharactersAsText"), "true") {
		if err := j.searchablePDF(ctx, dir, pages, out); err != nil {
			return nil, err
		}
	}
	return out, nil
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
// all) becomes the number of pages to render.
func (j *Job) checkPDFRender(ctx context.Context, dir, pdftoppm, fn string, pages *int) error {
	info, err := program(filepath.Join(filepath.Dir(pdftoppm), "pdfinfo"), "pdfinfo", "poppler-utils")
	if err != nil {
		if info, err = program("", "pdfinfo", "poppler-utils"); err != nil {
			return err
		}
	}
	limit := j.p.cfg.OCRMaxPages
	last := limit
	if *pages > 0 {
		last = min(*pages, last)
	}
	out, err := runProgram(ctx, dir, info, "-f", "1", "-l", strconv.Itoa(last), fn)
	if err != nil {
		return err
	}
	total, sizes := parsePDFInfo(string(out))
	if total <= 0 {
		return errors.New("pdfinfo did not report the PDF's page count")
	}
	n := total
	if *pages > 0 {
		n = min(*pages, total)
	}
	if n > limit {
		return fmt.Errorf("the PDF has %d pages; OCR renders at most %d (pipeline.ocr_max_pages): set ocrNumberOfPages to read the first ones", total, limit)
	}
	var need int64
	for i, sz := range sizes[:min(n, len(sizes))] {
		px := int64(sz[0]/72*ocrDPI) * int64(sz[1]/72*ocrDPI)
		if px > maxOCRPixels {
			return fmt.Errorf("page %d is %.0f x %.0f points, too large to render for OCR (at most %d megapixels at %d dpi)", i+1, sz[0], sz[1], maxOCRPixels/1_000_000, ocrDPI)
		}
		need += px // a gray PNG holds at most about a byte per pixel
	}
	if free, _, err := storage.DiskFree(dir); err == nil && free < uint64(need)+ocrTempReserve {
		return retryable(fmt.Errorf("rendering %d pages for OCR needs about %d MB in the temp dir, which has %d MB free", n, need>>20, free>>20))
	}
	*pages = n
	return nil
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

func pageNum(fn string) int {
	base := strings.TrimSuffix(filepath.Base(fn), ".png")
	n, _ := strconv.Atoi(base[strings.LastIndexByte(base, '-')+1:])
	return n
}

// searchablePDF rewrites in.pdf with ocrmypdf (pages that have text keep
// it) and stores the result as an OCR artifact of the document, promoted
// so that the document's content, url and fulltext serve it (as FormKiQ's
// addPdfDetectedCharactersAsText rewrites the content) while the scanned
// original stays the document's own content. An artifact, which has no
// artifacts of its own, gets the rewritten PDF as new content (its
// earlier content stays a version).
func (j *Job) searchablePDF(ctx context.Context, dir string, pages int, out *Outcome) error {
	prog, err := program(j.p.cfg.Engines.Ocrmypdf, "ocrmypdf", "ocrmypdf")
	if err != nil {
		return err
	}
	args := []string{"--skip-text", "--output-type", "pdf", "--quiet"}
	if pages > 0 {
		args = append(args, "--pages", "1-"+strconv.Itoa(pages))
	}
	dst := filepath.Join(dir, "searchable.pdf")
	if _, err := runProgram(ctx, dir, prog, append(args, filepath.Join(dir, "in.pdf"), dst)...); err != nil {
		return err
	}
	f, err := os.Open(dst)
	if err != nil {
		return err
	}
	defer f.Close()
	m, tail, err := storage.WriteContent(ctx, j.p.apply, f, 0, nil)
	if err != nil {
		return fmt.Errorf("store searchable PDF: %w", err)
	}
	if len(m.Chunks) == 0 {
		return errors.New("ocrmypdf wrote an empty PDF")
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
	id := uuid.NewString()
	art := storage.Document{DocumentID: id, ContentType: "application/pdf", UserID: j.Action.UserID, ArtifactCategory: OCRArtifactCategory}
	add, err := j.command(storage.OpAddArtifact, storage.AddArtifact{DocumentID: j.Doc.DocumentID,
		Artifact: storage.NewDocument{Document: art, Content: &m, Chunks: tail}})
	if err != nil {
		return err
	}
	promote, err := j.command(storage.OpPromoteArtifact, storage.ArtifactRef{DocumentID: j.Doc.DocumentID, ArtifactID: id})
	if err != nil {
		return err
	}
	out.Then = append(out.Then, add, promote)
	out.Metadata["artifactId"] = id
	return nil
}

// OCRArtifactCategory is the artifactCategory of a searchable PDF the OCR
// action made.
const OCRArtifactCategory = "OCR"
