package console_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"quire/quiretest"
)

// TestConsole_Thumbnails: once the server's pipeline has made a PDF's
// first-page thumbnail (issue 47), the folder's grid shows it (the entry's
// thumbnailUrl, a signed download of the THUMBNAIL artifact, loaded under
// the console's CSP), and the table view is unchanged; axe-core finds
// nothing in the grid.
func TestConsole_Thumbnails(t *testing.T) {
	t.Parallel()
	src := axeFile()
	e := newEnv(t)
	e.user(t, "tia", "default", "temporary-1", true)
	e.must(t, "POST", "/documents?siteId=default", map[string]any{"path": "pics/letter.pdf", "contentType": "application/pdf", "isBase64": true,
		"content": base64.StdEncoding.EncodeToString(quiretest.TextPDF("Dear Anna", "the first page"))}, http.StatusCreated)
	e.must(t, "POST", "/documents?siteId=default", map[string]any{"path": "pics/notes.txt", "content": "no picture", "contentType": "text/plain"}, http.StatusCreated)
	// The pipeline makes the thumbnail when the PDF is stored, in the
	// background; a listing only names it once it exists.
	quiretest.Eventually(t, "the PDF's thumbnail", 60*time.Second, func() bool {
		out := e.must(t, "GET", "/folders?siteId=default&path=pics", nil, http.StatusOK)
		docs, _ := out["documents"].([]any)
		for _, d := range docs {
			if m, _ := d.(map[string]any); m["path"] == "pics/letter.pdf" && m["thumbnailUrl"] != nil {
				return true
			}
		}
		return false
	})
	b := newBrowser(t, "en-US")
	steps := []step{{"open the console", navigate(e.s.URL + "/console/")}}
	steps = append(steps, signIn("tia", password)...)
	steps = append(steps,
		step{"the grid shows the PDF's first page", chromedp.Tasks{navigate(e.s.URL + "/console/#/browse/pics"), textOf("#entry-count", "2 items"),
			click(`.views button[data-view="grid"]`), visible("#grid"),
			wait(`(() => { const i = document.querySelector('#grid li[data-name="letter.pdf"] img.thumb-img'); return !!i && i.getAttribute("src").includes("/downloads/") && i.complete && i.naturalWidth > 0 && i.naturalWidth <= 256; })()`),
			wait(`!document.querySelector('#grid li[data-name="notes.txt"] img.thumb-img') && !!document.querySelector('#grid li[data-name="notes.txt"] img.thumb-icon')`),
			axeAll(src, "grid with thumbnails"), shot("folder-grid-thumbnails"), phoneShot(src, "folder-grid-thumbnails")}},
		step{"back to the table", chromedp.Tasks{click(`.views button[data-view="table"]`), visible("#entries"), textOf("#entries", "letter.pdf")}},
		// A PDF whose thumbnail is not made yet (the pipeline stopped, as
		// on a busy server) shows its kind's icon; the grid picks the
		// thumbnail up once it is made, without a reload.
		step{"a new PDF before its thumbnail", chromedp.Tasks{check(func() error {
			if err := e.s.Node.Pipeline.Stop(context.Background()); err != nil {
				return err
			}
			r := e.s.Do("POST", "/documents?siteId=default", map[string]any{"path": "pics/late.pdf", "contentType": "application/pdf", "isBase64": true,
				"content": base64.StdEncoding.EncodeToString(quiretest.TextPDF("A late letter"))}, e.admin)
			if r.Status != http.StatusCreated {
				return fmt.Errorf("add late.pdf: %d %s", r.Status, r.Body)
			}
			return nil
		}), navigate(e.s.URL + "/console/#/browse"), navigate(e.s.URL + "/console/#/browse/pics"), textOf("#entry-count", "3 items"),
			click(`.views button[data-view="grid"]`), visible("#grid"),
			wait(`!!document.querySelector('#grid li[data-name="late.pdf"] img.thumb-icon')`)}},
		step{"its thumbnail shows once made", chromedp.Tasks{check(func() error { return e.s.Node.Pipeline.Start() }),
			wait(`(() => { const i = document.querySelector('#grid li[data-name="late.pdf"] img.thumb-img'); return !!i && i.complete && i.naturalWidth > 0; })()`)}},
	)
	b.run(steps...)
}
