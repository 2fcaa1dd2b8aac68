package console_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"quire/quiretest"
)

// dragOnto drags the element at from onto the element at to with the
// browser's drag events, as a mouse does.
func dragOnto(from, to string) chromedp.Action {
	return js(fmt.Sprintf(`(() => {
  const a = document.querySelector(%q), b = document.querySelector(%q);
  const dt = new DataTransfer();
  a.dispatchEvent(new DragEvent("dragstart", {dataTransfer: dt, bubbles: true, cancelable: true}));
  b.dispatchEvent(new DragEvent("dragover", {dataTransfer: dt, bubbles: true, cancelable: true}));
  b.dispatchEvent(new DragEvent("drop", {dataTransfer: dt, bubbles: true, cancelable: true}));
  a.dispatchEvent(new DragEvent("dragend", {dataTransfer: dt, bubbles: true}));
  return true;
})()`, from, to), nil)
}

// row is the folder table's row of an entry.
func row(name string) string { return fmt.Sprintf(`#entries tr[data-name=%q]`, name) }

// TestConsole_FoldersAndDocuments: a document is renamed and moved from
// its page (its path edited: folder and name, a taken name asked about),
// dragged onto a breadcrumb and onto a folder; a folder is moved with
// what it holds (a form, and by dragging it onto another), an empty
// folder is renamed and deleted, and a folder with documents is refused
// both in plain words. The forms pass axe-core, in French at phone size
// too.
func TestConsole_FoldersAndDocuments(t *testing.T) {
	t.Parallel()
	src := axeFile()
	e := newEnv(t)
	e.user(t, "flo", "default", "temporary-1", true)
	for _, f := range []string{"docs/inbox", "docs/archive", "docs/empty", "docs/tmp"} {
		e.must(t, "POST", "/folders?siteId=default", map[string]any{"path": f}, http.StatusCreated)
	}
	ids := map[string]string{}
	for _, p := range []string{"docs/inbox/a.txt", "docs/inbox/b.txt", "docs/inbox/c.txt", "docs/archive/b.txt"} {
		ids[p] = quiretest.Str(t, e.must(t, "POST", "/documents?siteId=default", map[string]any{"path": p, "content": "text of " + p, "contentType": "text/plain"}, http.StatusCreated), "documentId")
	}
	at := func(key, want string) chromedp.Action {
		return check(func() error {
			d := e.must(t, "GET", "/documents/"+ids[key]+"?siteId=default", nil, http.StatusOK)
			if d["path"] != want {
				return fmt.Errorf("%s is at %v, want %s", key, d["path"], want)
			}
			return nil
		})
	}
	noFolder := func(path string) chromedp.Action {
		return check(func() error {
			out := e.must(t, "GET", "/folders?siteId=default&path=docs&limit=100", nil, http.StatusOK)
			docs, _ := out["documents"].([]any)
			for _, d := range docs {
				if m, _ := d.(map[string]any); m["folder"] == true && "docs/"+fmt.Sprint(m["path"]) == path {
					return fmt.Errorf("folder %s still there", path)
				}
			}
			return nil
		})
	}
	b := newBrowser(t, "en-US")
	steps := []step{{"open the console", navigate(e.s.URL + "/console/")}}
	steps = append(steps, signIn("flo", password)...)
	steps = append(steps,
		step{"rename a document from its page, with the keyboard", chromedp.Tasks{navigate(e.s.URL + "/console/#/doc/" + ids["docs/inbox/a.txt"]), textOf("#doc-title", "a.txt"),
			click("#rename"), visible("#path-form"), wait(`document.activeElement.id === "path-name"`),
			js(`document.getElementById("path-name").select(), true`, nil), sendKeys("#path-name", "a-renamed.txt"),
			textOf("#path-result", "docs/inbox/a-renamed.txt"), axeAll(src, "rename or move form"), chromedp.KeyEvent(kb.Enter),
			textOf("#status", "The document is now at docs/inbox/a-renamed.txt"), textOf("#doc-title", "a-renamed.txt"), at("docs/inbox/a.txt", "docs/inbox/a-renamed.txt")}},
		step{"move it: edit its folder", chromedp.Tasks{click("#move"), wait(`document.activeElement.id === "path-folder"`), setValue("#path-folder", "docs/archive"),
			click("#path-form button[type=submit]"), textOf("#status", "docs/archive/a-renamed.txt"), at("docs/inbox/a.txt", "docs/archive/a-renamed.txt")}},
		// The page renders the moved document again after the status shows:
		// a click on #move that lands before that render loses its form, so
		// the click is made again until the form is open.
		step{"edit the whole path, into a new folder", chromedp.Tasks{
			wait(`(() => { const f = document.getElementById("path-form"); if (f && f.offsetParent !== null && document.activeElement.id === "path-folder") return true; const m = document.getElementById("move"); if (m && (!f || f.offsetParent === null)) m.click(); return false; })()`),
			setValue("#path-folder", "docs/new/place"), setValue("#path-name", "z.txt"),
			click("#path-form button[type=submit]"), textOf("#status", "docs/new/place/z.txt"), at("docs/inbox/a.txt", "docs/new/place/z.txt")}},
		step{"a taken name is asked about: keep both", chromedp.Tasks{navigate(e.s.URL + "/console/#/doc/" + ids["docs/inbox/b.txt"]), textOf("#doc-title", "b.txt"),
			click("#move"), setValue("#path-folder", "docs/archive"), click("#path-form button[type=submit]"),
			visible("#path-conflict"), textOf("#path-conflict", "There is a document docs/archive/b.txt already"), axeAll(src, "taken path question"),
			click(`#path-conflict button[data-choice="both"]`), textOf("#status", "docs/archive/b (2).txt"), at("docs/inbox/b.txt", "docs/archive/b (2).txt")}},
		step{"drag a document onto a breadcrumb", chromedp.Tasks{navigate(e.s.URL + "/console/#/browse/docs/inbox"), textOf("#entries", "c.txt"),
			dragOnto(row("c.txt"), `.crumbs a[href="#/browse/docs"]`), textOf("#drop-progress", "1 document moved to docs"), at("docs/inbox/c.txt", "docs/c.txt"),
			wait(`!document.querySelector('` + row("c.txt") + `')`)}},
		step{"and onto a folder", chromedp.Tasks{navigate(e.s.URL + "/console/#/browse/docs"), textOf("#entries", "c.txt"),
			dragOnto(row("c.txt"), row("archive")), textOf("#drop-progress", "1 document moved to docs/archive"), at("docs/inbox/c.txt", "docs/archive/c.txt")}},
		step{"delete an empty folder", chromedp.Tasks{navigate(e.s.URL + "/console/#/browse/docs/empty"), textOf("main h1", "empty"), click("#delete-folder"),
			textOf("#status", "The folder empty is deleted"), textOf(".crumbs", "docs"), wait(`location.hash === "#/browse/docs"`), noFolder("docs/empty")}},
		step{"a folder with documents is not deleted: told why", chromedp.Tasks{navigate(e.s.URL + "/console/#/browse/docs/archive"), textOf("#entries", "c.txt"),
			click("#delete-folder"), textOf("#status", "The folder is not empty. Move or delete what is in it first."), noRawText()}},
		step{"rename an empty folder", chromedp.Tasks{navigate(e.s.URL + "/console/#/browse/docs/tmp"), textOf("main h1", "tmp"), click("#rename-folder"),
			visible("#rename-folder-form"), axeAll(src, "rename folder form"), setValue("#rename-folder-name", "renamed"),
			click("#rename-folder-form button[type=submit]"), wait(`location.hash === "#/browse/docs/renamed"`), textOf("#status", "The folder is now called renamed"), noFolder("docs/tmp")}},
		step{"move a folder with what it holds", chromedp.Tasks{navigate(e.s.URL + "/console/#/browse/docs/new"), textOf("#entries", "place"), click("#move-folder"),
			visible("#move-folder-form"), axeAll(src, "move folder form"), setValue("#move-folder-to", "docs/archive"),
			click("#move-folder-form button[type=submit]"), wait(`location.hash === "#/browse/docs/archive/new"`), textOf("#status", "The folder new is now in docs/archive"),
			at("docs/inbox/a.txt", "docs/archive/new/place/z.txt")}},
		step{"drag a folder onto another", chromedp.Tasks{navigate(e.s.URL + "/console/#/browse/docs"), textOf("#entries", "renamed"),
			dragOnto(row("renamed"), row("archive")), textOf("#status", "The folder renamed is now in docs/archive"), wait(`!document.querySelector('` + row("renamed") + `')`)}},
		step{"the grid view drags too", chromedp.Tasks{navigate(e.s.URL + "/console/#/browse/docs/archive"), textOf("#entries", "c.txt"), click(`.views button[data-view="grid"]`),
			wait(`!!document.querySelector("#grid li.card-entry.folder[data-name='new']")`), axeAll(src, "grid view"), shot("folder-grid"),
			dragOnto(`#grid li[data-name="c.txt"]`, `#grid li[data-name="new"]`), textOf("#drop-progress", "moved to docs/archive/new"), at("docs/inbox/c.txt", "docs/archive/new/c.txt"),
			click(`.views button[data-view="table"]`), visible("#entries")}},
		step{"French, phone: rename from the document's page", chromedp.Tasks{viewport(390, 844), setLangMenu("fr"),
			navigate(e.s.URL + "/console/#/doc/" + ids["docs/inbox/c.txt"]), textOf("#doc-title", "c.txt"), click("#rename"),
			visible("#path-form"), textOf("#path-form", "Renommer ou déplacer"), noSideways("rename form, phone"),
			axeAll(src, "rename form, phone, French"), shot("phone-rename"), setValue("#path-name", "c-fr.txt"), click("#path-form button[type=submit]"),
			textOf("#status", "Le document se trouve maintenant à docs/archive/new/c-fr.txt"), at("docs/inbox/c.txt", "docs/archive/new/c-fr.txt"),
			viewport(1280, 900)}},
	)
	b.run(steps...)
}
