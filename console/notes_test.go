package console_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"quire/quiretest"
)

// TestConsole_DocumentNotes: a writer adds a note on a document's page
// (typed, then the button) and it shows with who wrote it, at once and
// through the API; a German reader sees it in German without the form or
// a delete; the writer's delete asks first and removes it.
func TestConsole_DocumentNotes(t *testing.T) {
	t.Parallel()
	src := axeFile()
	e := newEnv(t)
	e.user(t, "nora", "default", "temporary-1", true)
	e.user(t, "rudi", "default_read", "temporary-1", true)
	id := quiretest.Str(t, e.must(t, "POST", "/documents?siteId=default", map[string]any{"path": "letters/offer.txt", "content": "the offer", "contentType": "text/plain"}, http.StatusCreated), "documentId")
	notes := func(want int, text string) chromedp.Action {
		return check(func() error {
			out := e.must(t, "GET", "/documents/"+id+"/notes?siteId=default", nil, http.StatusOK)
			list, _ := out["notes"].([]any)
			if len(list) != want || text != "" && !strings.Contains(fmt.Sprint(list), text) {
				return fmt.Errorf("notes %v, want %d with %q", list, want, text)
			}
			return nil
		})
	}

	b := newBrowser(t, "en-US")
	steps := append([]step{{"open the console", navigate(e.s.URL + "/console/")}}, signIn("nora", password)...)
	steps = append(steps,
		step{"the document has no notes", chromedp.Tasks{navigate(e.s.URL + "/console/#/doc/" + id), textOf("#notes", "No notes yet."), axeAll(src, "notes: none")}},
		step{"an empty note is not sent", chromedp.Tasks{click("#note-add"), notes(0, "")}},
		step{"type a note and add it", chromedp.Tasks{sendKeys("#note-text", "Call Anna before Friday"), click("#note-add"),
			textOf("#status", "Note added."), textOf("#notes ul.notes", "Call Anna before Friday"), textOf("#notes ul.notes", "nora"),
			wait(`document.querySelector("#note-text").value === ""`), notes(1, "Call Anna before Friday")}},
		step{"the page with a note", chromedp.Tasks{axeAll(src, "notes: one"), shot("document-notes"), phoneShot(src, "document-notes")}},
	)
	b.run(steps...)

	r := newBrowser(t, "de-DE", `Object.defineProperty(navigator, "languages", {get: () => ["de-DE", "de"]});`)
	steps = append([]step{{"open the console", navigate(e.s.URL + "/console/")}}, signIn("rudi", password)...)
	steps = append(steps,
		step{"a reader sees the note in German", chromedp.Tasks{navigate(e.s.URL + "/console/#/doc/" + id), textOf("#notes h2", "Notizen"),
			textOf("#notes ul.notes", "Call Anna before Friday")}},
		step{"without a form or a delete", chromedp.Tasks{absent("#note-form"), absent("#notes button.note-delete"), axeAll(src, "notes: reader, German")}},
	)
	r.run(steps...)

	b.run(
		step{"a delete asks first; no keeps it", chromedp.Tasks{js(`window.confirm = (q) => { window.__asked = q; return false; }`, nil),
			click("#notes button.note-delete"), wait(`(window.__asked || "").includes("Delete this note?")`), notes(1, "")}},
		step{"yes deletes it", chromedp.Tasks{js(`window.confirm = () => true`, nil), click("#notes button.note-delete"),
			textOf("#status", "Note deleted."), textOf("#notes", "No notes yet."), notes(0, "")}},
	)
}
