package console_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"quire/quiretest"
)

// tabTo presses Tab, as a keyboard user does, until the element with id
// has the focus (at most 80 presses).
func tabTo(id string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		for i := 0; i < 80; i++ {
			if err := chromedp.KeyEvent(kb.Tab).Do(ctx); err != nil {
				return err
			}
			var at string
			if err := chromedp.Evaluate(`document.activeElement ? document.activeElement.id : ""`, &at).Do(ctx); err != nil {
				return err
			}
			if at == id {
				return nil
			}
		}
		return fmt.Errorf("80 presses of Tab never reached #%s", id)
	})
}

// configFetches counts the page's requests for GET /system/configuration
// since it loaded.
const configFetches = `performance.getEntriesByType("resource").filter(e => new URL(e.name).pathname === "/system/configuration").length`

// tinyPNGLogo is a 1×1 PNG as a data: URL: a branding logo.
const tinyPNGLogo = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

// logoShown waits until the header's logo is the server's logo file
// (/branding/logo?v=), loaded (the CSP lets it in), not an inline copy.
var logoShown = wait(`(() => { const i = document.getElementById("brand-logo"); return !!i && i.getAttribute("src").startsWith("/branding/logo?v=") && i.complete && i.naturalWidth === 1; })()`)

// TestConsole_WalkBugs: the bugs found on issue 47's walk through the
// console, each as a person meets it. An admin's page load asks for the
// system configuration once; a site the admin creates shows in the
// header's site switch at once; after the admin signs out the sign-in page
// keeps the branding and the next user lands on the documents, not on the
// admin's page; "choose files" and "choose a folder" show where the
// keyboard focus is; the versions table has a header over every column;
// the trash empties in one go with progress; a user disabled while
// signed in is told why on the sign-in page, and again in plain words
// when signing in; German calls a site "Bereich" in the header as in
// Administration.
func TestConsole_WalkBugs(t *testing.T) {
	t.Parallel()
	src := axeFile()
	e := newEnv(t)
	e.adminUser(t, "ada")
	e.user(t, "sam", "default", "temporary-2", true)
	e.must(t, "PATCH", "/system/configuration", map[string]any{"branding": map[string]any{"title": "Acme Records", "primaryColor": "#7a1f3d", "logo": tinyPNGLogo}}, http.StatusOK)
	id := quiretest.Str(t, e.must(t, "POST", "/documents?siteId=default", map[string]any{"path": "walk/letter.txt", "content": "first draft", "contentType": "text/plain"}, http.StatusCreated), "documentId")
	e.must(t, "PATCH", "/documents/"+id+"?siteId=default", map[string]any{"content": "second draft", "contentType": "text/plain"}, http.StatusOK)
	for _, p := range []string{"walk/old-1.txt", "walk/old-2.txt", "walk/old-3.txt"} {
		gone := quiretest.Str(t, e.must(t, "POST", "/documents?siteId=default", map[string]any{"path": p, "content": "old", "contentType": "text/plain"}, http.StatusCreated), "documentId")
		e.must(t, "DELETE", "/documents/"+gone+"?siteId=default&softDelete=true", nil, http.StatusOK)
	}

	b := newBrowser(t, "en-US")
	var fetches int
	countIs := func(want int) chromedp.Action {
		return chromedp.Tasks{js(configFetches, &fetches), check(func() error {
			if fetches != want {
				return fmt.Errorf("GET /system/configuration fetched %d times on this page load, want %d", fetches, want)
			}
			return nil
		})}
	}
	steps := []step{{"open the console", navigate(e.s.URL + "/console/")}}
	steps = append(steps, signIn("ada", password)...)
	steps = append(steps,
		step{"the start page", textOf("main h1", "Start")},
		step{"the system configuration was fetched once", countIs(1)},
		step{"a reload fetches it once", chromedp.Tasks{chromedp.Reload(), textOf("#user", "ada"), textOf("main h1", "Start"), countIs(1)}},
		step{"the branding page, opened first, fetches it once too", chromedp.Tasks{navigate(e.s.URL + "/console/#/admin/branding"), chromedp.Reload(),
			visible("#brand-global"), wait(`document.querySelector("#brand-global .logo-preview img").getAttribute("src").startsWith("/branding/logo?v=")`),
			visible("#brand-site"), countIs(1)}},
		step{"create a site in Administration", chromedp.Tasks{js(`window.__same = true`, nil), navigate(e.s.URL + "/console/#/admin/sites"),
			visible("#site-form"), setValue("#site-id", "finance"), click("#site-form button[type=submit]"), textOf("#site-list", "finance")}},
		step{"the header's site switch offers it without a reload", wait(`!!document.querySelector('#site option[value="finance"]') && window.__same === true`)},
		step{"the admin leaves the users page and signs out", chromedp.Tasks{navigate(e.s.URL + "/console/#/admin/users"), textOf("#user-list", "sam"), click("#signout"),
			visible("#login")}},
		step{"the sign-in page keeps the branding", chromedp.Tasks{textOf("#brand-name", "Acme Records"), wait(`document.title === "Acme Records"`),
			wait(`getComputedStyle(document.querySelector("header.top")).backgroundColor === "rgb(122, 31, 61)"`), logoShown}},
		step{"and forgets the admin's page", wait(`location.hash === ""`)},
	)
	steps = append(steps, signIn("sam", password)...)
	steps = append(steps,
		step{"the next user lands on the start page", chromedp.Tasks{textOf("main h1", "Start"), absent("#user-list"), wait(`!location.hash.startsWith("#/admin")`)}},
		step{"Tab reaches choose files, and its focus shows", chromedp.Tasks{navigate(e.s.URL + "/console/#/browse/walk"), textOf("#entries", "letter.txt"),
			tabTo("file-input"), wait(`getComputedStyle(document.querySelector('label[for="file-input"]')).outlineStyle !== "none"`)}},
		step{"and choose a folder", chromedp.Tasks{tabTo("dir-input"), wait(`getComputedStyle(document.querySelector('label[for="dir-input"]')).outlineStyle !== "none"`),
			wait(`getComputedStyle(document.querySelector('label[for="file-input"]')).outlineStyle === "none"`)}},
		step{"the versions table has a header over every column", chromedp.Tasks{navigate(e.s.URL + "/console/#/doc/" + id), textOf("#preview", "second draft"),
			wait(`document.querySelectorAll("#versions tbody tr").length === 2`),
			wait(`[...document.querySelectorAll("#versions thead th")].every(th => th.textContent.trim() !== "")`), axeRule(src, "document", "empty-table-header")}},
		step{"empty the trash", chromedp.Tasks{click(`nav a[href="#/trash"]`), textOf("#trash-list", "walk/old-3.txt"), click("#empty-trash"),
			textOf("#trash-progress", "3 documents deleted for good"), textOf("#trash-list", "The trash is empty"), absent("#empty-trash:not([hidden])"),
			axeAll(src, "emptied trash"), shot("trash-emptied")}},
		step{"nothing is left in the trash", check(func() error {
			if d := e.docID(t, "default", "walk/old-1.txt", true); d != "" {
				return fmt.Errorf("walk/old-1.txt still in the trash")
			}
			return nil
		})},
		step{"an admin disables sam while signed in", check(func() error {
			e.must(t, "PUT", "/users/sam/DISABLE", nil, http.StatusOK)
			return nil
		})},
		step{"sam's next click: the sign-in page says the account is disabled", chromedp.Tasks{click(`nav a[href="#/browse"]`), visible("#login"),
			textOf("#signin-note", "Your account is disabled. Ask your administrator")}},
		step{"signing in again: plain words", chromedp.Tasks{setValue("#username", "sam"), setValue("#password", password), click("#login button[type=submit]"),
			textOf("#login .msg.error", "Your account is disabled. Ask your administrator"), absent("#user")}},
	)
	b.run(steps...)

	// A fresh tab (a new browser, no session, nothing seen before) shows
	// the global branding on its sign-in page, logo included.
	b = newBrowser(t, "en-US")
	b.run(
		step{"open the console in a new browser", chromedp.Tasks{navigate(e.s.URL + "/console/"), visible("#login")}},
		step{"the sign-in page is branded", chromedp.Tasks{textOf("#brand-name", "Acme Records"), wait(`document.title === "Acme Records"`),
			wait(`getComputedStyle(document.querySelector("header.top")).backgroundColor === "rgb(122, 31, 61)"`), logoShown, axeAll(src, "branded sign-in")}},
	)

	// German: one word for a site, in the header as in Administration.
	e.must(t, "PUT", "/users/sam/ENABLE", nil, http.StatusOK)
	b = newBrowser(t, "de-DE", `Object.defineProperty(navigator, "languages", {get: () => ["de-DE", "de"]});`)
	steps = []step{{"open the console", navigate(e.s.URL + "/console/")}}
	steps = append(steps, step{"sign in", chromedp.Tasks{visible("#login"), setValue("#username", "ada"), setValue("#password", password),
		click("#login button[type=submit]"), textOf("#user", "ada")}})
	steps = append(steps,
		step{"the header says Bereich", textOf("header label.site", "Bereich")},
		step{"Administration says Bereiche", chromedp.Tasks{navigate(e.s.URL + "/console/#/admin/sites"), textOf("nav.tabs", "Bereiche"), textOf("main h1", "Bereiche")}},
	)
	b.run(steps...)
}
