package console_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestConsole_SavedViews: the start page after sign-in is the dashboard
// (views, recently added documents, reviews waiting); a search with a
// folder filter is saved by name and shared with the site, shows beside
// the results and on the start page, and opens as the same search; a
// German reader sees the shared view (not to delete); the owner deletes
// it after a question.
func TestConsole_SavedViews(t *testing.T) {
	t.Parallel()
	src := axeFile()
	e := newEnv(t)
	e.user(t, "vera", "default", "temporary-1", true)
	e.user(t, "rudi", "default_read", "temporary-1", true)
	for _, d := range []struct{ path, content string }{
		{"invoices/2026/march.txt", "invoice for march"},
		{"invoices/2025/dec.txt", "invoice for december"},
		{"letters/hello.txt", "a letter, no invoice word here? invoice"},
	} {
		e.must(t, "POST", "/documents?siteId=default", map[string]any{"path": d.path, "content": d.content, "contentType": "text/plain"}, http.StatusCreated)
	}
	out := e.must(t, "POST", "/documents?siteId=default", map[string]any{"path": "contracts/lease.txt", "content": "lease", "contentType": "text/plain"}, http.StatusCreated)
	doc, _ := out["documentId"].(string)
	e.must(t, "POST", "/documents/"+doc+"/reviews?siteId=default", map[string]any{"review": map[string]any{"reviewCategory": "Legal check", "requiredDecisions": 1}}, http.StatusCreated)
	saved := func(want string) chromedp.Action {
		return check(func() error {
			r := e.s.Do("GET", "/sites/default/savedSearches", nil, e.s.Token("vera", "default"))
			if r.Status != http.StatusOK || !strings.Contains(string(r.Body), want) {
				return fmt.Errorf("saved searches: %d %s, want %s", r.Status, r.Body, want)
			}
			return nil
		})
	}
	results := `[...document.querySelectorAll("#results ol.results li a")].map(a => a.textContent).join(",")`

	b := newBrowser(t, "en-US")
	steps := append([]step{{"open the console", navigate(e.s.URL + "/console/")}}, signIn("vera", password)...)
	steps = append(steps,
		step{"the start page", chromedp.Tasks{textOf("main h1", "Start"), textOf("#home-views", "No saved views yet."),
			textOf("#home-recent", "contracts/lease.txt"), textOf("#home-reviews", "contracts/lease.txt"), axeAll(src, "start page")}},
		step{"search with a folder filter", chromedp.Tasks{click(`header nav a[href="#/search"]`), visible("#q"),
			setValue("#f-folder", "invoices"), sendKeys("#q", "invoice\r"),
			wait(results + ` === "invoices/2025/dec.txt,invoices/2026/march.txt" || ` + results + ` === "invoices/2026/march.txt,invoices/2025/dec.txt"`)}},
		step{"save it, shared", chromedp.Tasks{click("#save-view"), wait(`document.activeElement.id === "view-name"`),
			sendKeys("#view-name", "Invoices"), click("#view-shared"), axeAll(src, "save a view"), click("#view-save"),
			textOf("#status", "Saved as Invoices."), textOf("#saved-views", "Invoices"), textOf("#saved-views", "shared"), absent("#view-form"),
			saved(`"name":"Invoices"`), saved(`"shared":true`), saved(`{"term":{"folder":"invoices"}}`)}},
		step{"the view on the start page", chromedp.Tasks{click("a.brand"), textOf("#home-views", "Invoices"), axeAll(src, "start page with a view"), shot("start-page"), phoneShot(src, "start-page")}},
		step{"opens as the same search", chromedp.Tasks{click(`#home-views a`), wait(`location.hash.startsWith("#/search?")`),
			wait(`document.querySelector("#f-folder").value === "invoices" && document.querySelector("#q").value === "invoice"`),
			wait(results + `.split(",").length === 2 && !` + results + `.includes("letters")`)}},
	)
	b.run(steps...)

	r := newBrowser(t, "de-DE", `Object.defineProperty(navigator, "languages", {get: () => ["de-DE", "de"]});`)
	steps = append([]step{{"open the console", navigate(e.s.URL + "/console/")}}, signIn("rudi", password)...)
	steps = append(steps,
		step{"a reader's start page in German shows the shared view", chromedp.Tasks{textOf("main h1", "Start"), textOf("#home-views h2", "Gespeicherte Ansichten"),
			textOf("#home-views", "Invoices"), textOf("#home-views", "geteilt"), absent("#home-views button.view-delete"), axeAll(src, "start page, German reader")}},
		step{"a reader saves a private view only", chromedp.Tasks{click(`header nav a[href="#/search"]`), click("#save-view"), absent("#view-shared")}},
	)
	r.run(steps...)

	b.run(
		step{"the owner deletes it after a question", chromedp.Tasks{click("a.brand"), textOf("#home-views", "Invoices"),
			js(`window.confirm = (q) => { window.__asked = q; return true; }`, nil), click("#home-views button.view-delete"),
			wait(`(window.__asked || "").includes("Delete the view")`), textOf("#status", "The view Invoices was deleted."), textOf("#home-views", "No saved views yet."),
			saved(`{"savedSearches":[]}`)}},
	)
}
