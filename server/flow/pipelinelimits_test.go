package flow_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"strings"
	"testing"
	"time"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// pngHeader is the start of a PNG declaring w × h pixels: enough for a
// decoder to learn the size, as a decompression bomb's header is.
func pngHeader(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 17)
	copy(ihdr, "IHDR")
	binary.BigEndian.PutUint32(ihdr[4:], w)
	binary.BigEndian.PutUint32(ihdr[8:], h)
	ihdr[12], ihdr[13] = 8, 0 // 8-bit gray
	binary.Write(&b, binary.BigEndian, uint32(13))
	b.Write(ihdr)
	binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(ihdr))
	return b.Bytes()
}

// TestActions_ResizeLimits: RESIZE refuses results over the size limits
// (asked for, or computed from "auto" on an extreme aspect ratio) and
// sources whose header declares too many pixels, before decoding them.
func TestActions_ResizeLimits(t *testing.T) {
	s := servertest.PipelineServer(t)
	tok := s.Admin()
	tall := quiretest.PNG(image.NewGray(image.Rect(0, 0, 2, 2000)))
	for _, tc := range []struct {
		name          string
		content       []byte
		width, height string
		status, msg   string
	}{
		{"auto height beyond the side limit", tall, "20000", "auto", "FAILED", "too large"},
		{"too many pixels asked for", tall, "9000", "9000", "FAILED", "too large"},
		{"header declaring a huge image", pngHeader(100000, 100000), "10", "10", "FAILED", "too large"},
		{"header declaring no pixels", pngHeader(0, 10), "10", "10", "", ""},
		{"within the limits", tall, "4", "auto", "COMPLETE", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := servertest.AddDoc(t, s, tok, "", map[string]any{"path": "img.png", "contentType": "image/png", "isBase64": true, "content": servertest.B64(tc.content),
				"actions": []map[string]any{{"type": "RESIZE", "parameters": map[string]any{"width": tc.width, "height": tc.height}}}})
			st := servertest.WaitActions(t, s, tok, "", id)
			a := servertest.NthAction(t, s, tok, "", id, 0)
			m, _ := a["message"].(string)
			if tc.status == "" {
				// Go's decoder may refuse the header itself: any outcome
				// but a crash or a COMPLETE will do.
				if st[0] == "COMPLETE" {
					t.Fatalf("resized an image without pixels: %v", a)
				}
				return
			}
			if st[0] != tc.status || !strings.Contains(m, tc.msg) {
				t.Fatalf("status %v message %q, want %s with %q", st, m, tc.status, tc.msg)
			}
		})
	}
}

// TestActions_OCRRefusesBeforeRendering: a PDF with more pages than
// pipeline.ocr_max_pages, or with a page too large to render, fails at
// once, before pdftoppm renders anything; ocrNumberOfPages within the
// limit reads the first pages.
func TestActions_OCRRefusesBeforeRendering(t *testing.T) {
	quiretest.NeedProgram(t, "tesseract", "tesseract-ocr")
	quiretest.NeedProgram(t, "pdftoppm", "poppler-utils")
	quiretest.NeedProgram(t, "pdfinfo", "poppler-utils")
	s := servertest.PipelineServer(t, func(c *quiretest.Config) { c.Pipeline.OCRMaxPages = 50 })
	tok := s.Admin()
	// Small pages (2 inches, 600 px a side at 300 dpi): the page count is
	// what the first two cases refuse, and the last reads two pages of it,
	// blank as a letter's would be but without rendering, decoding and
	// reading 8.4 megapixels each under the race detector (issue 45).
	many := quiretest.BlankPDF(10000, 144, 144)
	for _, tc := range []struct {
		name, pages string
		pdf         []byte
		status, msg string
	}{
		{"10,000 pages", "-1", many, "FAILED", "the PDF has 10000 pages; OCR renders at most 50"},
		{"more pages asked for than allowed", "60", many, "FAILED", "OCR renders at most 50"},
		{"a page too large to render", "-1", quiretest.BlankPDF(1, 14400, 14400), "FAILED", "page 1 is 14400 x 14400 points, too large"},
		{"the first pages of a long PDF", "2", many, "COMPLETE", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			id := servertest.AddDoc(t, s, tok, "", map[string]any{"path": "scan.pdf", "contentType": "application/pdf", "isBase64": true, "content": servertest.B64(tc.pdf),
				"actions": []map[string]any{{"type": "OCR", "parameters": map[string]any{"ocrNumberOfPages": tc.pages}}}})
			st := servertest.WaitActions(t, s, tok, "", id)
			a := servertest.NthAction(t, s, tok, "", id, 0)
			m, _ := a["message"].(string)
			if st[0] != tc.status || !strings.Contains(m, tc.msg) {
				t.Fatalf("status %v message %q, want %s with %q", st, m, tc.status, tc.msg)
			}
			if md, _ := a["metadata"].(map[string]any); tc.status == "COMPLETE" && md["pages"] != "2" {
				t.Fatalf("metadata %v, want 2 pages read", md)
			}
			t.Logf("took %s", time.Since(start))
		})
	}
}
