package ocr

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"quire/pipeline/engine"
)

// The searchable PDF/A rendition of an OCR run (issue 46): tesseract's
// page PDFs (the page image with its recognized text, invisible, over it:
// a scanned JPEG is embedded as it is) joined with qpdf in page order,
// with a page that kept its own text layer (or past the per-page limit)
// taken from the original PDF, pages tesseract read turned by 90 degrees
// turned upright (/Rotate), then made PDF/A-2b by ghostscript with an sRGB
// output intent. Without promotion it is built after the OCR action is
// recorded (the pipeline's background work), so FULLTEXT and search have the text
// without waiting for it.

// buildSearchablePDF writes the PDF/A rendition of pages to dir and
// returns its path. in is the document's PDF ("" for an image) of total
// pages: pages past those read (ocrNumberOfPages with promotion) follow
// as they are. In the background (bg) its programs run at a low priority,
// so that they take no time from the pages still being read. ocrmypdf is
// the configured engines.ocrmypdf ("": the one on PATH), used only
// without an sRGB profile (pdfA).
func buildSearchablePDF(ctx context.Context, dir, in string, total int, pages []*ocrPage, bg bool, ocrmypdf string) (string, error) {
	qpdf, err := engine.Find("", "qpdf", "qpdf")
	if err != nil {
		return "", err
	}
	args := []string{"--warning-exit-0", "--empty", "--pages"}
	var rotate []string
	for i, pg := range pages {
		switch {
		case pg.pdf != "":
			args = append(args, pg.pdf, "1")
		case in != "":
			args = append(args, in, strconv.Itoa(pg.n))
		default:
			return "", fmt.Errorf("page %d has no searchable page", pg.n)
		}
		if pg.turn != 0 {
			rotate = append(rotate, fmt.Sprintf("--rotate=+%d:%d", pg.turn, i+1))
		}
	}
	if in != "" && total > len(pages) {
		args = append(args, in, fmt.Sprintf("%d-%d", len(pages)+1, total))
	}
	joined := filepath.Join(dir, "joined.pdf")
	args = append(append(args, "--"), rotate...)
	prog, args := lowPriority(bg, qpdf, append(args, joined))
	if _, err := engine.Run(ctx, dir, prog, args...); err != nil {
		return "", err
	}
	out := filepath.Join(dir, "searchable.pdf")
	return out, pdfA(ctx, dir, joined, out, bg, ocrmypdf)
}

// lowPriority runs prog through nice(1) when bg and nice is there.
func lowPriority(bg bool, prog string, args []string) (string, []string) {
	if !bg {
		return prog, args
	}
	nice, err := engine.Find("", "nice", "coreutils")
	if err != nil {
		return prog, args
	}
	return nice, append([]string{"-n", "15", prog}, args...)
}

// pdfA converts a PDF to PDF/A-2b with ghostscript and an sRGB output
// intent; without an sRGB profile to embed, ocrmypdf does it (slower: a
// Python start): the configured one (engines.ocrmypdf), else PATH's.
func pdfA(ctx context.Context, dir, in, out string, bg bool, configured string) error {
	icc := srgbProfile()
	if icc == "" {
		ocrmypdf, err := engine.Find(configured, "ocrmypdf", "ocrmypdf")
		if err != nil {
			return err
		}
		prog, args := lowPriority(bg, ocrmypdf, []string{"--skip-text", "--output-type", "pdfa", "--optimize", "0", in, out})
		_, err = engine.Run(ctx, dir, prog, args...)
		return err
	}
	gs, err := engine.Find("", "gs", "ghostscript")
	if err != nil {
		return err
	}
	def := filepath.Join(dir, "pdfa-def.ps")
	esc := strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(icc)
	ps := "%!\n" +
		"[/_objdef {icc_PDFA} /type /stream /OBJ pdfmark\n" +
		"[{icc_PDFA} <</N 3>> /PUT pdfmark\n" +
		"[{icc_PDFA} (" + esc + ") (r) file /PUT pdfmark\n" +
		"[/_objdef {OutputIntent_PDFA} /type /dict /OBJ pdfmark\n" +
		"[{OutputIntent_PDFA} <</Type /OutputIntent /S /GTS_PDFA1 /DestOutputProfile {icc_PDFA} /OutputConditionIdentifier (sRGB) /Info (sRGB IEC61966-2.1)>> /PUT pdfmark\n" +
		"[{Catalog} <</OutputIntents [ {OutputIntent_PDFA} ]>> /PUT pdfmark\n"
	if err := os.WriteFile(def, []byte(ps), 0o600); err != nil {
		return err
	}
	prog, args := lowPriority(bg, gs, []string{"-q", "-dPDFA=2", "-dBATCH", "-dNOPAUSE", "-dSAFER", "--permit-file-read=" + icc,
		"-sColorConversionStrategy=RGB", "-dPDFACompatibilityPolicy=1", "-sDEVICE=pdfwrite", "-dAutoRotatePages=/None",
		"-sOutputFile=" + out, def, in})
	_, err = engine.Run(ctx, dir, prog, args...)
	return err
}

// SRGBProfiles are where srgbProfile looks (tests empty it to take the
// ocrmypdf path).
var SRGBProfiles = []string{"/usr/share/ghostscript/*/iccprofiles/srgb.icc", "/usr/share/color/icc/ghostscript/srgb.icc",
	"/usr/share/color/icc/sRGB.icc", "/usr/share/color/icc/colord/sRGB.icc"}

// srgbProfile finds an sRGB ICC profile on the machine (ghostscript's
// own, then the usual colour profile packages), "" when none.
func srgbProfile() string {
	for _, pat := range SRGBProfiles {
		if m, _ := filepath.Glob(pat); len(m) > 0 {
			return m[len(m)-1]
		}
	}
	return ""
}
