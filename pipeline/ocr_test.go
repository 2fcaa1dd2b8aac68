package pipeline_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/image/tiff"

	"quire/pipeline"
	"quire/quiretest"
	"quire/storage"
)

// ocrServer is a server whose OCR is ready to run (engines installed).
// Its default site reads English alone (and keeps quiretest's default
// actions off): the tests' scans are English unless a test is about
// languages, which sets its own or uses a site that chose none
// (TestOCR_Office), and tesseract reads a page once per language (the
// default three were half of each reading's CPU; issue 45).
func ocrServer(t *testing.T, opts ...quiretest.Option) *quiretest.Server {
	t.Helper()
	for _, p := range [][2]string{{"tesseract", "tesseract-ocr"}, {"pdftotext", "poppler-utils"}, {"pdfinfo", "poppler-utils"}, {"pdfimages", "poppler-utils"},
		{"pdftoppm", "poppler-utils"}, {"qpdf", "qpdf"}, {"gs", "ghostscript"}, {"img2pdf", "img2pdf"}} {
		quiretest.NeedProgram(t, p[0], p[1])
	}
	base := func(c *quiretest.Config) { c.Pipeline.RetryBase = 50 * time.Millisecond }
	s := quiretest.NewServer(t, append([]quiretest.Option{base}, opts...)...)
	setProcessing(t, s, "default", &storage.ProcessingConfig{Languages: []string{"eng"}, DefaultActions: &[]string{}})
	return s
}

// setProcessing stores a site's processing configuration (the storage side
// of PATCH /sites/{siteId}/configuration's processing section).
func setProcessing(t *testing.T, s *quiretest.Server, site string, p *storage.ProcessingConfig) {
	t.Helper()
	c, err := s.Node.DB.SiteConfig(site)
	if err != nil {
		t.Fatal(err)
	}
	c.Processing = p
	if _, err := s.Node.DB.Apply(context.Background(), storage.MustCommand(storage.OpSetSiteConfig, site, "admin", time.Now(), *c)); err != nil {
		t.Fatal(err)
	}
}

// rotate90 turns an image a quarter clockwise, as a letter fed sideways.
func rotate90(src image.Image) image.Image {
	b := src.Bounds()
	dst := image.NewRGBA(image.Rect(0, 0, b.Dy(), b.Dx()))
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			dst.Set(b.Dy()-1-y, x, src.At(b.Min.X+x, b.Min.Y+y))
		}
	}
	return dst
}

// skew turns an image by deg degrees about its centre on a white page
// larger by a margin, as a sheet that went in askew.
func skew(src image.Image, deg float64) image.Image {
	b := src.Bounds()
	const m = 60
	dst := image.NewRGBA(image.Rect(0, 0, b.Dx()+2*m, b.Dy()+2*m))
	draw.Draw(dst, dst.Bounds(), image.White, image.Point{}, draw.Src)
	sin, cos := math.Sincos(deg * math.Pi / 180)
	cx, cy := float64(dst.Bounds().Dx())/2, float64(dst.Bounds().Dy())/2
	for y := 0; y < dst.Bounds().Dy(); y++ {
		for x := 0; x < dst.Bounds().Dx(); x++ {
			dx, dy := float64(x)-cx, float64(y)-cy
			sx := int(cos*dx+sin*dy+cx) - m
			sy := int(-sin*dx+cos*dy+cy) - m
			if sx >= 0 && sy >= 0 && sx < b.Dx() && sy < b.Dy() {
				dst.Set(x, y, src.At(b.Min.X+sx, b.Min.Y+sy))
			}
		}
	}
	return dst
}

// grayTIFF encodes an image as a scanner does: 8-bit gray TIFF.
func grayTIFF(t *testing.T, img image.Image) []byte {
	t.Helper()
	g := image.NewGray(img.Bounds())
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			g.Set(x, y, color.GrayModel.Convert(img.At(x, y)))
		}
	}
	var b bytes.Buffer
	if err := tiff.Encode(&b, g, &tiff.Options{Compression: tiff.Deflate}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// grayTIFFPages encodes images as one multi-page TIFF, as a scanner's
// feeder makes it: 8-bit gray, uncompressed, 300 dpi, one strip a page.
func grayTIFFPages(t *testing.T, imgs ...image.Image) []byte {
	t.Helper()
	le := binary.LittleEndian
	b := []byte{'I', 'I', 42, 0, 0, 0, 0, 0}
	next := 4 // where the offset of the next IFD goes
	for _, img := range imgs {
		w, h := img.Bounds().Dx(), img.Bounds().Dy()
		pix := b[len(b):]
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				pix = append(pix, color.GrayModel.Convert(img.At(img.Bounds().Min.X+x, img.Bounds().Min.Y+y)).(color.Gray).Y)
			}
		}
		strip := len(b)
		b = append(b, pix...)
		if len(b)%2 == 1 {
			b = append(b, 0)
		}
		res := len(b) // 300/1, for X and Y resolution
		b = le.AppendUint32(le.AppendUint32(b, 300), 1)
		ifd := len(b)
		le.PutUint32(b[next:], uint32(ifd))
		type entry struct {
			tag, typ uint16
			val      uint32
		}
		es := []entry{{256, 4, uint32(w)}, {257, 4, uint32(h)}, {258, 3, 8}, {259, 3, 1}, {262, 3, 1}, {273, 4, uint32(strip)},
			{277, 3, 1}, {278, 4, uint32(h)}, {279, 4, uint32(w * h)}, {282, 5, uint32(res)}, {283, 5, uint32(res)}, {296, 3, 2}}
		b = le.AppendUint16(b, uint16(len(es)))
		for _, e := range es {
			b = le.AppendUint32(le.AppendUint16(le.AppendUint16(b, e.tag), e.typ), 1)
			b = le.AppendUint32(b, e.val)
		}
		next = len(b)
		b = le.AppendUint32(b, 0)
	}
	return b
}

// joinPDFs makes one PDF of the pages of pdfs (qpdf).
func joinPDFs(t *testing.T, pdfs ...[]byte) []byte {
	t.Helper()
	dir := t.TempDir()
	args := []string{"--empty", "--pages"}
	for i, p := range pdfs {
		fn := filepath.Join(dir, string(rune('a'+i))+".pdf")
		if err := os.WriteFile(fn, p, 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, fn)
	}
	out := filepath.Join(dir, "out.pdf")
	if b, err := exec.Command("qpdf", append(args, "--", out)...).CombinedOutput(); err != nil {
		t.Fatalf("qpdf: %v %s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// addScan adds a document with an OCR action (and FULLTEXT after it) and
// returns its id.
func addScan(t *testing.T, s *quiretest.Server, tok, site, path, ctype string, content []byte, params map[string]any) string {
	t.Helper()
	r := s.Do(http.MethodPost, "/documents?siteId="+site, map[string]any{"path": path, "contentType": ctype, "isBase64": true,
		"content": base64.StdEncoding.EncodeToString(content),
		"actions": []map[string]any{{"type": "OCR", "parameters": params}, {"type": "FULLTEXT", "parameters": map[string]any{"characterMax": "-1"}}}}, tok)
	if r.Status != http.StatusCreated {
		t.Fatalf("add %s: %d %s", path, r.Status, r.Body)
	}
	return quiretest.Str(t, r.JSON(t), "documentId")
}

// ocrAction waits until the document's OCR action has finished (any
// final status) and returns it.
func ocrAction(t *testing.T, s *quiretest.Server, tok, site, id string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		r := s.Do(http.MethodGet, "/documents/"+id+"/actions?siteId="+site, nil, tok)
		var last map[string]any
		for _, a := range quiretest.List(t, r.JSON(t), "actions") {
			if m := quiretest.Obj(t, a); m["type"] == "OCR" {
				last = m
			}
		}
		if last != nil {
			switch last["status"] {
			case "COMPLETE", "FAILED", "SKIPPED", "MAX_RETRIES_REACHED":
				return last
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("OCR of %s not finished within 3m: %s", id, r.Body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestOCR_Office reads scans the way an office makes them, each checked
// by what a client sees: the OCR text (GET /ocr), the action's status,
// message and metadata, the artifacts, and a search by a word of the scan.
// The site's processing.languages choose tesseract's languages: a German
// letter read in "deu" keeps its ß and umlauts, and so does one on a site
// that chose none (the default languages: English, German, French). The
// cases about the scan itself (turned, skewed, TIFF, pages, a text layer)
// are read on a site that chose English alone: tesseract reads a page once
// per language, and three models for words an English one reads as well
// were most of the test's CPU (issue 45).
func TestOCR_Office(t *testing.T) {
	s := ocrServer(t)
	tok := s.Admin()
	setProcessing(t, s, "de", &storage.ProcessingConfig{Languages: []string{"deu", "eng"}})
	setProcessing(t, s, "en", &storage.ProcessingConfig{Languages: []string{"eng"}})
	letter := quiretest.TextImage("Sehr geehrter Herr Becker,", "die Rechnung für die Straße", "Zebracorn 4711")
	page2 := quiretest.TextImage("Second page", "Quarterly umbrella report")
	for _, tc := range []struct {
		name, site, path, ctype string
		content                 func() []byte
		params                  map[string]any
		want                    []string
		meta                    map[string]string
	}{
		{"German letter, site in deu", "de", "brief.png", "image/png", func() []byte { return quiretest.PNG(letter) }, nil,
			[]string{"Straße", "für", "Zebracorn"}, map[string]string{"languages": "deu+eng", "pages": "1"}},
		{"rotated scan in a PDF", "en", "sideways.pdf", "application/pdf", func() []byte { return quiretest.ImagePDF(rotate90(letter)) }, nil,
			[]string{"Zebracorn", "Rechnung"}, map[string]string{"languages": "eng", "pages": "1"}},
		// A site that chose no languages reads in the console's
		// (storage.DefaultOCRLanguages, make deps installs them):
		// English alone read Straße as StraRe and für as fiir.
		{"German letter, site without languages", "plain", "brief-default.png", "image/png", func() []byte { return quiretest.PNG(letter) }, nil,
			[]string{"Straße", "für", "Zebracorn"}, map[string]string{"languages": "eng+deu+fra", "pages": "1"}},
		{"upside-down scan (turned by OSD, read again)", "en", "upside-down.png", "image/png", func() []byte { return quiretest.PNG(rotate90(rotate90(letter))) }, nil,
			[]string{"Zebracorn", "Rechnung"}, map[string]string{"pagesFixed": "1: turned 180"}},
		{"skewed scan", "en", "askew.jpg", "image/jpeg", func() []byte { return jpegBytes(t, skew(letter, 3)) }, nil,
			[]string{"Rechnung", "Zebracorn"}, nil},
		{"scan skewed by 6 degrees (straightened, read again)", "en", "askew6.png", "image/png", func() []byte {
			return quiretest.PNG(skew(quiretest.TextImage("Quarterly report of the Zebracorn warehouse for the board",
				"The umbrella invoices were paid in full by the end of March", "Please file this letter with the other records"), 6))
		}, nil, []string{"Zebracorn", "umbrella", "records"}, map[string]string{"pagesFixed": "1: straightened 6.0"}},
		{"TIFF from a scanner", "en", "scanner.tif", "image/tiff", func() []byte { return grayTIFF(t, letter) }, nil,
			[]string{"Zebracorn"}, nil},
		{"two-page TIFF from a scanner", "en", "scanner-2p.tif", "image/tiff", func() []byte { return grayTIFFPages(t, letter, page2) }, nil,
			[]string{"Zebracorn", "\fSecond page", "umbrella"}, map[string]string{"pages": "2"}},
		{"two-page PDF", "en", "two.pdf", "application/pdf", func() []byte {
			return joinPDFs(t, quiretest.ImagePDF(letter), quiretest.ImagePDF(page2))
		}, nil, []string{"Zebracorn", "\fSecond page", "umbrella"}, map[string]string{"pages": "2"}},
		{"two-page PDF, first page only", "en", "first.pdf", "application/pdf", func() []byte {
			return joinPDFs(t, quiretest.ImagePDF(letter), quiretest.ImagePDF(page2))
		}, map[string]any{"ocrNumberOfPages": "1"}, []string{"Zebracorn"}, map[string]string{"pages": "1"}},
		{"PDF with a text layer", "en", "born-digital.pdf", "application/pdf", func() []byte { return quiretest.TextPDF("Umbrella Logistics agreement") }, nil,
			[]string{"Umbrella Logistics"}, map[string]string{"textLayer": "true"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := addScan(t, s, tok, tc.site, tc.path, tc.ctype, tc.content(), tc.params)
			a := ocrAction(t, s, tok, tc.site, id)
			if a["status"] != "COMPLETE" {
				t.Fatalf("OCR %v: %v", a["status"], a)
			}
			md, _ := a["metadata"].(map[string]any)
			for k, v := range tc.meta {
				if md[k] != v {
					t.Errorf("metadata %s = %v, want %s (%v)", k, md[k], v, md)
				}
			}
			r := s.Do(http.MethodGet, "/documents/"+id+"/ocr?siteId="+tc.site, nil, tok)
			data, _ := r.JSON(t)["data"].(string)
			for _, w := range tc.want {
				if !strings.Contains(data, w) {
					t.Errorf("OCR text lacks %q: %q", w, data)
				}
			}
			if tc.name == "two-page PDF, first page only" && strings.Contains(data, "umbrella") {
				t.Errorf("ocrNumberOfPages 1 read page 2: %q", data)
			}
			// The searchable PDF/A is kept as an OCR artifact (not
			// promoted: addPdfDetectedCharactersAsText was not asked for).
			// A PDF read from its own text layer, or only in part
			// (ocrNumberOfPages), has no searchable copy to keep.
			if md["textLayer"] == "true" || tc.params["ocrNumberOfPages"] != nil {
				if md["artifactId"] != nil {
					t.Fatalf("artifact kept of a part or a text PDF: %v", md)
				}
				return
			}
			// It is built after the action (the text does not wait for
			// it): the action names it, and it appears.
			art, _ := md["artifactId"].(string)
			if art == "" {
				t.Fatalf("no OCR artifact named: %v", md)
			}
			ar := waitArtifact(t, s, tok, tc.site, id, art)
			if !strings.Contains(string(ar), `"artifactCategory":"OCR"`) {
				t.Fatalf("OCR artifact %q: %s", art, ar)
			}
			d := s.Do(http.MethodGet, "/documents/"+id+"?siteId="+tc.site, nil, tok).JSON(t)
			if p, _ := d["promotedArtifactId"].(string); p != "" {
				t.Fatalf("artifact promoted without addPdfDetectedCharactersAsText: %v", d)
			}
			c := s.Do(http.MethodGet, "/documents/"+id+"/content?artifactId="+art+"&siteId="+tc.site, nil, tok)
			u, _ := c.JSON(t)["contentUrl"].(string)
			resp, err := http.Get(u)
			if err != nil {
				t.Fatal(err)
			}
			var pdf bytes.Buffer
			pdf.ReadFrom(resp.Body)
			resp.Body.Close()
			if !bytes.HasPrefix(pdf.Bytes(), []byte("%PDF")) || !bytes.Contains(pdf.Bytes(), []byte("pdfaid:part")) || !bytes.Contains(pdf.Bytes(), []byte("/OutputIntents")) {
				t.Fatalf("artifact is not a PDF/A with its output intent (%d bytes)", pdf.Len())
			}
			if tc.name == "rotated scan in a PDF" {
				// The sideways page stands upright in the searchable PDF:
				// as wide as the letter (wider than tall), not as its scan.
				if w, h := shownPageSize(t, pdf.Bytes()); w <= h {
					t.Fatalf("the searchable PDF shows the letter sideways: %v x %v", w, h)
				}
			}
		})
	}
}

// shownPageSize is the size of the first page of a PDF as a viewer shows
// it (pdfinfo: the page box, turned by its /Rotate).
func shownPageSize(t *testing.T, pdf []byte) (float64, float64) {
	t.Helper()
	fn := filepath.Join(t.TempDir(), "a.pdf")
	if err := os.WriteFile(fn, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("pdfinfo", "-f", "1", "-l", "1", fn).Output()
	if err != nil {
		t.Fatalf("pdfinfo: %v", err)
	}
	var w, h float64
	rot := 0
	for _, l := range strings.Split(string(out), "\n") {
		if _, rest, ok := strings.Cut(l, " size:"); ok && strings.HasPrefix(l, "Page ") {
			fmt.Sscanf(strings.TrimSpace(rest), "%g x %g", &w, &h)
		}
		if _, rest, ok := strings.Cut(l, " rot:"); ok && strings.HasPrefix(l, "Page ") {
			rot, _ = strconv.Atoi(strings.TrimSpace(rest))
		}
	}
	if w == 0 || h == 0 {
		t.Fatalf("pdfinfo gave no page size: %s", out)
	}
	if rot%180 != 0 {
		w, h = h, w
	}
	return w, h
}

// waitArtifact waits until the document's artifacts list art and returns
// the list.
func waitArtifact(t *testing.T, s *quiretest.Server, tok, site, id, art string) []byte {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ar := s.Do(http.MethodGet, "/documents/"+id+"/artifacts?siteId="+site, nil, tok)
		if strings.Contains(string(ar.Body), art) {
			return ar.Body
		}
		if time.Now().After(deadline) {
			t.Fatalf("OCR artifact %q not kept within 2m: %s", art, ar.Body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func jpegBytes(t *testing.T, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestOCR_FailureAndRetry: a language the server lacks fails the action
// with a message naming the package to install, visible on the document's
// action; once the site's languages are fixed, POST .../actions/retry runs
// it again and the chain (FULLTEXT) goes on.
func TestOCR_FailureAndRetry(t *testing.T) {
	s := ocrServer(t)
	tok := s.Admin()
	setProcessing(t, s, "default", &storage.ProcessingConfig{Languages: []string{"eng", "xyz"}})
	id := addScan(t, s, tok, "default", "scan.png", "image/png", quiretest.PNG(quiretest.TextImage("Zebracorn retry")), nil)
	a := ocrAction(t, s, tok, "default", id)
	if a["status"] != "FAILED" || !strings.Contains(a["message"].(string), "tesseract has no language data for 'xyz'") ||
		!strings.Contains(a["message"].(string), "tesseract-ocr-xyz") {
		t.Fatalf("OCR with a missing language: %v", a)
	}
	setProcessing(t, s, "default", &storage.ProcessingConfig{Languages: []string{"eng"}})
	if r := s.Do(http.MethodPost, "/documents/"+id+"/actions/retry", nil, tok); r.Status != http.StatusOK {
		t.Fatalf("retry: %d %s", r.Status, r.Body)
	}
	waitComplete2(t, s, tok, id)
	if d, _ := s.Do(http.MethodGet, "/documents/"+id+"/ocr", nil, tok).JSON(t)["data"].(string); !strings.Contains(d, "Zebracorn") {
		t.Fatalf("OCR after retry: %q", d)
	}
}

// waitComplete2 waits until every action of the document has finished and
// the last two (the retried OCR and FULLTEXT) are COMPLETE.
func waitComplete2(t *testing.T, s *quiretest.Server, tok, id string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		r := s.Do(http.MethodGet, "/documents/"+id+"/actions", nil, tok)
		acts := quiretest.List(t, r.JSON(t), "actions")
		if n := len(acts); n >= 2 && quiretest.Obj(t, acts[n-1])["status"] == "COMPLETE" && quiretest.Obj(t, acts[n-2])["status"] == "COMPLETE" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("retried actions not complete within 3m: %s", r.Body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestOCR_PageTimeLimit: a page not recognized within the per-page limit
// is left without text and named in the action's message; the action
// still completes with what was read.
func TestOCR_PageTimeLimit(t *testing.T) {
	s := ocrServer(t, func(c *quiretest.Config) { c.Pipeline.OCRPageTimeout = time.Millisecond })
	tok := s.Admin()
	id := addScan(t, s, tok, "default", "slow.pdf", "application/pdf", quiretest.ImagePDF(quiretest.TextImage("Zebracorn")), nil)
	a := ocrAction(t, s, tok, "default", id)
	msg, _ := a["message"].(string)
	if a["status"] != "COMPLETE" || !strings.Contains(msg, "page 1 not recognized within the per-page limit of 1ms") {
		t.Fatalf("OCR past the page limit: %v", a)
	}
	if md, _ := a["metadata"].(map[string]any); md["pagesTimedOut"] != "1" {
		t.Fatalf("metadata %v", a["metadata"])
	}
}

// TestOCR_Layout: ocrOutputType CSV keeps the recognized lines as a CSV
// artifact (page, line, position, confidence, text); ocrParseTypes TABLES
// finds the table of the scan (headers and rows, FormKiQ's OcrTable) and
// FORMS its "Key: value" pairs (OcrKeyValues), as the action's results.
func TestOCR_Layout(t *testing.T) {
	quiretest.NeedProgram(t, "pdftoppm", "poppler-utils")
	s := ocrServer(t)
	tok := s.Admin()
	sp := strings.Repeat(" ", 14)
	img := quiretest.TextImage("Invoice: 4711", "Customer: Globex", "", "Item"+sp+"Qty"+sp+"Price", "Apples"+sp+"12"+sp+"30", "Pears"+sp+"5"+sp+"20")
	id := addScan(t, s, tok, "default", "table.png", "image/png", quiretest.PNG(img),
		map[string]any{"ocrOutputType": "CSV", "ocrParseTypes": "TEXT,TABLES,FORMS"})
	a := ocrAction(t, s, tok, "default", id)
	md, _ := a["metadata"].(map[string]any)
	if a["status"] != "COMPLETE" || md["tables"] != "1" || md["csvArtifactId"] == nil {
		t.Fatalf("OCR %v", a)
	}
	c := s.Do(http.MethodGet, "/documents/"+id+"/content?artifactId="+md["csvArtifactId"].(string), nil, tok).JSON(t)
	csv, _ := c["content"].(string) // text is answered inline
	if c["contentType"] != "text/csv" {
		t.Fatalf("CSV artifact %v", c)
	}
	if !strings.HasPrefix(csv, "page,line,left,top,width,height,confidence,text\n1,1,") || !strings.Contains(csv, "Globex") {
		t.Fatalf("CSV:\n%s", csv)
	}
	res, err := s.Node.DB.Results("default", id, "ocr")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range res {
		got[r.Name] = string(r.Value)
	}
	if want := `[{"headers":["Item","Qty","Price"],"data":[[{"value":"Item"},{"value":"Qty"},{"value":"Price"}],[{"value":"Apples"},{"value":"12"},{"value":"30"}],[{"value":"Pears"},{"value":"5"},{"value":"20"}]]}]`; got["tables"] != want {
		t.Errorf("tables %s\nwant   %s", got["tables"], want)
	}
	if !strings.Contains(got["keyValues"], `{"key":"Invoice","values":["4711"]}`) || !strings.Contains(got["keyValues"], `{"key":"Customer","values":["Globex"]}`) {
		t.Errorf("keyValues %s", got["keyValues"])
	}
	// GET /documents/{id}/ocr answers them: outputType TABLES the tables,
	// KEY_VALUE the pairs found in the layout. Once the text is another
	// one's (set by hand here; new content's OCR alike), the results of
	// the earlier OCR are not its: no tables, and the pairs of its lines.
	ocrOut := func(outputType string) map[string]any {
		t.Helper()
		r := s.Do(http.MethodGet, "/documents/"+id+"/ocr?outputType="+outputType, nil, tok)
		if r.Status != http.StatusOK {
			t.Fatalf("GET ocr %s: %d %s", outputType, r.Status, r.Body)
		}
		return r.JSON(t)
	}
	for _, tc := range []struct {
		outputType, field, want string
	}{
		{"TABLES", "tables", got["tables"]},
		{"tables", "tables", got["tables"]},
		{"KEY_VALUE", "keyValues", got["keyValues"]},
	} {
		m := ocrOut(tc.outputType)
		var want any // the stored JSON, its keys in the order a map has them
		if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
			t.Fatalf("stored %s: %v", tc.field, err)
		}
		b, _ := json.Marshal(m[tc.field])
		if w, _ := json.Marshal(want); string(b) != string(w) {
			t.Errorf("GET ocr %s: %s %s, want %s", tc.outputType, tc.field, b, tc.want)
		}
		if _, ok := m["data"]; ok {
			t.Errorf("GET ocr %s answers data too: %v", tc.outputType, m)
		}
	}
	if r := s.Do(http.MethodPut, "/documents/"+id+"/ocr", map[string]any{"content": "Total: 99", "contentType": "text/plain"}, tok); r.Status != http.StatusOK {
		t.Fatalf("PUT ocr: %d %s", r.Status, r.Body)
	}
	if b, _ := json.Marshal(ocrOut("TABLES")["tables"]); string(b) != "[]" {
		t.Errorf("tables of an earlier OCR answered for the text set by hand: %s", b)
	}
	if b, _ := json.Marshal(ocrOut("KEY_VALUE")["keyValues"]); string(b) != `[{"key":"Total","values":["99"]}]` {
		t.Errorf("keyValues of the text set by hand: %s", b)
	}
}

// TestOCR_TextBeforePDF: the OCR text is recorded, FULLTEXT runs after it
// and search finds the scan by a word on it while its searchable PDF/A is
// still to be made (the pipeline's background work held); the PDF/A then
// follows as the artifact the action named.
func TestOCR_TextBeforePDF(t *testing.T) {
	s := ocrServer(t)
	tok := s.Admin()
	release := pipeline.HoldBackground(s.Node.Pipeline)
	released := false
	defer func() {
		if !released {
			release()
		}
	}()
	id := addScan(t, s, tok, "default", "held.pdf", "application/pdf", quiretest.ImagePDF(quiretest.TextImage("Zebracorn held letter")), nil)
	waitComplete(t, s, tok, id)
	a := ocrAction(t, s, tok, "default", id)
	md, _ := a["metadata"].(map[string]any)
	art, _ := md["artifactId"].(string)
	if art == "" {
		t.Fatalf("OCR names no searchable PDF: %v", a)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		sr := s.Do(http.MethodPost, "/search", map[string]any{"query": map[string]any{"text": "Zebracorn"}}, tok)
		if strings.Contains(string(sr.Body), id) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the OCR text does not find the scan: %s", sr.Body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if ar := s.Do(http.MethodGet, "/documents/"+id+"/artifacts", nil, tok); strings.Contains(string(ar.Body), art) {
		t.Fatalf("the PDF/A was made before the text was searchable: %s", ar.Body)
	}
	release()
	released = true
	waitArtifact(t, s, tok, "default", id, art)
}

// TestOCR_Languages: an OCR action's ocrLanguages (Quire extension) read
// one letter in another language than the site's (here a German letter
// on a site reading English): the action's metadata names them and the
// text keeps its ß and umlauts. A language tesseract lacks, osd, a code
// twice or a value that names none is refused with FormKiQ's validation
// shape, on POST /documents/{id}/actions, POST /documents and POST
// /documents/{id}/ocr alike, and adds no action.
func TestOCR_Languages(t *testing.T) {
	s := ocrServer(t)
	tok := s.Admin()
	letter := quiretest.TextImage("Sehr geehrter Herr Becker,", "die Rechnung für die Straße", "Zebracorn 4711")
	id := addScan(t, s, tok, "default", "brief.png", "image/png", quiretest.PNG(letter), map[string]any{"ocrLanguages": "deu"})
	a := ocrAction(t, s, tok, "default", id)
	if md, _ := a["metadata"].(map[string]any); a["status"] != "COMPLETE" || md["languages"] != "deu" {
		t.Fatalf("OCR with ocrLanguages deu: %v", a)
	}
	text, _ := s.Do(http.MethodGet, "/documents/"+id+"/ocr", nil, tok).JSON(t)["data"].(string)
	for _, w := range []string{"Straße", "für", "Zebracorn"} {
		if !strings.Contains(text, w) {
			t.Fatalf("OCR text in deu lacks %q: %q", w, text)
		}
	}
	// FULLTEXT keeps no second copy of the OCR text: its record names it
	// (storage/textref.go), and GET .../fulltext reads it.
	waitComplete(t, s, tok, id)
	if tr, err := s.Node.DB.StoredText("default", id, storage.TextFulltext); err != nil || tr == nil || tr.Text != "" || tr.From != storage.TextOCR {
		t.Fatalf("stored FULLTEXT record of a scan: %+v %v, want a reference to the OCR text", tr, err)
	}
	if c, _ := s.Do(http.MethodGet, "/documents/"+id+"/fulltext", nil, tok).JSON(t)["content"].(string); c != strings.TrimRight(text, "\f") && c != text {
		t.Fatalf("GET /fulltext %q, want the OCR text %q", c, text)
	}
	before := len(quiretest.List(t, s.Do(http.MethodGet, "/documents/"+id+"/actions", nil, tok).JSON(t), "actions"))
	bad := func(v any) map[string]any {
		return map[string]any{"actions": []map[string]any{{"type": "OCR", "parameters": map[string]any{"ocrLanguages": v}}}}
	}
	const key = `{"errors":[{"key":"parameters.ocrLanguages","error":`
	tests := []struct {
		name, method, path string
		body               any
		want               int
		resp               string
	}{
		{"two languages", "POST", "/documents/" + id + "/actions", bad("deu+eng"), http.StatusOK, `{"message":"Actions saved"}`},
		{"a list", "POST", "/documents/" + id + "/ocr", map[string]any{"ocrLanguages": []string{"fra", "eng"}}, http.StatusOK, `{"message":"OCR request submitted"}`},
		{"not installed", "POST", "/documents/" + id + "/actions", bad("xyz"), http.StatusBadRequest,
			key + `"language 'xyz' is not installed: install the Debian package tesseract-ocr-xyz"}]}`},
		{"not installed on create", "POST", "/documents", map[string]any{"content": "x", "actions": bad("deu+qaa")["actions"]}, http.StatusBadRequest,
			key + `"language 'qaa' is not installed: install the Debian package tesseract-ocr-qaa"}]}`},
		{"not installed on /ocr", "POST", "/documents/" + id + "/ocr", map[string]any{"ocrLanguages": "xyz"}, http.StatusBadRequest,
			key + `"language 'xyz' is not installed: install the Debian package tesseract-ocr-xyz"}]}`},
		{"osd", "POST", "/documents/" + id + "/actions", bad("osd"), http.StatusBadRequest,
			key + `"invalid language 'osd': a tesseract language code such as eng, deu or fra"}]}`},
		{"twice", "POST", "/documents/" + id + "/actions", bad("deu,deu"), http.StatusBadRequest, key + `"language 'deu' is listed twice"}]}`},
		{"empty", "POST", "/documents/" + id + "/actions", bad(""), http.StatusBadRequest,
			key + `"invalid 'ocrLanguages' parameter: tesseract language codes such as 'deu' or 'deu+eng'"}]}`},
		{"a number", "POST", "/documents/" + id + "/actions", bad(7), http.StatusBadRequest,
			key + `"invalid 'ocrLanguages' parameter: tesseract language codes such as 'deu' or 'deu+eng'"}]}`},
		{"too many", "POST", "/documents/" + id + "/actions", bad("eng+deu+fra+ita+spa+nld"), http.StatusBadRequest, key + `"at most 5 languages"}]}`},
	}
	added := 0
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := s.Do(tc.method, tc.path, tc.body, tok)
			if r.Status != tc.want || string(r.Body) != tc.resp {
				t.Fatalf("%d %s, want %d %s", r.Status, r.Body, tc.want, tc.resp)
			}
		})
		if tc.want == http.StatusOK {
			added++
		}
	}
	acts := quiretest.List(t, s.Do(http.MethodGet, "/documents/"+id+"/actions", nil, tok).JSON(t), "actions")
	if len(acts) != before+added {
		t.Fatalf("%d actions after %d accepted requests (had %d): %v", len(acts), added, before, acts)
	}
	if p := quiretest.Obj(t, quiretest.Obj(t, acts[len(acts)-1])["parameters"]); fmt.Sprint(p["ocrLanguages"]) != "[fra eng]" {
		t.Fatalf("POST /ocr's ocrLanguages stored as %v", p)
	}
}
