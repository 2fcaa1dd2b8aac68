package console_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"quire/quiretest"
)

// dropOne drops one text file named name with text on the folder's drop
// zone, as a drag from the desktop does.
func dropOne(name, text string) chromedp.Action {
	return js(fmt.Sprintf(`(() => {
  const dt = new DataTransfer();
  dt.items.add(new File([%q], %q, {type: "text/plain"}));
  const z = document.getElementById("dropzone");
  z.dispatchEvent(new DragEvent("drop", {dataTransfer: dt, bubbles: true, cancelable: true}));
  return true;
})()`, text, name), nil)
}

// chooseFile puts a text file into a file input, as the file chooser does.
func chooseFile(inputID, name, text string) chromedp.Action {
	return js(fmt.Sprintf(`(() => {
  const dt = new DataTransfer();
  dt.items.add(new File([%q], %q, {type: "text/plain"}));
  const i = document.getElementById(%q);
  i.files = dt.files;
  i.dispatchEvent(new Event("change"));
  return true;
})()`, text, name, inputID), nil)
}

// downloadedText waits for a downloaded file in dir holding want.
func downloadedText(dir, want string) chromedp.Action {
	return check(func() error {
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			files, _ := os.ReadDir(dir)
			for _, f := range files {
				if b, err := os.ReadFile(filepath.Join(dir, f.Name())); err == nil && string(b) == want {
					return nil
				}
			}
		}
		return fmt.Errorf("no download holding %q in %s", want, dir)
	})
}

// TestConsole_Versions: versions as people expect them. A new version is
// uploaded from the document's page with progress; any earlier version
// opens in the preview and downloads; a restore asks first, and a "no"
// changes nothing. Dropping a file whose name is taken in the folder asks:
// a new version of it, keep both (the new one as "name (2).txt", never
// the API's "name (<id>).txt"), or cancel (Escape too). In French, at
// phone size, the question passes axe-core.
func TestConsole_Versions(t *testing.T) {
	t.Parallel()
	src := axeFile()
	e := newEnv(t)
	e.user(t, "vera", "default", "temporary-1", true)
	id := quiretest.Str(t, e.must(t, "POST", "/documents?siteId=default", map[string]any{"path": "ver/contract.txt", "content": "version one", "contentType": "text/plain"}, http.StatusCreated), "documentId")
	e.must(t, "PATCH", "/documents/"+id+"?siteId=default", map[string]any{"content": "version two", "contentType": "text/plain"}, http.StatusOK)
	content := func(want string) chromedp.Action {
		return check(func() error {
			out := e.must(t, "GET", "/documents/"+id+"/content?siteId=default", nil, http.StatusOK)
			if out["content"] != want {
				return fmt.Errorf("content %v, want %q", out["content"], want)
			}
			return nil
		})
	}
	dl := t.TempDir()
	rows := `document.querySelectorAll("#versions tbody tr").length`
	b := newBrowser(t, "en-US")
	steps := []step{{"open the console", chromedp.Tasks{navigate(e.s.URL + "/console/"), downloadsTo(dl)}}}
	steps = append(steps, signIn("vera", password)...)
	steps = append(steps,
		step{"the document: two versions", chromedp.Tasks{navigate(e.s.URL + "/console/#/doc/" + id), textOf("#preview", "version two"), wait(rows + ` === 2`)}},
		step{"upload a new version from its page", chromedp.Tasks{chooseFile("version-file", "contract-v3.txt", "version three"),
			textOf("#status", "contract-v3.txt is now the current version"), textOf("#preview", "version three"), wait(rows + ` === 3`), content("version three")}},
		step{"open the first version in the preview", chromedp.Tasks{click("#versions tbody tr:nth-child(3) button.open"), textOf("#version-note", "You are looking at the version of"),
			textOf("#preview", "version one"), axeAll(src, "an earlier version shown"), shot("document-old-version")}},
		step{"back to the current one", chromedp.Tasks{click("#version-back"), textOf("#preview", "version three"), absent("#version-note")}},
		step{"download the first version", chromedp.Tasks{click("#versions tbody tr:nth-child(3) button.download"), downloadedText(dl, "version one")}},
		step{"a restore asks first; no changes nothing", chromedp.Tasks{js(`window.confirm = (q) => { window.__asked = q; return false; }`, nil),
			click("#versions tbody tr:nth-child(3) button.restore"), wait(`(window.__asked || "").includes("Restore the version of")`), content("version three")}},
		step{"yes restores it", chromedp.Tasks{js(`window.confirm = () => true`, nil), click("#versions tbody tr:nth-child(3) button.restore"),
			textOf("#status", "Version restored"), textOf("#preview", "version one"), content("version one")}},

		step{"drop a file whose name is taken: asked", chromedp.Tasks{navigate(e.s.URL + "/console/#/browse/ver"), textOf("#entries", "contract.txt"),
			dropOne("contract.txt", "version four"), visible("#upload-conflict"), textOf("#upload-conflict", "A document named contract.txt is already in this folder"),
			axeAll(src, "same-name question"), shot("upload-same-name")}},
		step{"as a new version", chromedp.Tasks{click(`#upload-conflict button[data-choice="version"]`), textOf("#uploads", "uploaded as a new version"), content("version four"),
			wait(`document.querySelectorAll("#entries tr.doc").length === 1`)}},
		step{"again: keep both", chromedp.Tasks{dropOne("contract.txt", "a different contract"), visible("#upload-conflict"),
			click(`#upload-conflict button[data-choice="both"]`), textOf("#uploads", "uploaded as contract (2).txt"), textOf("#entries", "contract (2).txt")}},
		step{"again: Escape cancels", chromedp.Tasks{dropOne("contract.txt", "not wanted"), visible("#upload-conflict"),
			chromedp.KeyEvent(kb.Escape), textOf("#uploads", "not uploaded"), textOf("#batch-text", "0 uploaded, 1 not uploaded"), absent("#upload-conflict"),
			wait(`document.querySelectorAll("#entries tr.doc").length === 2`)}},
		step{"French, phone: the question", chromedp.Tasks{viewport(390, 844), setLangMenu("fr"), navigate(e.s.URL + "/console/#/browse/ver"), textOf("#entries", "contract.txt"),
			dropOne("contract.txt", "en français"), visible("#upload-conflict"), textOf("#upload-conflict", "Garder les deux"),
			noSideways("question, phone"), axeAll(src, "same-name question, phone, French"), shot("phone-upload-same-name"), click(`#upload-conflict button[data-choice="skip"]`),
			textOf("#uploads", "non envoyé"), viewport(1280, 900)}},
	)
	b.run(steps...)
	if e.docID(t, "default", "ver/contract (2).txt", false) == "" {
		t.Fatal("keep both: no ver/contract (2).txt")
	}
	list := e.must(t, "GET", "/folders?siteId=default&path=ver&limit=100", nil, http.StatusOK)
	if docs, _ := list["documents"].([]any); len(docs) != 2 {
		t.Fatalf("the folder holds %d documents, want 2: %v", len(docs), list)
	}
}
