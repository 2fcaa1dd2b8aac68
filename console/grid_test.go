package console_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"quire/quiretest"
)

// names lists the folder table's entry names in order.
const names = `[...document.querySelectorAll("#entries tbody tr[data-name]")].map(r => r.dataset.name).join()`

// TestConsole_GridAndSort: a folder sorts by a column header, by mouse
// and by keyboard, names in natural order (n2 before n15 before n144),
// folders first; the sort stays in the address (a reload keeps it); the
// folder says how many entries it holds and "page X of Y"; the grid view
// shows an image as its own thumbnail and is remembered after a reload.
// In German at phone size the grid passes axe-core.
func TestConsole_GridAndSort(t *testing.T) {
	t.Parallel()
	src := axeFile()
	e := newEnv(t)
	e.user(t, "gia", "default", "temporary-1", true)
	e.must(t, "POST", "/folders?siteId=default", map[string]any{"path": "sort/zsub"}, http.StatusCreated)
	for i, n := range []string{"n144", "n2", "n15", "n1", "N3"} {
		e.must(t, "POST", "/documents?siteId=default", map[string]any{"path": "sort/" + n + ".txt", "content": strings.Repeat("x", (i+1)*100), "contentType": "text/plain"}, http.StatusCreated)
	}
	e.must(t, "POST", "/documents?siteId=default", map[string]any{"path": "sort/picture.png", "contentType": "image/png", "isBase64": true,
		"content": base64.StdEncoding.EncodeToString(quiretest.PNG(quiretest.TextImage("Hi")))}, http.StatusCreated)
	for i := 0; i < 55; i++ {
		e.must(t, "POST", "/documents?siteId=default", map[string]any{"path": fmt.Sprintf("many/item-%d.txt", i), "content": "x", "contentType": "text/plain"}, http.StatusCreated)
	}
	b := newBrowser(t, "en-US")
	steps := []step{{"open the console", navigate(e.s.URL + "/console/")}}
	steps = append(steps, signIn("gia", password)...)
	steps = append(steps,
		step{"natural order, folders first", chromedp.Tasks{navigate(e.s.URL + "/console/#/browse/sort"), textOf("#entry-count", "7 items"),
			wait(names + ` === "zsub,n1.txt,n2.txt,N3.txt,n15.txt,n144.txt,picture.png"`),
			wait(`document.querySelector('#entries th[aria-sort]').textContent.startsWith("Name")`), wait(`getComputedStyle(document.querySelector(".pager")).display === "none"`),
			axeAll(src, "sorted folder")}},
		step{"the name header sorts the other way", chromedp.Tasks{click(`#entries button.sort[data-sort="name"]`),
			wait(names + ` === "zsub,picture.png,n144.txt,n15.txt,N3.txt,n2.txt,n1.txt"`), wait(`document.querySelector('#entries th[aria-sort]').getAttribute("aria-sort") === "descending"`)}},
		step{"by size, with the keyboard", chromedp.Tasks{focus(`#entries button.sort[data-sort="size"]`), chromedp.KeyEvent(kb.Enter),
			wait(names + ` .startsWith("zsub,n144.txt,n2.txt,n15.txt,n1.txt,N3.txt")`), wait(`document.activeElement.dataset.sort === "size"`),
			wait(`location.hash === "#/browse/sort?sort=size"`)}},
		step{"a reload keeps the sort", chromedp.Tasks{chromedp.Reload(), textOf("#entry-count", "7 items"), wait(names + ` .startsWith("zsub,n144.txt,n2.txt")`)}},
		step{"page X of Y and the total", chromedp.Tasks{navigate(e.s.URL + "/console/#/browse/many"), textOf("#entry-count", "55 items"), textOf(".pager .page", "Page 1 of 2"),
			wait(`document.querySelectorAll("#entries tbody tr.doc").length === 50`), wait(names + ` .startsWith("item-0.txt,item-1.txt,item-2.txt")`),
			click(".pager button.next"), textOf(".pager .page", "Page 2 of 2"), wait(`document.querySelectorAll("#entries tbody tr.doc").length === 5`),
			wait(names + ` === "item-50.txt,item-51.txt,item-52.txt,item-53.txt,item-54.txt"`)}},
		// The sort folder is drawn before the view is switched: a click on
		// the previous folder's button, drawn still, was lost to the
		// redraw (the table came back and no grid ever showed).
		step{"the grid view: an image is its own thumbnail", chromedp.Tasks{navigate(e.s.URL + "/console/#/browse/sort"), textOf("#entry-count", "7 items"),
			click(`.views button[data-view="grid"]`),
			visible("#grid"), wait(`(() => { const i = document.querySelector('#grid li[data-name="picture.png"] img.thumb-img'); return !!i && i.complete && i.naturalWidth > 0; })()`),
			wait(`document.querySelector('.views button[data-view="grid"]').getAttribute("aria-pressed") === "true"`), axeAll(src, "grid"), shot("folder-grid-images")}},
		step{"the grid is remembered", chromedp.Tasks{chromedp.Reload(), visible("#grid"), absent("#entries")}},
		step{"German, phone: the grid", chromedp.Tasks{viewport(390, 844), setLangMenu("de"), navigate(e.s.URL + "/console/#/browse/many"), textOf("#entry-count", "55 Einträge"),
			textOf(".pager .page", "Seite 1 von 2"), noSideways("grid, phone"), axeAll(src, "grid, phone, German"), shot("phone-folder-grid"), viewport(1280, 900)}},
		step{"back to the table", chromedp.Tasks{click(`.views button[data-view="table"]`), visible("#entries")}},
	)
	b.run(steps...)
}
