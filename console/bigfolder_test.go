package console_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"quire/storage"
)

// addMany creates n documents big/dNNNNN.txt (no content) through the
// storage layer, 101 to a command, as the API's bulk create does: the
// test is about the console, not the creation.
func (e *env) addMany(t *testing.T, n int) {
	t.Helper()
	const per = 101 // a parent and the 100 children one command may hold
	var wg sync.WaitGroup
	errs := make(chan error, n/per+1)
	sem := make(chan struct{}, 8) // concurrent commands share the disk's syncs
	for i := 0; i < n; i += per {
		var docs []storage.NewDocument
		for j := i; j < i+per && j < n; j++ {
			docs = append(docs, storage.NewDocument{Document: storage.Document{DocumentID: uuid.NewString(), Path: fmt.Sprintf("big/d%05d.txt", j),
				ContentType: "text/plain", UserID: "admin"}})
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			cmd := storage.MustCommand(storage.OpAddDocuments, "default", "admin", time.Now().UTC(), storage.AddDocuments{Docs: docs})
			if _, err := e.s.Node.DB.Apply(context.Background(), cmd); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("add documents: %v", err)
	}
}

// TestConsole_BigFolder: a folder of 2,000 documents (40 pages) opens with
// one page of 50 rows in the chosen order, with the API's total ("page X
// of Y") and sort (GET /folders sort, sortBy, totalCount); paging forward
// and back stays one page of DOM; the console asks only for the pages it
// shows;
// each page shows within the step's deadline (logged, not asserted beyond
// it). make bench's console rows time a folder of 10,000; here the count
// only has to be many pages (10,000 took a minute of make test to create).
const bigFolder = 2000

// folderFetches counts the page's requests for GET /folders?path=big.
const folderFetches = `performance.getEntriesByType("resource").filter(e => { const u = new URL(e.name); return u.pathname === "/folders" && u.searchParams.get("path") === "big"; }).length`

func TestConsole_BigFolder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.user(t, "bo", "default", "temporary-1", true)
	start := time.Now()
	e.addMany(t, bigFolder)
	t.Logf("%d documents created in %s", bigFolder, time.Since(start).Round(time.Millisecond))
	b := newBrowser(t, "en-US")
	var opened, paged time.Duration
	timed := func(d *time.Duration, a chromedp.Action) chromedp.Action {
		return chromedp.ActionFunc(func(ctx context.Context) error {
			t0 := time.Now()
			err := a.Do(ctx)
			*d = time.Since(t0)
			return err
		})
	}
	rows := `document.querySelectorAll("#entries tbody tr.doc").length`
	steps := append([]step{{"open the console", navigate(e.s.URL + "/console/")}}, signIn("bo", password)...)
	steps = append(steps,
		step{"the folders", chromedp.Tasks{navigate(e.s.URL + "/console/#/browse"), visible(`#entries a[href="#/browse/big"]`)}},
		step{"open the big folder", timed(&opened, chromedp.Tasks{click(`#entries a[href="#/browse/big"]`), textOf("#entries", "d00000.txt")})},
		step{"one page of 50 rows", wait(rows + ` === 50 && document.querySelector(".pager .page").textContent.startsWith("Page 1")`)},
		step{"a total and page X of Y, from the first page", chromedp.Tasks{textOf("#entry-count", "2,000 items"), textOf(".pager .page", "Page 1 of 40"), wait(rows + ` === 50`),
			wait(folderFetches + ` === 1`)}},
		step{"next page", timed(&paged, chromedp.Tasks{click(".pager button.next"), textOf("#entries", "d00050.txt"), wait(rows + ` === 50`)})},
		step{"page 2, and back to page 1", chromedp.Tasks{textOf(".pager .page", "Page 2 of 40"), click(".pager button.prev"), textOf("#entries", "d00000.txt"),
			textOf(".pager .page", "Page 1 of 40"), wait(rows + ` === 50`)}},
		step{"the last page, sorted the other way: the first", chromedp.Tasks{click(`#entries button.sort[data-sort="name"]`), textOf("#entries", "d01999.txt"),
			wait(`document.querySelector("#entries tbody tr.doc").dataset.name === "d01999.txt"`), textOf(".pager .page", "Page 1 of 40"),
			wait(`location.hash === "#/browse/big?dir=desc"`)}},
		step{"its next page continues the order", chromedp.Tasks{click(".pager button.next"), textOf(".pager .page", "Page 2 of 40"),
			wait(`document.querySelector("#entries tbody tr.doc").dataset.name === "d01949.txt"`), wait(rows + ` === 50`), wait(folderFetches + ` === 5`)}},
	)
	b.run(steps...)
	t.Logf("folder of %d: opened in %s, next page in %s", bigFolder, opened.Round(time.Millisecond), paged.Round(time.Millisecond))
}
