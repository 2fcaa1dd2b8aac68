package ocr

import (
	"bytes"
	"fmt"
	"image"
	"image/draw"
	"image/jpeg"
	"math/rand/v2"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// Scanned pages for the OCR rows (issue 46): what an office scanner
// delivers, an A4 sheet at 300 dpi in 8-bit gray, JPEG-compressed inside
// a PDF with no text layer. Each page is a typed letter or report page:
// a heading, a reference line and some 30 lines of office English at
// 11 pt, so tesseract does the work of a real page (a blank or a
// one-line page would measure process start-up, not reading).
//
// Every page carries a marker: a made-up word found nowhere else, printed
// in its reference line and again in its body. The rows check that OCR
// read the markers (a fast OCR that reads nothing is not a result) and
// search for the last page's marker.

const (
	scanDPI    = 300
	scanWidth  = 2480 // A4 at 300 dpi
	scanHeight = 3508
	scanMargin = 240
	scanPt     = 11 // body text size
)

// scanWords is the vocabulary of the pages' body text.
var scanWords = strings.Fields(`the of and to in for on with by from at as is are was were be been will
would should could may must can our your their this that these those which please find attached enclosed
invoice order delivery payment account customer supplier contract agreement amount total balance due date
period month year quarter report meeting minutes board committee department office staff employee manager
director company business service services goods price prices cost costs budget plan project schedule
review approval request confirmation reference number copy letter document documents file records notice
terms conditions insurance policy claim tax return statement receipt transfer bank credit debit rent lease
building property maintenance repair equipment software licence license support training travel expenses
shipment warehouse stock inventory quality audit compliance legal counsel partner client meeting agenda
regards sincerely thank you kindly note further information questions contact telephone address street
following previous current annual monthly weekly final draft revised signed received sent issued approved
agreed required outstanding overdue paid unpaid net gross discount percent additional remaining new first
second third last next same other each all any several many more most less within after before during
under over between against without regarding according following upon until since because however therefore`)

// scanSyllables make the marker words: pronounceable, without the letter
// pairs OCR confuses (rn, cl, li, vv).
var scanSyllables = []string{"ka", "lo", "mi", "ne", "ru", "sa", "te", "vo", "bo", "da", "fe", "gu", "ha", "po", "ze", "ta"}

// scanMarker is the marker word of page p of document d of a run seeded
// with seed: 10 letters, the same for the same arguments.
func scanMarker(seed uint64, d, p int) string {
	r := rand.New(rand.NewPCG(seed, uint64(d)<<20|uint64(p)))
	var b strings.Builder
	b.WriteString("q")
	for b.Len() < 9 {
		b.WriteString(scanSyllables[r.IntN(len(scanSyllables))])
	}
	return b.String()[:9] + "x"
}

// scanFace is the body font at scanPt and scanDPI.
func scanFace(pt float64) (font.Face, error) {
	f, err := opentype.Parse(goregular.TTF)
	if err != nil {
		return nil, err
	}
	return opentype.NewFace(f, &opentype.FaceOptions{Size: pt, DPI: scanDPI, Hinting: font.HintingFull})
}

// scanLines returns the text lines of page p (1-based) of pages of a
// document, with its marker in the reference line and in the body.
func scanLines(seed uint64, d, p, pages int, face font.Face) []string {
	r := rand.New(rand.NewPCG(seed^0x5ca9, uint64(d)<<20|uint64(p)))
	marker := scanMarker(seed, d, p)
	width := fixed.I(scanWidth - 2*scanMargin)
	lines := []string{
		fmt.Sprintf("Quire Trading Ltd, 14 Harbour Street - page %d of %d", p, pages),
		fmt.Sprintf("Reference: %s / document %d", marker, d+1),
		"",
	}
	var line []string
	fits := func(ws []string) bool { return font.MeasureString(face, strings.Join(ws, " ")) <= width }
	sentence := 0
	for len(lines) < 36 {
		n := 6 + r.IntN(10)
		for i := 0; i < n; i++ {
			w := scanWords[r.IntN(len(scanWords))]
			if i == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			}
			if i == n-1 {
				w += "."
			}
			if sentence == 3 && i == 2 {
				w = marker // the marker once more, inside a sentence
			}
			if !fits(append(line, w)) {
				lines = append(lines, strings.Join(line, " "))
				line = nil
			}
			line = append(line, w)
		}
		sentence++
		if r.IntN(5) == 0 && len(line) > 0 { // a paragraph ends
			lines = append(lines, strings.Join(line, " "), "")
			line = nil
		}
	}
	return append(lines, strings.Join(line, " "))
}

// scanPage renders page p of pages of document d as a gray 300 dpi A4
// image.
func scanPage(seed uint64, d, p, pages int, face font.Face) *image.Gray {
	img := image.NewGray(image.Rect(0, 0, scanWidth, scanHeight))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	dr := &font.Drawer{Dst: img, Src: image.Black, Face: face}
	lineH := face.Metrics().Height.Ceil() * 14 / 10
	for i, l := range scanLines(seed, d, p, pages, face) {
		dr.Dot = fixed.P(scanMargin, scanMargin+(i+1)*lineH)
		dr.DrawString(l)
	}
	return img
}

// scanJPEG encodes a page as a scanner does (JPEG, quality 80).
func scanJPEG(img image.Image) ([]byte, error) {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 80}); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// scanPDF wraps gray JPEG pages into a PDF of A4 pages without a text
// layer: the images are placed at scanDPI.
func scanPDF(pages [][]byte) []byte {
	const w, h = 595, 842 // A4 in points
	n := len(pages)
	// 1 catalog, 2 pages, then per page: page, content, image.
	objs := []string{"<< /Type /Catalog /Pages 2 0 R >>", ""}
	kids := make([]string, n)
	content := fmt.Sprintf("q %d 0 0 %d 0 0 cm /Im0 Do Q", w, h)
	for i, jb := range pages {
		page := len(objs) + 1
		kids[i] = fmt.Sprintf("%d 0 R", page)
		objs = append(objs,
			fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %d %d] /Contents %d 0 R /Resources << /XObject << /Im0 %d 0 R >> >> >>", w, h, page+1, page+2),
			fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content),
			fmt.Sprintf("<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /DCTDecode /Length %d >>\nstream\n%s\nendstream",
				scanWidth, scanHeight, len(jb), jb))
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), n)
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
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

// scanDoc is one generated scan: its pages as JPEG files' bytes, the PDF
// of them, and each page's marker.
type scanDoc struct {
	pages   [][]byte
	pdf     []byte
	markers []string
}

// makeScan generates document d of pages pages.
func makeScan(seed uint64, d, pages int) (scanDoc, error) {
	face, err := scanFace(scanPt)
	if err != nil {
		return scanDoc{}, err
	}
	defer face.Close()
	var sd scanDoc
	for p := 1; p <= pages; p++ {
		jb, err := scanJPEG(scanPage(seed, d, p, pages, face))
		if err != nil {
			return scanDoc{}, err
		}
		sd.pages = append(sd.pages, jb)
		sd.markers = append(sd.markers, scanMarker(seed, d, p))
	}
	sd.pdf = scanPDF(sd.pages)
	return sd, nil
}

// markersIn counts the markers found in text (OCR output), and returns
// the first one missing ("" when none is).
func markersIn(text string, markers []string) (int, string) {
	found, missing := 0, ""
	low := strings.ToLower(text)
	for _, m := range markers {
		if strings.Contains(low, m) {
			found++
		} else if missing == "" {
			missing = m
		}
	}
	return found, missing
}
