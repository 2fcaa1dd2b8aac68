package pdfwork

import (
	"bytes"
	"compress/zlib"
	"context"
	"fmt"
	"image"
	"image/draw"
	_ "image/jpeg" // decodeRGB reads JPEG
	_ "image/png"  // and PNG
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"quire/pipeline/engine"
)

// SignatureEntry is one signer on the signature page of a signed copy.
type SignatureEntry struct {
	Name, Email, TypedName string
	SignedDate             time.Time
	Drawing                []byte // PNG, may be empty
}

// SignaturePage describes the page a signed copy gets.
type SignaturePage struct {
	Title       string // e.g. the envelope's subject
	Reference   string // e.g. "Envelope <id>, document <path>"
	Development bool   // marked as a test
	Signers     []SignatureEntry
}

// maxDrawingPixels bounds a drawn signature decoded for the page.
const maxDrawingPixels = 4 << 20

// SignedCopy appends the signature page to the PDF in src (qpdf), in a
// scratch directory under tempDir, and returns the result. A src qpdf cannot read is a GenerateError.
func SignedCopy(ctx context.Context, tempDir string, src io.Reader, page SignaturePage) (*Generated, error) {
	qpdf, err := engine.Find("", "qpdf", "qpdf")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(tempDir, "signed-")
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(dir)
		}
	}()
	in := filepath.Join(dir, "document.pdf")
	if err := writeFile(in, src); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := writeSignaturePage(&b, page); err != nil {
		return nil, err
	}
	sig := filepath.Join(dir, "signatures.pdf")
	if err := os.WriteFile(sig, b.Bytes(), 0o600); err != nil {
		return nil, err
	}
	out := filepath.Join(dir, "signed.pdf")
	if _, err := engine.Run(ctx, dir, qpdf, "--empty", "--pages", in, sig, "--", out); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &GenerateError{Msg: "the document is not a PDF qpdf can read"}
	}
	f, err := os.Open(out)
	if err != nil {
		return nil, err
	}
	ok = true
	return &Generated{File: f, dir: dir, ContentType: "application/pdf", Ext: ".pdf"}, nil
}

// pdfText escapes s for a PDF string in WinAnsi (Latin-1 runes as bytes,
// others as '?').
func pdfText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '(' || r == ')' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 32:
			b.WriteByte(' ')
		case r < 256:
			b.WriteByte(byte(r))
		default:
			b.WriteByte('?')
		}
	}
	return b.String()
}

// drawingImage decodes a PNG signature onto white, as RGB rows.
func drawingImage(pngBytes []byte) (w, h int, rgb []byte, ok bool) {
	return decodeRGB(pngBytes, maxDrawingPixels)
}

// decodeRGB decodes a PNG or JPEG of at most maxPixels onto white, as
// RGB rows.
func decodeRGB(data []byte, maxPixels int) (w, h int, rgb []byte, ok bool) {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || cfg.Width*cfg.Height > maxPixels || cfg.Width == 0 || cfg.Height == 0 {
		return 0, 0, nil, false
	}
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return 0, 0, nil, false
	}
	bounds := img.Bounds()
	canvas := image.NewRGBA(bounds)
	draw.Draw(canvas, bounds, image.White, image.Point{}, draw.Src)
	draw.Draw(canvas, bounds, img, bounds.Min, draw.Over)
	w, h = bounds.Dx(), bounds.Dy()
	rgb = make([]byte, 0, w*h*3)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			i := canvas.PixOffset(bounds.Min.X+x, bounds.Min.Y+y)
			rgb = append(rgb, canvas.Pix[i], canvas.Pix[i+1], canvas.Pix[i+2])
		}
	}
	return w, h, rgb, true
}

// writeSignaturePage writes a one-page A4 PDF listing the signers, with
// their drawn signatures.
func writeSignaturePage(out *bytes.Buffer, page SignaturePage) error {
	var content strings.Builder
	var images []string // image XObject dictionaries+streams
	y := 790
	line := func(size int, s string) {
		fmt.Fprintf(&content, "BT /F1 %d Tf 50 %d Td (%s) Tj ET\n", size, y, pdfText(s))
		y -= size + 8
	}
	title := "Signatures"
	if page.Development {
		title += " (DEVELOPMENT: not for production use)"
	}
	line(18, title)
	if page.Title != "" {
		line(12, page.Title)
	}
	if page.Reference != "" {
		line(9, page.Reference)
	}
	y -= 10
	for i, s := range page.Signers {
		if y < 120 {
			break
		}
		who := s.Name
		if s.Email != "" {
			who += " <" + s.Email + ">"
		}
		line(12, fmt.Sprintf("%d. %s", i+1, who))
		line(10, "Signed "+s.SignedDate.UTC().Format("2006-01-02 15:04:05 UTC"))
		if s.TypedName != "" {
			line(16, s.TypedName)
		}
		if w, h, rgb, ok := drawingImage(s.Drawing); ok {
			bw, bh := 220.0, 66.0
			scale := min(bw/float64(w), bh/float64(h))
			dw, dh := float64(w)*scale, float64(h)*scale
			var z bytes.Buffer
			zw := zlib.NewWriter(&z)
			zw.Write(rgb)
			zw.Close()
			name := fmt.Sprintf("Im%d", len(images))
			images = append(images, fmt.Sprintf("<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /FlateDecode /Length %d >>\nstream\n%s\nendstream",
				w, h, z.Len(), z.String()))
			fmt.Fprintf(&content, "q %.2f 0 0 %.2f 50 %d cm /%s Do Q\n", dw, dh, y-int(dh)+10, name)
			y -= int(dh) + 6
		}
		y -= 12
	}
	var xobjs strings.Builder
	for i := range images {
		fmt.Fprintf(&xobjs, "/Im%d %d 0 R ", i, 6+i)
	}
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> /XObject << " + xobjs.String() + ">> >> /Contents 5 0 R >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", content.Len(), content.String()),
	}
	objs = append(objs, images...)
	writePDFObjects(out, objs)
	return nil
}

// imagePagePDF writes a one-page A4 PDF showing an image (PNG or JPEG)
// scaled to fit the page with a margin.
func imagePagePDF(out *bytes.Buffer, data []byte) error {
	w, h, rgb, ok := decodeRGB(data, maxInsertPixels)
	if !ok {
		return &GenerateError{Msg: fmt.Sprintf("an image to insert is not a PNG or JPEG of at most %d megapixels", maxInsertPixels/1_000_000)}
	}
	const pw, ph, margin = 595.0, 842.0, 36.0
	scale := min((pw-2*margin)/float64(w), (ph-2*margin)/float64(h))
	dw, dh := float64(w)*scale, float64(h)*scale
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(rgb)
	zw.Close()
	content := fmt.Sprintf("q %.2f 0 0 %.2f %.2f %.2f cm /Im0 Do Q\n", dw, dh, (pw-dw)/2, (ph-dh)/2)
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /XObject << /Im0 5 0 R >> >> /Contents 4 0 R >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content),
		fmt.Sprintf("<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /FlateDecode /Length %d >>\nstream\n%s\nendstream",
			w, h, z.Len(), z.String()),
	}
	writePDFObjects(out, objs)
	return nil
}

// maxInsertPixels bounds an image inserted by document generation.
const maxInsertPixels = 40_000_000

// writePDFObjects writes objs as a PDF with a classic xref table; object
// 1 is the catalog.
func writePDFObjects(out *bytes.Buffer, objs []string) {
	out.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offs := make([]int, len(objs))
	for i, o := range objs {
		offs[i] = out.Len()
		fmt.Fprintf(out, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := out.Len()
	fmt.Fprintf(out, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, o := range offs {
		fmt.Fprintf(out, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(out, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
}
