package console_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"quire/quiretest"
)

// TestConsole_RenameFolderWithDocuments (issue 47): a folder that holds
// documents (and a subfolder) is renamed from its menu with the keyboard;
// its documents follow and the page lands in it under the new name; a
// name another folder has is refused in plain words.
func TestConsole_RenameFolderWithDocuments(t *testing.T) {
	t.Parallel()
	src := axeFile()
	e := newEnv(t)
	e.user(t, "rene", "default", "temporary-1", true)
	ids := map[string]string{}
	for _, p := range []string{"office/2026/a.txt", "office/2026/b.txt", "office/2026/old/c.txt", "office/2025/z.txt"} {
		ids[p] = quiretest.Str(t, e.must(t, "POST", "/documents?siteId=default", map[string]any{"path": p, "content": p, "contentType": "text/plain"}, http.StatusCreated), "documentId")
	}
	at := func(old, want string) chromedp.Action {
		return check(func() error {
			out := e.must(t, "GET", "/documents/"+ids[old]+"?siteId=default", nil, http.StatusOK)
			if out["path"] != want {
				return fmt.Errorf("%s is at %v, want %s", old, out["path"], want)
			}
			return nil
		})
	}
	b := newBrowser(t, "en-US")
	steps := append([]step{{"open the console", navigate(e.s.URL + "/console/")}}, signIn("rene", password)...)
	steps = append(steps,
		step{"a name another folder has", chromedp.Tasks{navigate(e.s.URL + "/console/#/browse/office/2026"), textOf("#entries", "a.txt"), click("#rename-folder"),
			wait(`document.activeElement.id === "rename-folder-name"`), textOf("#rename-folder-form", "The folder keeps its documents"),
			sendKeys("#rename-folder-name", "2025"), chromedp.KeyEvent(kb.Enter),
			textOf("#status", "already"), at("office/2026/a.txt", "office/2026/a.txt")}},
		step{"rename it with the keyboard", chromedp.Tasks{js(`document.getElementById("rename-folder-name").select(), true`, nil),
			sendKeys("#rename-folder-name", "Year 2026"), axeAll(src, "rename a folder with documents"), chromedp.KeyEvent(kb.Enter),
			wait(`decodeURIComponent(location.hash) === "#/browse/office/Year 2026"`), textOf("#status", "The folder is now called Year 2026"),
			textOf("#entries", "a.txt"), textOf("#entries", "old")}},
		step{"its documents moved with it", chromedp.Tasks{at("office/2026/a.txt", "office/Year 2026/a.txt"), at("office/2026/b.txt", "office/Year 2026/b.txt"),
			at("office/2026/old/c.txt", "office/Year 2026/old/c.txt"), at("office/2025/z.txt", "office/2025/z.txt")}},
	)
	b.run(steps...)
}
