package quiretest

import (
	"archive/zip"
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"image/png"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// TextImage renders lines of black text on white, large enough for OCR.
func TextImage(lines ...string) image.Image {
	f, err := opentype.Parse(goregular.TTF)
	if err != nil {
		panic(err)
	}
	face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: 36, DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		panic(err)
	}
	defer face.Close()
	const lineH, margin = 56, 40
	w := 0
	for _, l := range lines {
		w = max(w, font.MeasureString(face, l).Ceil())
	}
	img := image.NewRGBA(image.Rect(0, 0, w+2*margin, len(lines)*lineH+2*margin))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	d := &font.Drawer{Dst: img, Src: image.NewUniform(color.Black), Face: face}
	for i, l := range lines {
		d.Dot = fixed.P(margin, margin+(i+1)*lineH-16)
		d.DrawString(l)
	}
	return img
}

// PNG encodes an image as PNG.
func PNG(img image.Image) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// ImagePDF wraps an image into a one-page PDF without a text layer (what a
// scanner produces).
func ImagePDF(img image.Image) []byte {
	var jb bytes.Buffer
	if err := jpeg.Encode(&jb, img, &jpeg.Options{Quality: 90}); err != nil {
		panic(err)
	}
	w, h := img.Bounds().Dx(), img.Bounds().Dy()
	content := fmt.Sprintf("q %d 0 0 %d 0 0 cm /Im0 Do Q", w, h)
	return buildPDF(w, h, []string{
		fmt.Sprintf("<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode /Length %d >>\nstream\n%s\nendstream", w, h, jb.Len(), jb.String()),
	}, content, "/XObject << /Im0 5 0 R >>")
}

// TextPDF makes a one-page PDF whose lines are real text (Helvetica).
func TextPDF(lines ...string) []byte {
	var c strings.Builder
	c.WriteString("BT /F1 14 Tf 50 750 Td 18 TL\n")
	for _, l := range lines {
		l = strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(l)
		fmt.Fprintf(&c, "(%s) Tj T*\n", l)
	}
	c.WriteString("ET")
	return buildPDF(612, 792, []string{"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"}, c.String(), "/Font << /F1 5 0 R >>")
}

// buildPDF writes a one-page PDF: catalog 1, pages 2, page 3, content 4,
// then extra objects from 5 on.
func buildPDF(w, h int, extra []string, content, resources string) []byte {
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %d %d] /Contents 4 0 R /Resources << %s >> >>", w, h, resources),
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content),
	}
	return writePDF(append(objs, extra...))
}

// writePDF writes objects 1… with their cross-reference table; object 1
// is the catalog.
func writePDF(objs []string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offs := make([]int, len(objs))
	for i, o := range objs {
		offs[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, o := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// DOCX makes a minimal Word document with one paragraph per line.
func DOCX(paragraphs ...string) []byte {
	runs := make([][]string, len(paragraphs))
	for i, p := range paragraphs {
		runs[i] = []string{p}
	}
	return DOCXRuns(runs...)
}

// DOCXRuns makes a Word document whose paragraphs are made of the given
// runs, every second one bold, as a word processor splits text that
// changed formatting or was typed in several goes.
func DOCXRuns(paragraphs ...[]string) []byte {
	var body strings.Builder
	for _, p := range paragraphs {
		body.WriteString("<w:p>")
		for i, r := range p {
			rpr := ""
			if i%2 == 1 {
				rpr = "<w:rPr><w:b/></w:rPr>"
			}
			fmt.Fprintf(&body, `<w:r>%s<w:t xml:space="preserve">%s</w:t></w:r>`, rpr, xmlEscape(r))
		}
		body.WriteString("</w:p>")
	}
	files := map[string]string{
		"[Content_Types].xml": `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`,
		"_rels/.rels": `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`,
		"word/document.xml": `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>` + body.String() + `</w:body></w:document>`,
	}
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, name := range []string{"[Content_Types].xml", "_rels/.rels", "word/document.xml"} {
		w, err := zw.Create(name)
		if err != nil {
			panic(err)
		}
		w.Write([]byte(files[name]))
	}
	if err := zw.Close(); err != nil {
		panic(err)
	}
	return b.Bytes()
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// EICAR is the antivirus test file every scanner detects.
const EICAR = `X5O!P%@AP[4\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*`

// BlankPDF makes a PDF of pages empty pages of w × h points (a page count
// or page size that OCR must refuse to render).
func BlankPDF(pages, w, h int) []byte {
	objs := []string{"<< /Type /Catalog /Pages 2 0 R >>", "", "<< /Length 0 >>\nstream\n\nendstream"}
	kids := make([]string, pages)
	for i := range pages {
		kids[i] = fmt.Sprintf("%d 0 R", len(objs)+1)
		objs = append(objs, fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %d %d] /Contents 3 0 R /Resources << >> >>", w, h))
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), pages)
	return writePDF(objs)
}

// FormPDF makes a one-page PDF with an AcroForm of text fields holding
// the given values (field name → value), and an Info dictionary with the
// title: what GET /objects/examine/{id}/pdf reads back.
func FormPDF(title string, fields [][2]string) []byte {
	esc := strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace
	n := len(fields)
	// 1 catalog, 2 pages, 3 page, 4 content, 5 info, 6.. fields.
	var kids, annots strings.Builder
	objs := []string{
		"", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>", "",
		"<< /Length 0 >>\nstream\n\nendstream",
		fmt.Sprintf("<< /Title (%s) /Producer (quiretest) >>", esc(title)),
	}
	for i, f := range fields {
		ref := fmt.Sprintf("%d 0 R ", 6+i)
		kids.WriteString(ref)
		annots.WriteString(ref)
		objs = append(objs, fmt.Sprintf("<< /Type /Annot /Subtype /Widget /FT /Tx /T (%s) /V (%s) /Rect [50 %d 300 %d] /P 3 0 R >>",
			esc(f[0]), esc(f[1]), 700-30*i, 720-30*i))
	}
	objs[0] = fmt.Sprintf("<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [%s] >> >>", kids.String())
	objs[2] = fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Annots [%s] >>", annots.String())
	_ = n
	b := writePDF(objs)
	// The trailer names the Info dictionary.
	return bytes.Replace(b, []byte("/Root 1 0 R >>"), []byte("/Root 1 0 R /Info 5 0 R >>"), 1)
}
