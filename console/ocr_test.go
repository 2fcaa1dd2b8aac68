package console_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"image"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"quire/quiretest"
	"quire/storage"
)

// ocrEnv is a console server whose OCR is ready to run (ocrEngines).
func ocrEnv(t *testing.T) *env {
	t.Helper()
	ocrEngines(t)
	// Scans dropped in the console get the production default processing.
	return newEnv(t, quiretest.DefaultProcessing, func(c *quiretest.Config) { c.Pipeline.RetryBase = 50 * time.Millisecond })
}

// ocrEngines are the programs OCR runs, installed: skipped without them
// outside CI, failed under CI.
func ocrEngines(t *testing.T) {
	t.Helper()
	for _, p := range [][2]string{{"tesseract", "tesseract-ocr"}, {"pdftotext", "poppler-utils"}, {"pdfinfo", "poppler-utils"}, {"pdfimages", "poppler-utils"},
		{"pdftoppm", "poppler-utils"}, {"qpdf", "qpdf"}, {"gs", "ghostscript"}, {"img2pdf", "img2pdf"}} {
		quiretest.NeedProgram(t, p[0], p[1])
	}
}

// siteLanguages sets the site's OCR languages (processing.languages)
// through PATCH /sites/{siteId}/configuration, as an administrator does.
func siteLanguages(t *testing.T, e *env, site string, langs ...string) {
	t.Helper()
	e.must(t, http.MethodPatch, "/sites/"+site+"/configuration", map[string]any{"processing": map[string]any{"languages": langs}}, http.StatusOK)
}

// languageRemovedLater stores processing.languages as PATCH did when all
// of them were installed; one of them is not on this machine.
func languageRemovedLater(t *testing.T, e *env, site string, langs ...string) {
	t.Helper()
	if r := e.s.Do(http.MethodPatch, "/sites/"+site+"/configuration", map[string]any{"processing": map[string]any{"languages": langs}}, e.admin); r.Status != http.StatusBadRequest {
		t.Fatalf("PATCH with a language tesseract lacks: %d %s, want 400", r.Status, r.Body)
	}
	c, err := e.s.Node.DB.SiteConfig(site)
	if err != nil {
		t.Fatal(err)
	}
	c.Processing = &storage.ProcessingConfig{Languages: langs}
	if _, err := e.s.Node.DB.Apply(context.Background(), storage.MustCommand(storage.OpSetSiteConfig, site, "admin", time.Now(), *c)); err != nil {
		t.Fatal(err)
	}
}

// upsideDown turns an image by 180 degrees, as a sheet fed the wrong way.
func upsideDown(src image.Image) image.Image {
	b := src.Bounds()
	dst := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			dst.Set(b.Dx()-1-x, b.Dy()-1-y, src.At(b.Min.X+x, b.Min.Y+y))
		}
	}
	return dst
}

// turned90 turns an image by 90 degrees clockwise, as a letter laid
// sideways on the scanner's glass.
func turned90(src image.Image) image.Image {
	b := src.Bounds()
	dst := image.NewRGBA(image.Rect(0, 0, b.Dy(), b.Dx()))
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			dst.Set(b.Dy()-1-y, x, src.At(b.Min.X+x, b.Min.Y+y))
		}
	}
	return dst
}

// scanPDF is a PDF of image-only pages (what a scanner makes), joined
// with qpdf.
func scanPDF(t *testing.T, pages ...image.Image) []byte {
	t.Helper()
	dir := t.TempDir()
	args := []string{"--empty", "--pages"}
	for i, p := range pages {
		fn := filepath.Join(dir, string(rune('a'+i))+".pdf")
		if err := os.WriteFile(fn, quiretest.ImagePDF(p), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, fn)
	}
	out := filepath.Join(dir, "scan.pdf")
	if b, err := exec.Command("qpdf", append(args, "--", out)...).CombinedOutput(); err != nil {
		t.Fatalf("qpdf: %v %s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// addDoc adds a document with the given actions and returns its id.
func (e *env) addDoc(t *testing.T, path, ctype string, content []byte, actions []map[string]any) string {
	t.Helper()
	out := e.must(t, "POST", "/documents?siteId=default", map[string]any{"path": path, "contentType": ctype, "isBase64": true,
		"content": base64.StdEncoding.EncodeToString(content), "actions": actions}, http.StatusCreated)
	return quiretest.Str(t, out, "documentId")
}

// ocrFinished waits (up to 3 minutes: OCR on a loaded machine is slow)
// until the document has at least n OCR actions and the newest has
// finished, and with pdf until the searchable PDF it names is among the
// artifacts; the browser then has its 20 s to show it.
func (e *env) ocrFinished(t *testing.T, id string, n int, pdf bool) chromedp.Action {
	return check(func() error {
		deadline := time.Now().Add(3 * time.Minute)
		for {
			r := e.s.Do("GET", "/documents/"+id+"/actions?siteId=default", nil, e.admin)
			var last map[string]any
			count := 0
			for _, a := range quiretest.List(t, r.JSON(t), "actions") {
				if m := quiretest.Obj(t, a); m["type"] == "OCR" {
					last, count = m, count+1
				}
			}
			done := false
			if last != nil && count >= n {
				switch last["status"] {
				case "COMPLETE", "FAILED", "SKIPPED", "MAX_RETRIES_REACHED":
					done = true
				}
			}
			if done && pdf {
				md, _ := last["metadata"].(map[string]any)
				art, _ := md["artifactId"].(string)
				arts := e.s.Do("GET", "/documents/"+id+"/artifacts?siteId=default", nil, e.admin)
				done = art != "" && strings.Contains(string(arts.Body), art)
			}
			if done {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("OCR of %s not finished within 3 minutes: %s", id, r.Body)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
}

// approve lets document id go from the work queue (as a reviewer does).
func (e *env) approve(t *testing.T, queue, id string) chromedp.Action {
	return check(func() error {
		r := e.s.Do("POST", "/queues/"+queue+"/documents/"+id+"/decisions?siteId=default", map[string]any{"decision": "APPROVE"}, e.admin)
		if r.Status != http.StatusOK {
			t.Errorf("approve: %d %s", r.Status, r.Body)
		}
		return r.Err
	})
}

// ocrState waits until the panel shows the OCR action in state.
func ocrState(state string) chromedp.Action {
	return wait(`document.querySelector('#ocr[data-state="` + state + `"]')`)
}

// TestOCRPanel_ScanPendingToDone: a two-page scan (image-only PDF, the
// second page upside down) uploaded with OCR waits behind a work queue:
// the panel says so; once the queue lets it go, the panel shows by
// itself that the text is recognized on 2 pages, that page 2 was turned,
// the text page by page with a word printed on the scan, and the
// searchable PDF to download once it is made; it fits a phone and reads
// in dark mode (axe-core). A photo without OCR gets "Recognize text",
// which runs OCR and shows its word.
func TestOCRPanel_ScanPendingToDone(t *testing.T) {
	t.Parallel()
	src := axeFile()
	e := ocrEnv(t)
	e.user(t, "sam", "default", "temporary-1", true)
	queue := quiretest.Str(t, e.must(t, "POST", "/queues?siteId=default", map[string]any{"name": "scans"}, http.StatusCreated), "queueId")
	scan := scanPDF(t, quiretest.TextImage("Dear Mr Becker,", "your Zebracorn invoice 4711"), upsideDown(quiretest.TextImage("Second page", "Quarterly umbrella report")))
	id := e.addDoc(t, "post/letter.pdf", "application/pdf", scan, []map[string]any{
		{"type": "QUEUE", "queueId": queue}, {"type": "OCR"}, {"type": "FULLTEXT"}})
	photo := e.addDoc(t, "post/photo.png", "image/png", quiretest.PNG(quiretest.TextImage("Walrus delivery note")), []map[string]any{})
	note := e.addDoc(t, "post/note.txt", "text/plain", []byte("a typed note"), []map[string]any{{"type": "OCR"}})

	toOCR := js(`document.querySelector("#ocr").scrollIntoView(), true`, nil)
	b := newBrowser(t, "en-US")
	steps := append([]step{{"open the console", navigate(e.s.URL + "/console/")}}, signIn("sam", password)...)
	steps = append(steps,
		step{"the scan waits to be read", chromedp.Tasks{navigate(e.s.URL + "/console/#/doc/" + id), ocrState("PENDING"),
			textOf("#ocr-state", "Waiting to recognize the text"), absent("#ocr-text"), absent("#ocr-again")}},
		step{"the queue lets it go", e.approve(t, queue, id)},
		step{"the OCR finishes (asked of the API)", e.ocrFinished(t, id, 1, false)},
		step{"the panel shows the text by itself", chromedp.Tasks{ocrState("COMPLETE"), textOf("#ocr-state", "Text recognized on 2 pages."),
			textOf("#ocr-facts", "Page 2 was turned by 180° before it could be read."), textOf("#ocr-facts", "Read in English, German"),
			textOf("#ocr-facts", "Search finds this document by these words."),
			textOf("#ocr-text summary", "Recognized text (2 pages)"), wait(`!document.querySelector("#ocr-text").open`)}},
		step{"the text page by page", chromedp.Tasks{click("#ocr-text summary"),
			textOf(`#ocr-pages .ocr-page[data-page="1"] h3`, "Page 1"), textOf(`#ocr-pages .ocr-page[data-page="1"] pre`, "Zebracorn"),
			textOf(`#ocr-pages .ocr-page[data-page="2"] h3`, "Page 2"), textOf(`#ocr-pages .ocr-page[data-page="2"] pre`, "umbrella")}},
		step{"the searchable PDF is made (asked of the API)", e.ocrFinished(t, id, 1, true)},
		step{"the searchable PDF once it is made", chromedp.Tasks{visible("#ocr-pdf-download"),
			textOf("#ocr-pdf-download", "Download the searchable PDF"), wait(`document.querySelector("#ocr-text").open`),
			axeAll(src, "document with recognized text"), toOCR, shot("document-ocr")}},
		step{"on a phone", chromedp.Tasks{viewport(390, 844), noSideways("document with recognized text"), axeAll(src, "phone document with recognized text"),
			toOCR, shot("phone-document-ocr")}},
		step{"in dark mode", chromedp.Tasks{colorScheme("dark"), wait(`getComputedStyle(document.body).backgroundColor === "rgb(13, 17, 23)"`),
			axeAll(src, "dark document with recognized text"), toOCR, shot("dark-phone-document-ocr"), colorScheme("light"), viewport(1280, 900)}},
		step{"a photo never read offers to read it", chromedp.Tasks{navigate(e.s.URL + "/console/#/doc/" + photo), ocrState("NONE"),
			textOf("#ocr-state", "has not been recognized yet"), textOf("#ocr-run", "Recognize text")}},
		step{"recognize its text", chromedp.Tasks{click("#ocr-run"), textOf("#status", "The text is being recognized")}},
		step{"its OCR finishes (asked of the API)", e.ocrFinished(t, photo, 1, false)},
		step{"its text on the page", chromedp.Tasks{ocrState("COMPLETE"), textOf("#ocr-state", "Text recognized on 1 page."), click("#ocr-text summary"), textOf("#ocr-pages", "Walrus")}},
		step{"recognize it again", chromedp.Tasks{click("#ocr-again"), textOf("#status", "The text is being recognized"),
			wait(`document.querySelectorAll('#actions tr[data-status]').length === 4`)}},
		step{"the second OCR finishes (asked of the API)", e.ocrFinished(t, photo, 2, false)},
		step{"done again", chromedp.Tasks{ocrState("COMPLETE"), textOf("#ocr-state", "Text recognized on 1 page.")}},
		step{"a typed note has no text recognition", chromedp.Tasks{navigate(e.s.URL + "/console/#/doc/" + note), visible("#preview"),
			textOf("#actions", "skipped"), absent("#ocr")}},
	)
	b.run(steps...)
	// FULLTEXT ran after the OCR the console asked for: the photo is
	// found by its word.
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := e.s.Do("POST", "/searchFulltext?siteId=default", map[string]any{"query": map[string]any{"text": "walrus"}}, e.admin)
		if r.Status == http.StatusOK && len(quiretest.List(t, r.JSON(t), "documents")) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the photo is not found by its word after the console's OCR: %d %s", r.Status, r.Body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestOCRPanel_FailureAndRetry: an OCR that fails (the site reads scans
// in a language tesseract lacks) says so in plain German words on the
// document, the engine's text behind "Details"; once the languages are
// fixed, "Text erneut erkennen" runs it again and the panel shows the
// word of the scan.
func TestOCRPanel_FailureAndRetry(t *testing.T) {
	t.Parallel()
	src := axeFile()
	e := ocrEnv(t)
	e.user(t, "sam", "default", "temporary-1", true)
	// A language the machine no longer has (its package removed after the
	// site chose it): PATCH refuses one that is missing, so the test
	// writes the setting as an earlier, valid PATCH would have left it.
	languageRemovedLater(t, e, "default", "eng", "xyz")
	id := e.addDoc(t, "post/scan.pdf", "application/pdf", scanPDF(t, quiretest.TextImage("Zebracorn retry")), []map[string]any{{"type": "OCR"}, {"type": "FULLTEXT"}})

	e.user(t, "rita", "default_read", "temporary-1", true)
	unread := e.addDoc(t, "post/unread.pdf", "application/pdf", scanPDF(t, quiretest.TextImage("Unread")), []map[string]any{})
	b := newBrowser(t, "de-DE", `Object.defineProperty(navigator, "languages", {get: () => ["de-DE", "de"]});`)
	steps := append([]step{{"open the console", navigate(e.s.URL + "/console/")}}, signIn("sam", password)...)
	steps = append(steps,
		step{"the OCR fails (asked of the API)", e.ocrFinished(t, id, 1, false)},
		step{"the failure in plain words", chromedp.Tasks{navigate(e.s.URL + "/console/#/doc/" + id), ocrState("FAILED"),
			textOf("#ocr-state", "Der Text konnte nicht erkannt werden."), textOf("#ocr-reason", "das auf dem Server nicht installiert ist"),
			wait(`!document.querySelector("#ocr-reason").textContent.includes("tesseract")`),
			textOf("#ocr .ocr-details summary", "Details"), absent("#ocr-text"), axeAll(src, "document with failed OCR")}},
		step{"the engine's text behind Details", chromedp.Tasks{click("#ocr .ocr-details summary"), textOf("#ocr .ocr-details", "tesseract-ocr-xyz")}},
		step{"the languages fixed", check(func() error { siteLanguages(t, e, "default", "eng"); return nil })},
		step{"recognize again", chromedp.Tasks{textOf("#ocr-again", "Text erneut erkennen"), click("#ocr-again"), textOf("#status", "Der Text wird erkannt.")}},
		step{"the retried OCR finishes (asked of the API)", e.ocrFinished(t, id, 2, false)},
		step{"the word of the scan", chromedp.Tasks{ocrState("COMPLETE"), textOf("#ocr-state", "Text auf 1 Seite erkannt."),
			click("#ocr-text summary"), textOf("#ocr-pages", "Zebracorn")}},
		step{"sign out", chromedp.Tasks{click("#signout"), visible("#login")}},
	)
	steps = append(steps, signIn("rita", password)...)
	steps = append(steps,
		step{"a reader sees the text, not the buttons", chromedp.Tasks{navigate(e.s.URL + "/console/#/doc/" + id), ocrState("COMPLETE"),
			click("#ocr-text summary"), textOf("#ocr-pages", "Zebracorn"), textOf("#ocr-facts", "Die Suche findet dieses Dokument über diese Wörter."), absent("#ocr-again")}},
		step{"a reader cannot ask for text recognition", chromedp.Tasks{navigate(e.s.URL + "/console/#/doc/" + unread), ocrState("NONE"),
			textOf("#ocr-state", "noch nicht erkannt"), absent("#ocr-run")}},
	)
	b.run(steps...)
}

// TestOCRPanel_ActionsTableFollows: while the OCR panel follows a scan
// held in a queue, the document page's Actions table follows the same
// polls: once the queue lets the scan go, the table shows the OCR and
// FULLTEXT rows complete by itself, without the page being drawn again
// (the title element is the one the page opened with), and the polls that
// find nothing new are 304s (If-None-Match).
func TestOCRPanel_ActionsTableFollows(t *testing.T) {
	t.Parallel()
	e := ocrEnv(t)
	e.user(t, "sam", "default", "temporary-1", true)
	queue := quiretest.Str(t, e.must(t, "POST", "/queues?siteId=default", map[string]any{"name": "scans"}, http.StatusCreated), "queueId")
	id := e.addDoc(t, "post/table.png", "image/png", quiretest.PNG(quiretest.TextImage("Zebracorn table letter")), []map[string]any{
		{"type": "QUEUE", "queueId": queue}, {"type": "OCR"}, {"type": "FULLTEXT"}})
	b := newBrowser(t, "en-US")
	// Counts the 304s of the panel's polls as the page sees them.
	const count304 = `(() => { if (!window.__polls) { window.__polls = { n304: 0 }; const f = window.fetch;
		window.fetch = async (...a) => { const r = await f(...a); if (r.status === 304) window.__polls.n304++; return r; }; } return true; })()`
	steps := append([]step{{"open the console", navigate(e.s.URL + "/console/")}}, signIn("sam", password)...)
	steps = append(steps,
		step{"the scan waits in the queue", chromedp.Tasks{js(count304, nil), navigate(e.s.URL + "/console/#/doc/" + id), ocrState("PENDING"),
			wait(`document.querySelectorAll('#actions tr[data-status]').length === 3`),
			wait(`document.querySelectorAll('#actions tr[data-status="COMPLETE"]').length === 0`),
			js(`document.querySelector("#doc-title").dataset.opened = "yes", true`, nil)}},
		step{"polls that find nothing new are 304s", wait(`window.__polls.n304 >= 2`)},
		step{"the queue lets it go", e.approve(t, queue, id)},
		step{"the OCR finishes (asked of the API)", e.ocrFinished(t, id, 1, false)},
		step{"the Actions table shows it by itself", chromedp.Tasks{
			wait(`[...document.querySelectorAll('#actions tr[data-status]')].map((r) => r.dataset.status).join() === "ASYNC_COMPLETE,COMPLETE,COMPLETE"`),
			textOf("#actions", "complete"),
			wait(`document.querySelector("#doc-title").dataset.opened === "yes"`)}},
	)
	b.run(steps...)
}
