package console_test

import (
	"archive/zip"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"quire/quiretest"
)

// box is the selector of a row's check box in the folder table.
func box(name string) string { return fmt.Sprintf(`#entries tr[data-name=%q] input.select`, name) }

// shiftClick clicks an element with Shift held, as a person selecting a
// range does.
func shiftClick(sel string) chromedp.Action {
	return click(sel, chromedp.ButtonModifiers(input.ModifierShift))
}

// downloadsTo lets the tab save downloads into dir.
func downloadsTo(dir string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		// The tab's own browser context: the shared Chromium holds one per test.
		info, err := target.GetTargetInfo().Do(ctx)
		if err != nil {
			return err
		}
		return cdpbrowser.SetDownloadBehavior(cdpbrowser.SetDownloadBehaviorBehaviorAllowAndName).WithDownloadPath(dir).
			WithBrowserContextID(info.BrowserContextID).Do(ctx)
	})
}

// zipIn waits for a finished ZIP in dir and lists its entries.
func zipIn(dir string) ([]string, error) {
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		files, _ := os.ReadDir(dir)
		for _, f := range files {
			if strings.HasSuffix(f.Name(), ".crdownload") {
				continue
			}
			r, err := zip.OpenReader(filepath.Join(dir, f.Name()))
			if err != nil {
				continue // still being written
			}
			var names []string
			for _, e := range r.File {
				names = append(names, e.Name)
			}
			r.Close()
			sort.Strings(names)
			return names, nil
		}
	}
	return nil, fmt.Errorf("no ZIP downloaded into %s", dir)
}

// TestConsole_BulkWork: in a folder a person selects documents with the
// mouse (a click, then Shift+click for the range) and the keyboard
// (Space, Shift+Space), tags them and sets an attribute on them with
// progress, selects the whole folder and downloads it as one ZIP, moves
// some to another folder and sends one to the trash; a document under
// legal hold is named in the summary with the reason; in search results
// the same bar works on every result found. At phone size, in German, the
// bar and its forms pass axe-core.
func TestConsole_BulkWork(t *testing.T) {
	t.Parallel()
	src := axeFile()
	e := newEnv(t)
	e.user(t, "bea", "default", "temporary-1", true)
	e.must(t, "POST", "/attributes?siteId=default", map[string]any{"attribute": map[string]any{"key": "project", "dataType": "STRING"}}, http.StatusCreated)
	e.must(t, "POST", "/folders?siteId=default", map[string]any{"path": "archive"}, http.StatusCreated)
	ids := map[string]string{}
	for _, n := range []string{"n1", "n2", "n3", "n15", "n144"} {
		id := quiretest.Str(t, e.must(t, "POST", "/documents?siteId=default", map[string]any{"path": "bulk/" + n + ".txt", "content": "bulk quokka " + n, "contentType": "text/plain"}, http.StatusCreated), "documentId")
		ids[n] = id
	}
	e.must(t, "PUT", "/documents/"+ids["n144"]+"/legalHold?siteId=default", nil, http.StatusOK)
	tagOf := func(n string) string {
		out := e.must(t, "GET", "/documents/"+ids[n]+"/tags/batch?siteId=default", nil, http.StatusOK)
		v, _ := out["value"].(string)
		return v
	}
	dl := t.TempDir()

	b := newBrowser(t, "en-US")
	steps := []step{{"open the console", chromedp.Tasks{navigate(e.s.URL + "/console/"), downloadsTo(dl)}}}
	steps = append(steps, signIn("bea", password)...)
	steps = append(steps,
		step{"the folder", chromedp.Tasks{navigate(e.s.URL + "/console/#/browse/bulk"), textOf("#entries", "n144.txt"), wait(`document.querySelectorAll("#entries tr.doc").length === 5`)}},
		step{"click one, Shift+click another: the range is selected", chromedp.Tasks{click(box("n1.txt")), shiftClick(box("n3.txt")),
			textOf("#selected-count", "3 documents selected"),
			wait(`[...document.querySelectorAll("#entries input.select:checked")].map(b => b.closest("tr").dataset.name).join() === "n1.txt,n2.txt,n3.txt"`)}},
		step{"add a tag to the three", chromedp.Tasks{click("#bulk-tag"), visible("#bulk-tag-form"), axeAll(src, "bulk tag form"),
			setValue("#bulk-tag-key", "batch"), setValue("#bulk-tag-value", "may"),
			click("#bulk-tag-form button[type=submit]"), textOf("#bulk-progress", "Done: 3 documents."), wait(`document.querySelector("#bulk-progress progress").value === 3`)}},
		step{"the three are tagged, the others not", check(func() error {
			for _, n := range []string{"n1", "n2", "n3"} {
				if v := tagOf(n); v != "may" {
					return fmt.Errorf("%s: tag batch %q", n, v)
				}
			}
			if r := e.s.Do("GET", "/documents/"+ids["n15"]+"/tags/batch?siteId=default", nil, e.admin); r.Status != http.StatusNotFound {
				return fmt.Errorf("n15 tagged: %d %s", r.Status, r.Body)
			}
			return nil
		})},
		step{"set an attribute on them", chromedp.Tasks{click("#bulk-attr"), visible("#bulk-attr-form"),
			setValue("#bulk-attr-key", "project"), setValue("#bulk-attr-value", "apollo"), axeAll(src, "bulk attribute form"),
			click("#bulk-attr-form button[type=submit]"), textOf("#bulk-progress", "Done: 3 documents."), shot("bulk-attribute")}},
		step{"the attribute is set", check(func() error {
			out := e.must(t, "GET", "/documents/"+ids["n2"]+"/attributes/project?siteId=default", nil, http.StatusOK)
			if !strings.Contains(fmt.Sprint(out), "apollo") {
				return fmt.Errorf("n2 project: %v", out)
			}
			return nil
		})},
		step{"keyboard: Space and Shift+Space", chromedp.Tasks{click("#bulk-clear"), absent("#bulkbar:not([hidden])"),
			focus(box("n15.txt")), chromedp.KeyEvent(" "), textOf("#selected-count", "1 document selected"),
			focus(box("n3.txt")), chromedp.KeyEvent(" ", chromedp.KeyModifiers(input.ModifierShift)),
			wait(`document.querySelectorAll("#entries input.select:checked").length === 2`)}},
		step{"select the whole folder, download it as one ZIP", chromedp.Tasks{click("#select-folder"), textOf("#selected-count", "5 documents selected"),
			click("#bulk-zip"), textOf("#status", "The ZIP of 5 documents is downloading")}},
		step{"the ZIP holds the five", check(func() error {
			names, err := zipIn(dl)
			if err != nil {
				return err
			}
			if strings.Join(names, ",") != "bulk/n1.txt,bulk/n144.txt,bulk/n15.txt,bulk/n2.txt,bulk/n3.txt" {
				return fmt.Errorf("ZIP entries %v", names)
			}
			return nil
		})},
		step{"move two, one under legal hold: the summary names it and why", chromedp.Tasks{click("#bulk-clear"), click(box("n15.txt")), click(box("n144.txt")),
			click("#bulk-move"), visible("#bulk-move-form"), setValue("#bulk-move-to", "archive"),
			click("#bulk-move-form button[type=submit]"), textOf("#bulk-progress", "1 done; 1 failed:"),
			textOf("#bulk-progress .bulk-failures", "bulk/n144.txt: This document is on legal hold"), noRawText(), axeAll(src, "bulk summary with a failure"), shot("bulk-failed")}},
		step{"the one moved is gone from the folder; the held one stays selected", chromedp.Tasks{wait(`!document.querySelector('#entries tr[data-name="n15.txt"]')`),
			textOf("#selected-count", "1 document selected")}},
		step{"send one to the trash", chromedp.Tasks{click("#bulk-clear"), click(box("n3.txt")), click("#bulk-trash"), textOf("#bulk-progress", "Done: 1 document."),
			wait(`!document.querySelector('#entries tr[data-name="n3.txt"]')`)}},
		step{"search results: select every result, tag them", chromedp.Tasks{navigate(e.s.URL + "/console/#/search?q=quokka"), searchUntil("n2.txt"),
			textOf("#result-count", "4 results"), click("#select-results"), textOf("#selected-count", "4 documents selected"), axeAll(src, "search results selected"),
			shot("search-selected"),
			click("#bulk-tag"), setValue("#bulk-tag-key", "found"), click("#bulk-tag-form button[type=submit]"), textOf("#bulk-progress", "Done: 4 documents.")}},
		step{"phone, German: the bar and its forms", chromedp.Tasks{viewport(390, 844), setLangMenu("de"), navigate(e.s.URL + "/console/#/browse/bulk"),
			textOf("#entries", "n1.txt"), click(box("n1.txt")), textOf("#selected-count", "1 Dokument ausgewählt"), click("#bulk-move"),
			visible("#bulk-move-form"), noSideways("bulk move, phone"), axeAll(src, "bulk move form, phone, German"), shot("phone-bulk-move"),
			chromedp.KeyEvent(kb.Escape), viewport(1280, 900)}},
	)
	b.run(steps...)
	for n, want := range map[string]string{"n15": "archive/n15.txt", "n144": "bulk/n144.txt"} {
		d := e.must(t, "GET", "/documents/"+ids[n]+"?siteId=default", nil, http.StatusOK)
		if d["path"] != want {
			t.Errorf("%s is at %v, want %s", n, d["path"], want)
		}
	}
	if e.docID(t, "default", "bulk/n3.txt", true) == "" {
		t.Error("n3 is not in the trash")
	}
	if v := tagOf("n1"); v != "may" {
		t.Errorf("n1's batch tag: %q", v)
	}
	e.must(t, "GET", "/documents/"+ids["n2"]+"/tags/found?siteId=default", nil, http.StatusOK)
}

// setLangMenu picks a language on a phone, where the switch is in the menu.
func setLangMenu(l string) chromedp.Action {
	return chromedp.Tasks{click("#menu-toggle"), visible("#lang"), setLang(l)}
}

// TestConsole_BulkTagInBatches: the bulk bar tags a selection with one
// POST /documents/tags/batch per 200 documents (not a request per
// document), and a document the server left out (deleted meanwhile) is in
// the summary with its reason in plain words while the others are tagged.
func TestConsole_BulkTagInBatches(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.user(t, "bo", "default", "temporary-1", true)
	ids := map[string]string{}
	for _, n := range []string{"t1", "t2", "t3"} {
		ids[n] = quiretest.Str(t, e.must(t, "POST", "/documents?siteId=default", map[string]any{"path": "tagme/" + n + ".txt", "content": "x", "contentType": "text/plain"}, http.StatusCreated), "documentId")
	}
	batches := `performance.getEntriesByType("resource").filter(e => new URL(e.name).pathname === "/documents/tags/batch").length`
	single := `performance.getEntriesByType("resource").filter(e => /^\/documents\/[^/]+\/tags$/.test(new URL(e.name).pathname)).length`
	b := newBrowser(t, "en-US")
	steps := append([]step{{"open the console", navigate(e.s.URL + "/console/")}}, signIn("bo", password)...)
	steps = append(steps,
		step{"the folder", chromedp.Tasks{navigate(e.s.URL + "/console/#/browse/tagme"), wait(`document.querySelectorAll("#entries tr.doc").length === 3`)}},
		step{"select all three", chromedp.Tasks{click(box("t1.txt")), shiftClick(box("t3.txt")), textOf("#selected-count", "3 documents selected")}},
		step{"t2 is deleted meanwhile", check(func() error {
			if r := e.s.Do("DELETE", "/documents/"+ids["t2"]+"?siteId=default&softDelete=true", nil, e.admin); r.Status != http.StatusOK {
				return fmt.Errorf("delete t2: %d %s", r.Status, r.Body)
			}
			return nil
		})},
		step{"tag them: two done, t2 failed with a reason", chromedp.Tasks{click("#bulk-tag"), visible("#bulk-tag-form"),
			setValue("#bulk-tag-key", "sorted"), setValue("#bulk-tag-value", "yes"), click("#bulk-tag-form button[type=submit]"),
			textOf("#bulk-progress", "2 done; 1 failed:"),
			textOf("#bulk-progress .bulk-failures", "tagme/t2.txt: This is no longer there"), noRawText()}},
		step{"one batch request, no request per document", wait(batches + ` === 1 && ` + single + ` === 0`)},
		step{"t1 and t3 are tagged", check(func() error {
			for _, n := range []string{"t1", "t3"} {
				if r := e.s.Do("GET", "/documents/"+ids[n]+"/tags/sorted?siteId=default", nil, e.admin); r.Status != http.StatusOK {
					return fmt.Errorf("%s not tagged: %d %s", n, r.Status, r.Body)
				}
			}
			return nil
		})},
	)
	b.run(steps...)
}
