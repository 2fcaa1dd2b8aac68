package console_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"quire/quiretest"
)

// colorScheme sets the system colour scheme the page sees
// (prefers-color-scheme), as the operating system's dark mode does.
func colorScheme(scheme string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		return emulation.SetEmulatedMedia().WithFeatures([]*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}).Do(ctx)
	})
}

// TestConsole_DarkMode: with the system in dark mode the console is
// dark, on every page, on a phone too, and text keeps its contrast
// (axe-core, every impact); a site's primary colour too dark for links on
// the dark background leaves the links their readable colour; back in
// light mode the console is light again, without a reload.
func TestConsole_DarkMode(t *testing.T) {
	t.Parallel()
	src := axeFile()
	e := newEnv(t)
	e.adminUser(t, "ada")
	id := quiretest.Str(t, e.must(t, "POST", "/documents?siteId=default", map[string]any{"path": "dark/report.txt", "content": "the night owl report", "contentType": "text/plain",
		"tags": []map[string]any{{"key": "dept", "value": "sales"}}}, http.StatusCreated), "documentId")
	e.must(t, "POST", "/documents/"+id+"/reviews?siteId=default", map[string]any{"review": map[string]any{"reviewCategory": "check", "requiredDecisions": 1}}, http.StatusCreated)
	gone := quiretest.Str(t, e.must(t, "POST", "/documents?siteId=default", map[string]any{"path": "dark/old.txt", "content": "old", "contentType": "text/plain"}, http.StatusCreated), "documentId")
	e.must(t, "DELETE", "/documents/"+gone+"?siteId=default&softDelete=true", nil, http.StatusOK)

	darkBody := `getComputedStyle(document.body).backgroundColor === "rgb(13, 17, 23)"`
	b := newBrowser(t, "en-US")
	steps := []step{
		{"the system is in dark mode", colorScheme("dark")},
		{"a dark sign-in page", chromedp.Tasks{navigate(e.s.URL + "/console/"), visible("#login"), wait(darkBody),
			axeAll(src, "dark sign-in"), shot("dark-sign-in")}},
		{"a wrong password, in the dark", chromedp.Tasks{setValue("#username", "ada"), setValue("#password", "wrong-password"), click("#login button[type=submit]"),
			visible("#login .msg.error"), axeAll(src, "dark sign-in error")}},
	}
	steps = append(steps, signIn("ada", password)...)
	for _, p := range []struct{ name, hash, ready string }{
		{"folder", "#/browse/dark", `document.querySelector("#entries") && document.querySelector("#entries").textContent.includes("report.txt")`},
		{"document", "#/doc/" + id, `document.querySelector("#preview")`},
		{"search", "#/search?q=owl", `document.querySelector("#result-count")`},
		{"trash", "#/trash", `document.querySelector("#trash-list") && document.querySelector("#trash-list").textContent.includes("old.txt")`},
		{"reviews", "#/reviews", `document.querySelector("#review-list li.review")`},
		{"users", "#/admin/users", `document.querySelector("#user-list")`},
		{"configuration", "#/admin/config", `document.querySelector("#config-form")`},
		{"mail", "#/admin/mail", `document.querySelector("#mail-form")`},
		{"branding", "#/admin/branding", `document.querySelector("#brand-site")`},
	} {
		steps = append(steps, step{"dark " + p.name + " page", chromedp.Tasks{navigate(e.s.URL + "/console/" + p.hash), wait(p.ready), wait(darkBody),
			axeAll(src, "dark "+p.name), shot("dark-" + p.name)}})
	}
	steps = append(steps,
		step{"a message in the dark", chromedp.Tasks{navigate(e.s.URL + "/console/#/trash"), textOf("#trash-list", "old.txt"),
			click(`#trash-list button.restore`), textOf("#status", "is restored"), axeAll(src, "dark status message")}},
		step{"a primary colour too dark to read as a link on dark", chromedp.Tasks{navigate(e.s.URL + "/console/#/admin/branding"), visible("#brand-global"),
			setValue("#brand-global-primary", "#1a237e"), click("#brand-global button[type=submit]"),
			wait(`getComputedStyle(document.querySelector("header.top")).backgroundColor === "rgb(26, 35, 126)"`),
			navigate(e.s.URL + "/console/#/browse/dark"), textOf("#entries", "report.txt"),
			wait(`getComputedStyle(document.querySelector("#entries a")).color === "rgb(121, 192, 255)"`), axeAll(src, "dark branded folder")}},
		step{"a dark phone", chromedp.Tasks{viewport(390, 844), navigate(e.s.URL + "/console/#/doc/" + id), wait(`document.querySelector("#preview")`),
			click("#menu-toggle"), visible(`#menu nav a[href="#/search"]`), axeAll(src, "dark phone menu"), shot("dark-phone-menu"), viewport(1280, 900)}},
		step{"back in light mode without a reload", chromedp.Tasks{colorScheme("light"), wait(`getComputedStyle(document.body).backgroundColor === "rgb(255, 255, 255)"`),
			wait(`getComputedStyle(document.querySelector("#entries a, main a")).color === "rgb(26, 35, 126)"`)}},
	)
	b.run(steps...)
}
