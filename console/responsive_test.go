package console_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"quire/quiretest"
)

// viewport sizes the tab as a phone or a tablet (a mobile viewport: the
// page's meta viewport applies), or back to the desktop.
func viewport(w, h int64) chromedp.Action {
	if w >= 1280 {
		return chromedp.EmulateViewport(w, h)
	}
	return chromedp.EmulateViewport(w, h, chromedp.EmulateScale(1), chromedp.EmulateMobile)
}

// noSideways fails when the page is wider than the screen (it would
// scroll sideways).
func noSideways(page string) chromedp.Action {
	return chromedp.Tasks{
		wait(`document.fonts.status === "loaded"`),
		wait(fmt.Sprintf(`(() => { const d = document.documentElement; if (d.scrollWidth <= d.clientWidth) return true;
			window.__wide = [...document.querySelectorAll("body *")].filter(e => e.getBoundingClientRect().right > d.clientWidth + 1).slice(0, 5).map(e => e.tagName + "#" + e.id + "." + e.className).join(" ");
			if (window.__said !== window.__wide) console.log(%q, d.scrollWidth, d.clientWidth, window.__wide); window.__said = window.__wide; return false; })()`, page+" is wider than the screen:")),
	}
}

// TestConsole_PhoneAndTablet: at 390×844 (a phone) and 768×1024 (a
// tablet), and at 360 px, every page fits the screen (no sideways scrolling), the header
// folds into a menu opened by mouse or keyboard, tables stack their
// rows with each cell named, and axe-core finds nothing on any page.
func TestConsole_PhoneAndTablet(t *testing.T) {
	t.Parallel()
	src := axeFile()
	e := newEnv(t)
	e.adminUser(t, "ada")
	long := "a-very-long-file-name-that-a-scanner-made-" + strings.Repeat("x", 40) + ".txt"
	id := quiretest.Str(t, e.must(t, "POST", "/documents?siteId=default", map[string]any{"path": "mobile/" + long, "content": "the mobile walrus report", "contentType": "text/plain",
		"tags": []map[string]any{{"key": "dept", "value": "sales"}}}, http.StatusCreated), "documentId")
	e.must(t, "PATCH", "/documents/"+id+"?siteId=default", map[string]any{"content": "the mobile walrus report, second", "contentType": "text/plain"}, http.StatusOK)
	e.must(t, "POST", "/documents?siteId=default", map[string]any{"path": "mobile/notes.txt", "content": "walrus notes", "contentType": "text/plain"}, http.StatusCreated)
	e.must(t, "POST", "/documents/"+id+"/reviews?siteId=default", map[string]any{"review": map[string]any{"reviewCategory": "check", "requiredDecisions": 1}}, http.StatusCreated)
	gone := quiretest.Str(t, e.must(t, "POST", "/documents?siteId=default", map[string]any{"path": "mobile/old.txt", "content": "old", "contentType": "text/plain"}, http.StatusCreated), "documentId")
	e.must(t, "DELETE", "/documents/"+gone+"?siteId=default&softDelete=true", nil, http.StatusOK)
	e.must(t, "POST", "/sites/default/intakeProfiles", map[string]any{"intakeProfile": map[string]any{"name": "scans", "actions": []any{}}}, http.StatusCreated)

	pages := []struct{ name, hash, ready string }{
		{"folder", "#/browse/mobile", `document.querySelector("#entries") && document.querySelector("#entries").textContent.includes("notes.txt")`},
		{"document", "#/doc/" + id, `document.querySelector("#preview") && document.querySelector("#versions tbody tr:nth-child(2)")`},
		{"search", "#/search?q=walrus", `document.querySelector("#result-count")`},
		{"trash", "#/trash", `document.querySelector("#trash-list") && document.querySelector("#trash-list").textContent.includes("old.txt")`},
		{"reviews", "#/reviews", `document.querySelector("#review-list li.review")`},
		{"notifications", "#/notifications", `document.querySelector("#notification-list")`},
		{"users", "#/admin/users", `document.querySelector("#user-list")`},
		{"api-keys", "#/admin/keys", `document.querySelector("#key-list")`},
		{"sites", "#/admin/sites", `document.querySelector("#site-list")`},
		{"configuration", "#/admin/config", `document.querySelector("#config-form")`},
		{"mail", "#/admin/mail", `document.querySelector("#mail-form")`},
		{"schemas", "#/admin/schemas", `document.querySelector("#class-list")`},
		{"branding", "#/admin/branding", `document.querySelector("#brand-site")`},
		{"intake", "#/admin/intake", `document.querySelector("#intake-list")`},
		{"health", "#/admin/health", `document.querySelector("#health-version")`},
	}
	b := newBrowser(t, "en-US")
	steps := []step{{"a phone opens the console", chromedp.Tasks{viewport(390, 844), navigate(e.s.URL + "/console/")}},
		{"the sign-in page fits", chromedp.Tasks{visible("#login"), noSideways("sign-in"), axeAll(src, "phone sign-in"), shot("phone-sign-in")}}}
	steps = append(steps, signIn("ada", password)...)
	steps = append(steps,
		step{"the header shows the menu button, not the navigation", chromedp.Tasks{visible("#menu-toggle"),
			wait(`getComputedStyle(document.getElementById("menu")).display === "none"`), shot("phone-documents")}},
		step{"the menu opens with the mouse", chromedp.Tasks{click("#menu-toggle"), visible(`#menu nav a[href="#/search"]`),
			wait(`document.getElementById("menu-toggle").getAttribute("aria-expanded") === "true"`), noSideways("menu"), axeAll(src, "phone menu"), shot("phone-menu")}},
		step{"a link leads there and closes the menu", chromedp.Tasks{click(`#menu nav a[href="#/search"]`), visible("#q"),
			wait(`getComputedStyle(document.getElementById("menu")).display === "none" && document.getElementById("menu-toggle").getAttribute("aria-expanded") === "false"`)}},
		step{"the keyboard opens it too, and Escape closes it", chromedp.Tasks{tabTo("menu-toggle"), chromedp.KeyEvent(kb.Enter),
			wait(`document.getElementById("menu-toggle").getAttribute("aria-expanded") === "true"`), chromedp.KeyEvent(kb.Tab),
			wait(`document.activeElement.matches("#menu nav a")`), chromedp.KeyEvent(kb.Escape),
			wait(`document.activeElement.id === "menu-toggle" && getComputedStyle(document.getElementById("menu")).display === "none"`)}},
	)
	for _, size := range []struct {
		name string
		w, h int64
	}{{"phone", 390, 844}, {"tablet", 768, 1024}, {"small phone", 360, 740}} {
		steps = append(steps, step{size.name + " size", viewport(size.w, size.h)})
		for _, p := range pages {
			check := chromedp.Tasks{navigate(e.s.URL + "/console/" + p.hash), wait(p.ready), noSideways(size.name + " " + p.name)}
			if size.w != 360 { // the smallest width is checked for fit only
				check = append(check, axeAll(src, size.name+" "+p.name), shot(size.name+"-"+p.name))
			}
			steps = append(steps, step{fmt.Sprintf("%s: the %s page fits", size.name, p.name), check})
		}
	}
	steps = append(steps,
		step{"on a phone a table's cells carry their column's name", chromedp.Tasks{viewport(390, 844), navigate(e.s.URL + "/console/#/browse/mobile"),
			wait(`document.querySelector("#entries tbody td[data-label]") && getComputedStyle(document.querySelector("#entries tbody tr")).display === "block"`),
			wait(`[...document.querySelectorAll("#entries tbody tr.doc td")].some(td => td.dataset.label === "Size")`)}},
		step{"the desktop shows the navigation again", chromedp.Tasks{viewport(1280, 900), wait(`getComputedStyle(document.getElementById("menu-toggle")).display === "none"`),
			visible(`header nav a[href="#/search"]`)}},
	)
	b.run(steps...)
}

// phoneShot takes the page as it is at phone size (390×844) too: it must
// fit, pass axe-core, and is saved as phone-<name>.png; the tab is then
// the desktop again.
func phoneShot(src, name string) chromedp.Action {
	return chromedp.Tasks{viewport(390, 844), noSideways("phone " + name), axeAll(src, "phone "+name), shot("phone-" + name), viewport(1280, 900)}
}
