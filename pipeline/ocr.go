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

	"quire/storage"
)

func init() {
	engines["OCR"] = runOCR
}

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
		args := []string{"-r", "300", "-gray", "-png"}
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

func pageNum(fn string) int {
	base := strings.TrimSuffix(filepath.Base(fn), ".png")
	n, _ := strconv.Atoi(base[strings.LastIndexByte(base, '-')+1:])
	return n
}

// searchablePDF rewrites in.pdf with ocrmypdf (pages that have text keep
// it) and makes the result the document's content. The OCR text stays
// attached to the new content.
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
	upd := storage.UpdateDocument{DocumentID: j.Doc.DocumentID, Content: &m, Chunks: tail}
	c, err := j.command(storage.OpUpdateDocument, upd)
	if err != nil {
		return err
	}
	out.Then = append(out.Then, c)
	// The text belongs to the rewritten content from now on.
	for i := range out.Texts {
		out.Texts[i].ContentSHA = m.SHA256
	}
	out.Metadata["searchablePdf"] = "true"
	return nil
}
