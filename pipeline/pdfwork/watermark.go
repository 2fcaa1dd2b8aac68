package pdfwork

// Watermarks (API.md "Watermarks"): a document carrying a WATERMARK
// attribute is served stamped with the attribute definition's text. PDFs
// are stamped by qpdf (--overlay) with a stamp page per page drawn here
// (sized from poppler's pdfinfo -box); PNG and JPEG images are decoded,
// drawn on and encoded again in their format. The stamped copy is a
// temporary file, streamed and removed when closed: it never replaces or
// joins the stored content.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"quire/pipeline/engine"
	"quire/storage"
)

// Watermark limits (API.md "Watermarks").
const (
	MaxWatermarkText     = 100        // characters of a watermark's text
	MaxWatermarkFontSize = 400        // points (PDF) or pixels (images)
	MaxWatermarkOffset   = 100000     // |xOffset|, |yOffset|
	MaxWatermarkPixels   = 25_000_000 // pixels of an image stamped
	MaxWatermarkPages    = 10000      // pages of a PDF stamped
	MaxWatermarkBytes    = 512 << 20  // bytes of a PDF or image stamped
	DefaultWatermarkSize = 48
	DefaultOpacity       = 0.5
)

// Mark is one watermark to stamp: FormKiQ's Watermark object, defaults
// applied, plus Quire's opacity.
type Mark struct {
	Text             string
	FontSize         float64 // points (PDF) or pixels (images)
	Rotation         float64 // degrees, counterclockwise
	FitBest          bool    // scale FIT_BEST: the text fills the page
	XAnchor, YAnchor string  // LEFT|RIGHT|CENTER, TOP|BOTTOM|CENTER
	XOffset, YOffset float64 // inwards from the anchor edge; from the centre: right, up
	Opacity          float64 // 0 < opacity ≤ 1
}

// MarkProblem is one invalid field of a watermark definition.
type MarkProblem struct{ Key, Msg string }

// ParseMark validates a watermark definition (the attribute's
// "watermark" object) and returns it with defaults applied.
func ParseMark(raw json.RawMessage) (Mark, []MarkProblem) {
	var in struct {
		FontSize        *float64 `json:"fontSize"`
		Text            *string  `json:"text"`
		Rotation        *float64 `json:"rotation"`
		ImageDocumentID *string  `json:"imageDocumentId"`
		Scale           *string  `json:"scale"`
		Opacity         *float64 `json:"opacity"`
		Position        *struct {
			XAnchor *string  `json:"xAnchor"`
			YAnchor *string  `json:"yAnchor"`
			XOffset *float64 `json:"xOffset"`
			YOffset *float64 `json:"yOffset"`
		} `json:"position"`
	}
	var probs []MarkProblem
	fail := func(k, m string) { probs = append(probs, MarkProblem{"watermark." + k, m}) }
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" || raw[0] != '{' {
		return Mark{}, []MarkProblem{{"watermark", "'watermark' must be an object"}}
	}
	if err := dec.Decode(&in); err != nil {
		msg := "invalid 'watermark'"
		if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			msg = "unknown field " + strings.ReplaceAll(f, `"`, "'") + " in 'watermark'"
		}
		return Mark{}, []MarkProblem{{"watermark", msg}}
	}
	m := Mark{FontSize: DefaultWatermarkSize, XAnchor: "CENTER", YAnchor: "CENTER", Opacity: DefaultOpacity}
	switch {
	case in.Text == nil || strings.TrimSpace(*in.Text) == "":
		fail("text", "'text' is required")
	case utf8.RuneCountInString(*in.Text) > MaxWatermarkText:
		fail("text", fmt.Sprintf("'text' is longer than %d characters", MaxWatermarkText))
	case strings.ContainsFunc(*in.Text, func(r rune) bool { return r < 0x20 || (r >= 0x7f && r < 0xa0) || r > 0xff }):
		fail("text", "'text' may hold printable Latin-1 characters only")
	default:
		m.Text = *in.Text
	}
	if in.FontSize != nil {
		if *in.FontSize < 1 || *in.FontSize > MaxWatermarkFontSize {
			fail("fontSize", fmt.Sprintf("'fontSize' must be between 1 and %d", MaxWatermarkFontSize))
		}
		m.FontSize = *in.FontSize
	}
	if in.Rotation != nil {
		if *in.Rotation < -360 || *in.Rotation > 360 {
			fail("rotation", "'rotation' must be between -360 and 360 degrees")
		}
		m.Rotation = *in.Rotation
	}
	if in.ImageDocumentID != nil {
		fail("imageDocumentId", "image watermarks are not supported: use 'text'")
	}
	if in.Scale != nil {
		switch *in.Scale {
		case "ORIGINAL":
		case "FIT_BEST":
			m.FitBest = true
		default:
			fail("scale", "invalid 'scale': use FIT_BEST or ORIGINAL")
		}
	}
	if in.Opacity != nil {
		if !(*in.Opacity > 0 && *in.Opacity <= 1) {
			fail("opacity", "'opacity' must be over 0 and at most 1")
		}
		m.Opacity = *in.Opacity
	}
	if p := in.Position; p != nil {
		if p.XAnchor != nil {
			if *p.XAnchor != "LEFT" && *p.XAnchor != "RIGHT" && *p.XAnchor != "CENTER" {
				fail("position.xAnchor", "invalid 'xAnchor': use LEFT, RIGHT or CENTER")
			}
			m.XAnchor = *p.XAnchor
		}
		if p.YAnchor != nil {
			if *p.YAnchor != "TOP" && *p.YAnchor != "BOTTOM" && *p.YAnchor != "CENTER" {
				fail("position.yAnchor", "invalid 'yAnchor': use TOP, BOTTOM or CENTER")
			}
			m.YAnchor = *p.YAnchor
		}
		for _, o := range []struct {
			k string
			v *float64
			d *float64
		}{{"position.xOffset", p.XOffset, &m.XOffset}, {"position.yOffset", p.YOffset, &m.YOffset}} {
			if o.v == nil {
				continue
			}
			if math.Abs(*o.v) > MaxWatermarkOffset {
				fail(o.k, fmt.Sprintf("'%s' must be between -%d and %d", o.k[len("position."):], MaxWatermarkOffset, MaxWatermarkOffset))
			}
			*o.d = *o.v
		}
	}
	return m, probs
}

// WatermarkError is content that cannot be stamped: its type, its size or
// its form. It is never served unstamped instead.
type WatermarkError struct{ Msg string }

func (e *WatermarkError) Error() string { return e.Msg }

// CanWatermark reports whether content of type ctype can be stamped.
func CanWatermark(ctype string) bool {
	return watermarkKind(ctype) != ""
}

func watermarkKind(ctype string) string { return storage.WatermarkKind(ctype) }

// Stamped is a stamped copy: a temporary file, removed when closed.
type Stamped struct {
	*os.File
	dir    string
	Size   int64
	SHA256 string // of the stamped bytes
}

// Close closes and removes the copy.
func (s *Stamped) Close() error {
	err := s.File.Close()
	os.RemoveAll(s.dir)
	return err
}

// wmSlots bounds concurrent stamping (decoded images and qpdf runs are
// heavy); a request waits for a slot as long as its context lets it.
var wmSlots = make(chan struct{}, 2)

// Watermark stamps marks on the content in src, of type ctype, in a
// temporary file under tempDir ("" for the system's). Content it cannot
// stamp is a *WatermarkError.
func Watermark(ctx context.Context, tempDir string, src io.Reader, ctype string, marks []Mark) (*Stamped, error) {
	kind := watermarkKind(ctype)
	if kind == "" {
		return nil, &WatermarkError{Msg: fmt.Sprintf("content of type '%s' cannot be watermarked (PDF, PNG and JPEG can)", ctype)}
	}
	if len(marks) == 0 {
		return nil, errors.New("watermark: no marks")
	}
	select {
	case wmSlots <- struct{}{}:
		defer func() { <-wmSlots }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	dir, err := os.MkdirTemp(tempDir, "watermark-")
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(dir)
		}
	}()
	in := filepath.Join(dir, "in")
	f, err := os.OpenFile(in, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	n, err := io.Copy(f, io.LimitReader(src, MaxWatermarkBytes+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if n > MaxWatermarkBytes {
		return nil, &WatermarkError{Msg: fmt.Sprintf("the content is over %d MiB and cannot be watermarked", MaxWatermarkBytes>>20)}
	}
	out := filepath.Join(dir, "out")
	if kind == "pdf" {
		err = stampPDF(ctx, dir, in, out, marks)
	} else {
		err = stampImage(in, out, kind, marks)
	}
	if err != nil {
		return nil, err
	}
	of, err := os.Open(out)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	size, err := io.Copy(h, of)
	if err == nil {
		_, err = of.Seek(0, io.SeekStart)
	}
	if err != nil {
		of.Close()
		return nil, err
	}
	ok = true
	return &Stamped{File: of, dir: dir, Size: size, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// placement is where a mark's text goes on a page of pw×ph (y up): the
// text's baseline origin and its size. w1 is the text's width at size 1,
// asc and desc its ascent and descent at size 1.
func (m Mark) placement(pw, ph, w1, asc, desc float64) (ox, oy, size float64) {
	th := m.Rotation * math.Pi / 180
	c, s := math.Cos(th), math.Sin(th)
	// bbox of the rotated unit box [0,w1]×[-desc,asc]
	bbox := func(k float64) (minx, miny, maxx, maxy float64) {
		minx, miny, maxx, maxy = math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
		for _, p := range [][2]float64{{0, -desc * k}, {w1 * k, -desc * k}, {0, asc * k}, {w1 * k, asc * k}} {
			x, y := p[0]*c-p[1]*s, p[0]*s+p[1]*c
			minx, maxx = math.Min(minx, x), math.Max(maxx, x)
			miny, maxy = math.Min(miny, y), math.Max(maxy, y)
		}
		return
	}
	size = m.FontSize
	if m.FitBest {
		x0, y0, x1, y1 := bbox(1)
		size = 0.9 * math.Min(pw/(x1-x0), ph/(y1-y0))
	}
	minx, miny, maxx, maxy := bbox(size)
	bw, bh := maxx-minx, maxy-miny
	var bx, by float64
	switch m.XAnchor {
	case "LEFT":
		bx = m.XOffset
	case "RIGHT":
		bx = pw - m.XOffset - bw
	default:
		bx = (pw-bw)/2 + m.XOffset
	}
	switch m.YAnchor {
	case "BOTTOM":
		by = m.YOffset
	case "TOP":
		by = ph - m.YOffset - bh
	default:
		by = (ph-bh)/2 + m.YOffset
	}
	return bx - minx, by - miny, size
}

// helvetica holds Helvetica's widths (1/1000 em) of ASCII 32–126; other
// Latin-1 characters count 556.
var helvetica = [95]int{
	278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278,
	556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556,
	1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778,
	667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556,
	333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556,
	556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584,
}

func helveticaWidth(s string) float64 {
	w := 0
	for _, r := range s {
		if r >= 32 && r <= 126 {
			w += helvetica[r-32]
		} else {
			w += 556
		}
	}
	return float64(w) / 1000
}

var pdfinfoBox = regexp.MustCompile(`(?m)^Page\s+(\d+)\s+(TrimBox:|rot:)\s+(.*)$`)

type pageBox struct {
	w, h float64
	rot  int
}

// stampPDF overlays a stamp page on every page of the PDF in: the stamp
// page has the page's trim box size (as displayed, /Rotate applied) and
// qpdf places it upright over the page.
func stampPDF(ctx context.Context, dir, in, out string, marks []Mark) error {
	qpdf, err := engine.Find("", "qpdf", "qpdf")
	if err != nil {
		return err
	}
	pdfinfo, err := engine.Find("", "pdfinfo", "poppler-utils")
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	info, err := engine.Run(cctx, dir, pdfinfo, "-box", "-f", "1", "-l", strconv.Itoa(MaxWatermarkPages+1), in)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &WatermarkError{Msg: "the PDF cannot be read to be watermarked (damaged or password protected)"}
	}
	pages := map[int]*pageBox{}
	n := 0
	for _, m := range pdfinfoBox.FindAllSubmatch(info, -1) {
		no, _ := strconv.Atoi(string(m[1]))
		if no < 1 || no > MaxWatermarkPages+1 {
			continue
		}
		p := pages[no]
		if p == nil {
			p = &pageBox{}
			pages[no] = p
		}
		n = max(n, no)
		f := strings.Fields(string(m[3]))
		if string(m[2]) == "rot:" && len(f) > 0 {
			p.rot, _ = strconv.Atoi(f[0])
			continue
		}
		if len(f) == 4 {
			var v [4]float64
			for i := range f {
				v[i], _ = strconv.ParseFloat(f[i], 64)
			}
			p.w, p.h = math.Abs(v[2]-v[0]), math.Abs(v[3]-v[1])
		}
	}
	if n > MaxWatermarkPages {
		return &WatermarkError{Msg: fmt.Sprintf("the PDF has over %d pages and cannot be watermarked", MaxWatermarkPages)}
	}
	if n == 0 || len(pages) != n {
		return &WatermarkError{Msg: "the PDF cannot be read to be watermarked"}
	}
	var stamp bytes.Buffer
	writeStampPDF(&stamp, pages, n, marks)
	sp := filepath.Join(dir, "stamp.pdf")
	if err := os.WriteFile(sp, stamp.Bytes(), 0o600); err != nil {
		return err
	}
	if _, err := engine.Run(cctx, dir, qpdf, "--warning-exit-0", in, "--overlay", sp, "--", out); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &WatermarkError{Msg: "the PDF cannot be watermarked (damaged or password protected)"}
	}
	return nil
}

// writeStampPDF writes the stamp pages: page i has page i's displayed
// size; pages of one size share their content stream.
func writeStampPDF(out *bytes.Buffer, pages map[int]*pageBox, n int, marks []Mark) {
	// 1 catalog, 2 pages, 3 font, 4… graphics states, then content
	// streams, then pages.
	objs := []string{"", "", "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"}
	var res strings.Builder
	res.WriteString("<< /Font << /F1 3 0 R >> /ExtGState <<")
	for i, m := range marks {
		objs = append(objs, fmt.Sprintf("<< /Type /ExtGState /ca %s /CA %s >>", num(m.Opacity), num(m.Opacity)))
		fmt.Fprintf(&res, " /G%d %d 0 R", i+1, len(objs))
	}
	res.WriteString(" >> >>")
	type size struct{ w, h float64 }
	streams := map[size]int{}
	kids := make([]string, 0, n)
	var pageObjs []string
	firstPage := 0 // object number of the first page, known once streams are placed
	sizes := make([]size, n)
	for i := 1; i <= n; i++ {
		p := pages[i]
		sz := size{p.w, p.h}
		if r := ((p.rot % 360) + 360) % 360; r == 90 || r == 270 {
			sz = size{p.h, p.w}
		}
		sizes[i-1] = sz
		if _, ok := streams[sz]; ok {
			continue
		}
		var c strings.Builder
		for j, m := range marks {
			ox, oy, fs := m.placement(sz.w, sz.h, helveticaWidth(m.Text), 0.718, 0.207)
			th := m.Rotation * math.Pi / 180
			co, si := math.Cos(th), math.Sin(th)
			fmt.Fprintf(&c, "q /G%d gs 0.5 g BT /F1 %s Tf %s %s %s %s %s %s Tm (%s) Tj ET Q\n",
				j+1, num(fs), num(co), num(si), num(-si), num(co), num(ox), num(oy), pdfText(m.Text))
		}
		objs = append(objs, fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", c.Len()+0, c.String()))
		streams[sz] = len(objs)
	}
	firstPage = len(objs) + 1
	for i := range n {
		sz := sizes[i]
		kids = append(kids, fmt.Sprintf("%d 0 R", firstPage+i))
		pageObjs = append(pageObjs, fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %s %s] /Resources %s /Contents %d 0 R >>",
			num(sz.w), num(sz.h), res.String(), streams[sz]))
	}
	objs = append(objs, pageObjs...)
	objs[0] = "<< /Type /Catalog /Pages 2 0 R >>"
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), n)
	writePDFObjects(out, objs)
}

func num(f float64) string {
	if math.Abs(f) < 1e-9 {
		return "0"
	}
	return strconv.FormatFloat(f, 'f', 4, 64)
}
