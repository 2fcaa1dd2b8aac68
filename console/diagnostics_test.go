package console_test

import (
	"fmt"
	"net/http"
	"syscall"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"quire/storage"
)

// TestConsole_PlainDiagnostics (issue 47): the intake and health pages
// say in plain words what the server's diagnostics mean: a scanner's
// empty file is "The file was empty." and a disk that failed a write
// says to have it checked and restart Quire; the server's own text is
// behind a closed "Details" (opened with the keyboard, then shown), in
// English, German and French.
func TestConsole_PlainDiagnostics(t *testing.T) {
	t.Parallel()
	src := axeFile()
	e := newEnv(t)
	e.adminUser(t, "ida")
	e.must(t, "POST", "/sites/default/intakeProfiles", map[string]any{"intakeProfile": map[string]any{"name": "scans", "actions": []any{}}}, http.StatusCreated)
	e.emptyScan(t, "scans")
	failRow := `section.intake-errors[data-profile="scans"] tbody tr`
	// shown: the element holding the server's text is rendered (a closed
	// details hides it).
	shown := func(sel, text string) string {
		return fmt.Sprintf(`(() => { const e = document.querySelector(%s); return !!e && e.textContent.includes(%s) && e.checkVisibility(); })()`, jsq(sel), jsq(text))
	}
	// Each language's tab stays signed in for the health page below.
	tabs := map[string]*browser{}
	for _, tt := range []struct{ lang, empty string }{
		{"en-US", "The file was empty."},
		{"de-DE", "Die Datei war leer."},
		{"fr-FR", "Le fichier était vide."},
	} {
		b := newBrowser(t, tt.lang, fmt.Sprintf(`Object.defineProperty(navigator, "languages", {get: () => [%q]});`, tt.lang))
		tabs[tt.lang] = b
		steps := append([]step{{"open the console", navigate(e.s.URL + "/console/")}}, signIn("ida", password)...)
		steps = append(steps,
			step{"an intake failure in plain words", chromedp.Tasks{navigate(e.s.URL + "/console/#/admin/intake"), textOf(failRow, tt.empty),
				textOf(failRow+" details", "the file is empty"), wait(`!` + shown(failRow+" details span", "the file is empty")), noRawText(), axeAll(src, "intake failures "+tt.lang)}},
			step{"its details with the keyboard", chromedp.Tasks{focus(failRow + " details summary"), chromedp.KeyEvent(kb.Enter),
				wait(`document.querySelector(` + jsq(failRow+" details") + `).open`), wait(shown(failRow+" details span", "the file is empty"))}},
		)
		if tt.lang == "en-US" {
			steps = append(steps, step{"screenshots", chromedp.Tasks{shot("admin-intake-plain"), phoneShot(src, "admin-intake-plain")}})
		}
		b.run(steps...)
	}

	// The three tabs are signed in, then a write fails as a broken disk's
	// would: the store stops writing (a sign-in would be refused now).
	health := []struct{ lang, disk string }{
		{"en-US", "A write to the data disk failed, so Quire stopped writing."},
		{"de-DE", "Ein Schreibvorgang auf den Datenträger ist fehlgeschlagen"},
		{"fr-FR", "Une écriture sur le disque de données a échoué, Quire n'écrit donc plus."},
	}
	e.s.Node.DB.SetCommitFault(func(*storage.Command) error { return fmt.Errorf("write 000001.vlog: %w", syscall.EIO) })
	if r := e.s.Do("POST", "/documents?siteId=default", map[string]any{"path": "x.txt", "content": "x", "contentType": "text/plain"}, e.admin); r.Status < 500 {
		t.Fatalf("a write on the failed disk: %d %s", r.Status, r.Body)
	}
	for _, tt := range health {
		steps := []step{
			{"the health page says it in plain words", chromedp.Tasks{navigate(e.s.URL + "/console/#/admin/health"), textOf("#health-refused", tt.disk),
				textOf("#health-refused details", "000001.vlog"), wait(`!` + shown("#health-refused details span", "000001.vlog")), noRawText(), axeAll(src, "health, writes refused "+tt.lang)}},
			{"the server's text behind Details, opened with a click", chromedp.Tasks{click("#health-refused details summary"), wait(shown("#health-refused details span", "000001.vlog"))}},
		}
		if tt.lang == "en-US" {
			steps = append(steps, step{"screenshots", chromedp.Tasks{shot("admin-health-refused"), phoneShot(src, "admin-health-refused")}})
		}
		tabs[tt.lang].run(steps...)
	}
}
