package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// dropFiles drops files on the drop zone through a synthesized
// DataTransfer, as a drag from the desktop does.
const dropFiles = `(() => {
  const dt = new DataTransfer();
  dt.items.add(new File(["the quick zebra jumps over the fence"], "zebra.txt", {type: "text/plain"}));
  dt.items.add(new File([new Uint8Array(2 * 1024 * 1024)], "scan.bin", {type: "application/octet-stream"}));
  dt.items.add(new File(["meeting notes"], "notes.txt", {type: "text/plain"}));
  const z = document.getElementById("dropzone");
  z.dispatchEvent(new DragEvent("dragover", {dataTransfer: dt, bubbles: true, cancelable: true}));
  z.dispatchEvent(new DragEvent("drop", {dataTransfer: dt, bubbles: true, cancelable: true}));
  return true;
})()`

// docID finds a document's id by path through the API.
func (e *env) docID(t *testing.T, site, path string, deleted bool) string {
	t.Helper()
	q := "/documents?siteId=" + site + "&limit=100"
	if deleted {
		q += "&deleted=true"
	}
	out := e.must(t, "GET", q, nil, http.StatusOK)
	docs, _ := out["documents"].([]any)
	for _, d := range docs {
		m, _ := d.(map[string]any)
		if m["path"] == path {
			id, _ := m["documentId"].(string)
			return id
		}
	}
	return ""
}

// searchUntil submits the search until a result contains want (the
// index follows writes within moments), for up to 20 s.
func searchUntil(want string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		deadline := time.Now().Add(20 * time.Second)
		for {
			var found bool
			if err := chromedp.Evaluate(fmt.Sprintf(`[...document.querySelectorAll("#results ol.results a")].some(a => a.textContent.includes(%q))`, want), &found).Do(ctx); err != nil {
				return err
			}
			if found {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("no search result %q within 20 s", want)
			}
			if err := click("#search-form button").Do(ctx); err != nil {
				return err
			}
			if err := chromedp.Poll(`!!document.querySelector("#result-count")`, nil, chromedp.WithPollingTimeout(5*time.Second)).Do(ctx); err != nil {
				return err
			}
		}
	})
}

// TestConsole_StaffWork: a member of two sites switches site, drops
// three files and watches their progress bars and then the documents,
// finds a word of one by search (highlighted), opens it (text preview),
// sets a DATE attribute with the date picker, restores an earlier
// version, moves it to the trash and restores it from there, and purges
// another.
func TestConsole_StaffWork(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.must(t, "POST", "/sites", map[string]any{"site": map[string]any{"id": "finance"}}, http.StatusCreated)
	e.must(t, "POST", "/groups", map[string]any{"group": map[string]any{"name": "finance"}}, http.StatusOK)
	e.user(t, "sam", "default", "temporary-1", true)
	e.must(t, "POST", "/groups/finance/users", map[string]any{"user": map[string]any{"username": "sam"}}, http.StatusOK)
	e.must(t, "POST", "/documents?siteId=finance", map[string]any{"path": "ledger.txt", "content": "ledger", "contentType": "text/plain"}, http.StatusCreated)
	e.must(t, "POST", "/folders?siteId=default", map[string]any{"path": "inbox"}, http.StatusCreated)
	e.must(t, "POST", "/attributes?siteId=default", map[string]any{"attribute": map[string]any{"key": "dueDate", "dataType": "DATE"}}, http.StatusCreated)
	e.must(t, "POST", "/attributes?siteId=default", map[string]any{"attribute": map[string]any{"key": "dept", "dataType": "STRING"}}, http.StatusCreated)
	e.must(t, "PUT", "/sites/default/schema/document", map[string]any{"name": "office", "attributes": map[string]any{
		"optional": []map[string]any{{"attributeKey": "dept", "allowedValues": []string{"sales", "hr"}}}}}, http.StatusOK)

	b := newBrowser(t, "en-US")
	var uploadsSeen, progressBars int
	steps := append([]step{{"open the console", navigate(e.s.URL + "/console/")}}, signIn("sam", password)...)
	steps = append(steps,
		step{"switch to the finance site", chromedp.Tasks{setValue("#site", "finance"),
			js(`document.getElementById("site").dispatchEvent(new Event("change")), true`, nil)}},
		step{"the finance documents", textOf("#entries", "ledger.txt")},
		step{"switch back", chromedp.Tasks{setValue("#site", "default"),
			js(`document.getElementById("site").dispatchEvent(new Event("change")), true`, nil), textOf("#entries", "inbox")}},
		step{"open the inbox folder", chromedp.Tasks{click(`#entries a[href="#/browse/inbox"]`), textOf(".crumbs", "inbox"), textOf("#entries", "empty")}},
		step{"drop three files", js(dropFiles, nil)},
		step{"a progress bar per file", chromedp.Tasks{wait(`document.querySelectorAll("#uploads li progress").length === 3`),
			js(`document.querySelectorAll("#uploads li").length`, &uploadsSeen),
			js(`document.querySelectorAll("#uploads progress, #batch-progress").length`, &progressBars)}},
		step{"every file uploaded", wait(`document.querySelectorAll("#uploads li.ok").length === 3 && document.getElementById("batch-progress").value === 1`)},
		step{"the batch says so", textOf("#batch-text", "3 files uploaded")},
		step{"the documents are listed", chromedp.Tasks{textOf("#entries", "zebra.txt"), textOf("#entries", "notes.txt"), textOf("#entries", "scan.bin"), shot("folder-upload")}},
		step{"progress bars were shown", check(func() error {
			if uploadsSeen != 3 || progressBars != 4 {
				return fmt.Errorf("%d uploads, %d progress bars; want 3 and 4 (one per file and the batch)", uploadsSeen, progressBars)
			}
			return nil
		})},
		step{"search for a word of an uploaded file", chromedp.Tasks{click(`nav a[href="#/search"]`), visible("#q"),
			setValue("#q", "zebra"), click("#search-form button"), searchUntil("zebra.txt")}},
		step{"the word is highlighted in the snippet", chromedp.Tasks{textOf("#results .snippet mark", "zebra"), shot("search")}},
		step{"open the result", chromedp.Tasks{click("#results ol.results a"), textOf("#doc-title", "zebra.txt")}},
		step{"the text preview", textOf("#preview", "the quick zebra jumps")},
		step{"pick the DATE attribute: a date picker", chromedp.Tasks{setValue("#attr-key", "dueDate"),
			js(`document.getElementById("attr-key").dispatchEvent(new Event("change")), true`, nil),
			wait(`document.getElementById("attr-new").type === "date"`)}},
		step{"set a date", chromedp.Tasks{setValue("#attr-new", "2026-12-24"), click("#attr-form button[type=submit]")}},
		step{"the date is shown in its picker", chromedp.Tasks{shot("document"), wait(`(() => { const i = document.querySelector('tr[data-key="dueDate"] input'); return !!i && i.type === "date" && i.value === "2026-12-24"; })()`)}},
		step{"a STRING attribute with allowed values from the site schema: a list", chromedp.Tasks{setValue("#attr-key", "dept"),
			js(`document.getElementById("attr-key").dispatchEvent(new Event("change")), true`, nil),
			wait(`(() => { const s = document.getElementById("attr-new"); return s.tagName === "SELECT" && [...s.options].map(o => o.value).join() === "hr,sales"; })()`)}},
		step{"choose a value", chromedp.Tasks{setValue("#attr-new", "sales"), click("#attr-form button[type=submit]"),
			wait(`document.querySelector('tr[data-key="dept"] select').value === "sales"`)}},
	)
	b.run(steps...)
	id := e.docID(t, "default", "inbox/zebra.txt", false)
	if id == "" {
		t.Fatal("inbox/zebra.txt not found through the API")
	}
	attrs := e.must(t, "GET", "/documents/"+id+"/attributes?siteId=default", nil, http.StatusOK)
	if raw, _ := json.Marshal(attrs); !strings.Contains(string(raw), `"dateValue":"2026-12-24T00:00:00Z"`) {
		t.Fatalf("attributes after the date was set: %s", raw)
	}
	// A new version, made elsewhere; the console restores the first.
	e.must(t, "PATCH", "/documents/"+id+"?siteId=default", map[string]any{"content": "edited text", "contentType": "text/plain"}, http.StatusOK)
	b.run(
		step{"reload: the new content", chromedp.Tasks{chromedp.Reload(), textOf("#preview", "edited text")}},
		// The upload URL's empty first state is no version: the
		// uploaded content and the edit, no empty version to restore.
		step{"two versions", wait(`document.querySelectorAll("#versions tbody tr").length === 2`)},
		step{"restore the uploaded version", chromedp.Tasks{click("#versions tbody tr:nth-child(2) button.restore"), textOf("#status", "Version restored")}},
		step{"the earlier content is back", textOf("#preview", "the quick zebra jumps")},
	)
	content := e.must(t, "GET", "/documents/"+id+"/content?siteId=default", nil, http.StatusOK)
	if content["content"] != "the quick zebra jumps over the fence" {
		t.Fatalf("content after the restore: %v", content)
	}
	notes := e.docID(t, "default", "inbox/notes.txt", false)
	e.must(t, "DELETE", "/documents/"+notes+"?siteId=default&softDelete=true", nil, http.StatusOK)
	b.run(
		step{"move to the trash", chromedp.Tasks{click("#trash"), textOf(".crumbs", "inbox"), textOf("#status", "is in the trash")}},
		step{"gone from the folder", wait(`!document.getElementById("entries").textContent.includes("zebra.txt") && document.getElementById("entries").textContent.includes("scan.bin")`)},
		step{"the trash lists it", chromedp.Tasks{click(`nav a[href="#/trash"]`), textOf("#trash-list", "inbox/zebra.txt"), textOf("#trash-list", "inbox/notes.txt"), shot("trash")}},
		step{"restore it", chromedp.Tasks{click(fmt.Sprintf(`#trash-list tr[data-doc="%s"] button.restore`, id)), textOf("#status", "is restored"),
			wait(`!document.getElementById("trash-list").textContent.includes("zebra.txt")`)}},
		step{"purge the other", chromedp.Tasks{click(fmt.Sprintf(`#trash-list tr[data-doc="%s"] button.purge`, notes)), textOf("#status", "deleted for good"),
			textOf("#trash-list", "The trash is empty")}},
		step{"back in its folder", chromedp.Tasks{chromedp.Navigate(e.s.URL + "/console/#/browse/inbox"), textOf("#entries", "zebra.txt")}},
	)
	e.must(t, "GET", "/documents/"+id+"?siteId=default", nil, http.StatusOK)
	if e.docID(t, "default", "inbox/notes.txt", true) != "" {
		t.Fatal("the purged document is still in the trash")
	}
	e.must(t, "GET", "/documents/"+notes+"?siteId=default", nil, http.StatusNotFound)
}

// TestConsole_ReaderHasNoEditControls: a reader sees documents but no
// upload, folder, tag, attribute, version or trash control, and a write
// forced from the page with the reader's own token is refused by the API.
// An allowed value shows its label from the site's locale, as the edit
// control would.
func TestConsole_ReaderHasNoEditControls(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.user(t, "rita", "default_read", "temporary-1", true)
	e.must(t, "POST", "/attributes?siteId=default", map[string]any{"attribute": map[string]any{"key": "dueDate", "dataType": "DATE"}}, http.StatusCreated)
	out := e.must(t, "POST", "/documents?siteId=default", map[string]any{"path": "shared/policy.txt", "content": "the travel policy", "contentType": "text/plain",
		"tags": []map[string]any{{"key": "dept", "value": "hr"}}}, http.StatusCreated)
	id, _ := out["documentId"].(string)
	e.must(t, "PUT", "/documents/"+id+"/attributes/dueDate?siteId=default", map[string]any{"attribute": map[string]any{"stringValue": "2026-01-31"}}, http.StatusOK)
	e.must(t, "PATCH", "/documents/"+id+"?siteId=default", map[string]any{"content": "the travel policy, v2", "contentType": "text/plain"}, http.StatusOK)
	e.must(t, "POST", "/attributes?siteId=default", map[string]any{"attribute": map[string]any{"key": "state", "dataType": "STRING"}}, http.StatusCreated)
	e.must(t, "PUT", "/sites/default/schema/document", map[string]any{"name": "office", "attributes": map[string]any{
		"optional": []map[string]any{{"attributeKey": "state", "allowedValues": []string{"open", "closed"}}}}}, http.StatusOK)
	e.must(t, "POST", "/sites/default/locales", map[string]any{"locale": "en"}, http.StatusCreated)
	e.must(t, "POST", "/sites/default/locales/en/resourceItems", map[string]any{"resourceItem": map[string]any{"itemType": "SCHEMA", "attributeKey": "state",
		"allowedValue": "open", "localizedValue": "Open for work"}}, http.StatusOK)
	e.must(t, "PUT", "/documents/"+id+"/attributes/state?siteId=default", map[string]any{"attribute": map[string]any{"stringValue": "open"}}, http.StatusOK)

	b := newBrowser(t, "en-US")
	var forced string
	steps := append([]step{{"open the console", navigate(e.s.URL + "/console/")}}, signIn("rita", password)...)
	steps = append(steps,
		step{"the shared folder", chromedp.Tasks{chromedp.Navigate(e.s.URL + "/console/#/browse/shared"), textOf("#entries", "policy.txt")}},
		step{"no upload or new-folder control", chromedp.Tasks{absent("#dropzone"), absent("#file-input"), absent("#newfolder-form")}},
		step{"open the document", chromedp.Tasks{click(`#entries a[href^="#/doc/"]`), textOf("#doc-title", "policy.txt"), textOf("#preview", "v2")}},
		step{"tags, attributes and versions are shown", chromedp.Tasks{textOf("#tags", "dept = hr"), textOf("#attributes", "2026-01-31"),
			textOf(`#attributes tr[data-key="state"] td.value`, "Open for work"), shot("document-reader"), wait(`document.querySelectorAll("#versions tbody tr").length === 2`)}},
		step{"no edit control", chromedp.Tasks{absent("#tag-form"), absent("#attr-form"), absent("#attributes input"), absent("#attributes select"),
			absent("#tags button"), absent("#trash"), absent("#versions button.restore"), absent("#new-version"), absent("#rename"), absent("#move")}},
		step{"a reader may open and download any version", chromedp.Tasks{visible("#versions tbody tr:nth-child(2) button.open"),
			visible("#versions tbody tr:nth-child(2) button.download")}},
		step{"the download stays", visible("#download")},
		step{"a forced write from the page is refused", js(fmt.Sprintf(`import("/console/js/api.js").then(m => m.api("DELETE", "/documents/%s", {query: {siteId: "default", softDelete: "true"}}))
			.then(() => "allowed", (e) => String(e.status))`, id), &forced)},
		step{"refused with 401 or 403", check(func() error {
			if forced != "401" && forced != "403" {
				return fmt.Errorf("forced delete: %s", forced)
			}
			return nil
		})},
		step{"still signed in", textOf("#user", "rita")},
	)
	b.run(steps...)
	e.must(t, "GET", "/documents/"+id+"?siteId=default", nil, http.StatusOK)
}
