package console_test

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"quire/quiretest"
)

// TestConsole_DroppedScanFoundOnItsPage: a member drops a two-page scan
// (image-only PDF, nothing asked of it) on the console; the server's
// default processing reads it (OCR, FULLTEXT: API.md "Default
// processing"), and the search page finds it by a word printed on its
// second page and says so: "found on page 2" (the hit's matchedPages).
func TestConsole_DroppedScanFoundOnItsPage(t *testing.T) {
	t.Parallel()
	e := ocrEnv(t)
	e.user(t, "sam", "default", "temporary-1", true)
	scan := scanPDF(t, quiretest.TextImage("Dear Mr Becker,", "thank you for your letter"), quiretest.TextImage("Your Zebracorn invoice", "for Mr Becker, number 4711"))
	b := newBrowser(t, "en-US")
	steps := append([]step{{"open the console", navigate(e.s.URL + "/console/")}}, signIn("sam", password)...)
	steps = append(steps,
		step{"drop the scan", chromedp.Tasks{navigate(e.s.URL + "/console/#/browse"), dropOn(droppedFile{"letter.pdf", "application/pdf", scan})}},
		step{"it is uploaded", wait(`document.querySelectorAll("#uploads li.ok").length === 1`)},
		step{"the server reads it by itself (asked of the API)", e.processedByDefault(t, "letter.pdf")},
		step{"search a word of its second page", chromedp.Tasks{navigate(e.s.URL + "/console/#/search?q=zebracorn"), searchUntil("letter.pdf")}},
		step{"the hit says on which page", chromedp.Tasks{textOf("#results li .pages", "found on page 2"), shot("search-scan-page")}},
		step{"a word of both pages", chromedp.Tasks{navigate(e.s.URL + "/console/#/search?q=becker"), searchUntil("letter.pdf"),
			textOf("#results li .pages", "found on pages 1, 2")}},
	)
	b.run(steps...)
}

// droppedFile is a file a person drops on the console.
type droppedFile struct {
	name, ctype string
	content     []byte
}

// dropOn drops files on the browse page's drop zone, as a person drags
// them there from a file manager.
func dropOn(files ...droppedFile) chromedp.Action {
	var add strings.Builder
	for _, f := range files {
		fmt.Fprintf(&add, "  add(%q, %q, %q);\n", base64.StdEncoding.EncodeToString(f.content), f.name, f.ctype)
	}
	return chromedp.Tasks{visible("#dropzone"), js(`(() => {
  const dt = new DataTransfer();
  const add = (b64, name, type) => {
    const bin = atob(b64);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    dt.items.add(new File([bytes], name, {type}));
  };
`+add.String()+`  const z = document.getElementById("dropzone");
  z.dispatchEvent(new DragEvent("dragover", {dataTransfer: dt, bubbles: true, cancelable: true}));
  z.dispatchEvent(new DragEvent("drop", {dataTransfer: dt, bubbles: true, cancelable: true}));
  return true;
})()`, nil)}
}

// processedByDefault waits (up to 3 minutes: OCR on a loaded machine is
// slow) until the document at path of the default site, created without
// actions, has had its default processing, OCR then FULLTEXT, completed.
func (e *env) processedByDefault(t *testing.T, path string) chromedp.Action {
	return check(func() error {
		id := e.docID(t, "default", path, false)
		if id == "" {
			return fmt.Errorf("%s is not listed", path)
		}
		for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
			r := e.s.Do("GET", "/documents/"+id+"/actions?siteId=default", nil, e.admin)
			var types, done []string
			for _, a := range quiretest.List(t, r.JSON(t), "actions") {
				m := quiretest.Obj(t, a)
				types = append(types, fmt.Sprint(m["type"]))
				if m["status"] == "COMPLETE" {
					done = append(done, fmt.Sprint(m["type"]))
				}
			}
			if fmt.Sprint(done) == "[OCR FULLTEXT]" {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s's actions %v did not complete within 3 minutes: %s", path, types, r.Body)
			}
		}
	})
}
