package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"sort"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// consoleBench measures the web console through headless Chromium (issue
// 31), never asserted anywhere: the first load of the sign-in page with an
// empty cache, opening a folder of 10,000 documents (one page of 50), and
// search as you type (the time from the last key to the result count).
// Each is a median of a few rounds beside the same work asked of the API
// directly from Go (the floor the browser adds to).
func (s *session) consoleBench(ctx context.Context, srv *server) error {
	exe, err := exec.LookPath("chromium")
	if err != nil {
		s.rep.note("console: skipped, no chromium on PATH (make deps installs it)")
		return nil
	}
	const docs, per, rounds = 10000, 101, 5
	s.logf("console: %d documents in one folder", docs)
	for i := 0; i < docs; i += per {
		var children []map[string]any
		for j := i + 1; j < i+per && j < docs; j++ {
			children = append(children, map[string]any{"path": fmt.Sprintf("big/d%05d.txt", j), "contentType": "text/plain", "content": fmt.Sprintf("ledger entry %d", j)})
		}
		if err := srv.doJSON(ctx, http.MethodPost, "/documents", map[string]any{"path": fmt.Sprintf("big/d%05d.txt", i), "contentType": "text/plain",
			"content": fmt.Sprintf("ledger entry %d", i), "documents": children}, http.StatusCreated, nil); err != nil {
			return err
		}
	}
	if err := srv.doJSON(ctx, http.MethodPost, "/documents", map[string]any{"path": "notes/zeppelin.txt", "contentType": "text/plain", "content": "the zeppelin hangar lease"}, http.StatusCreated, nil); err != nil {
		return err
	}
	if _, err := srv.waitIndexed(ctx, 10*time.Minute); err != nil {
		return err
	}
	// A directory user with a password, as a person signs in.
	const user, pw = "bench-staff", "bench-password-9"
	// The group may exist already (a full run): joining it below is
	// what must work.
	_ = srv.doJSON(ctx, http.MethodPost, "/groups", map[string]any{"group": map[string]any{"name": "default"}}, http.StatusOK, nil)
	if err := srv.doJSON(ctx, http.MethodPost, "/users", map[string]any{"user": map[string]any{"username": user}, "temporaryPassword": "temporary-1"}, http.StatusOK, nil); err != nil {
		return err
	}
	if err := srv.doJSON(ctx, http.MethodPost, "/groups/default/users", map[string]any{"user": map[string]any{"username": user}}, http.StatusOK, nil); err != nil {
		return err
	}
	var ch struct{ Session string }
	if err := srv.doJSON(ctx, http.MethodPost, "/login", map[string]any{"username": user, "password": "temporary-1"}, http.StatusOK, &ch); err != nil {
		return err
	}
	if err := srv.doJSON(ctx, http.MethodPost, "/respondToAuthChallenge", map[string]any{"session": ch.Session, "username": user, "newPassword": pw}, http.StatusOK, nil); err != nil {
		return err
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.Headless,
		chromedp.DisableGPU, chromedp.WindowSize(1280, 900), chromedp.Flag("lang", "en-US"))
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	bctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	poll := func(cond string) chromedp.Action {
		return chromedp.Poll("(() => { try { return !!("+cond+"); } catch (e) { return false; } })()", nil,
			chromedp.WithPollingTimeout(60*time.Second), chromedp.WithPollingInterval(5*time.Millisecond))
	}
	run := func(a ...chromedp.Action) (time.Duration, error) {
		t0 := time.Now()
		err := chromedp.Run(bctx, a...)
		return time.Since(t0), err
	}
	median := func(ds []time.Duration) time.Duration {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return ds[len(ds)/2]
	}
	api := func(method, path string, body any) (time.Duration, error) {
		t0 := time.Now()
		var out json.RawMessage
		err := srv.doJSON(ctx, method, path, body, http.StatusOK, &out)
		return time.Since(t0), err
	}
	var load, loadBase, folder, folderBase, typing, typingBase []time.Duration
	for r := 0; r < rounds; r++ {
		// First load: a fresh tab on the sign-in page with the HTTP cache
		// off; the baseline fetches the smallest file of the console.
		if _, err := run(chromedp.Navigate("about:blank")); err != nil {
			return err
		}
		d, err := run(disableCache(), chromedp.Navigate(srv.base+"/console/"), poll(`document.getElementById("login")`))
		if err != nil {
			return fmt.Errorf("console first load: %w", err)
		}
		load = append(load, d)
		if d, err = run(chromedp.Navigate(srv.base + "/console/favicon.svg")); err != nil {
			return err
		}
		loadBase = append(loadBase, d)
	}
	if _, err := run(chromedp.Navigate(srv.base+"/console/"), poll(`document.getElementById("login")`),
		chromedp.SetValue("#username", user, chromedp.ByQuery), chromedp.SetValue("#password", pw, chromedp.ByQuery),
		chromedp.Click("#login button[type=submit]", chromedp.ByQuery), poll(`document.getElementById("user").textContent === "`+user+`"`)); err != nil {
		return fmt.Errorf("console sign-in: %w", err)
	}
	for r := 0; r < rounds; r++ {
		d, err := run(chromedp.Evaluate(`location.hash = "#/browse/big"`, nil),
			poll(`document.querySelectorAll("#entries tbody tr.doc").length === 50`))
		if err != nil {
			return fmt.Errorf("console folder: %w", err)
		}
		folder = append(folder, d)
		if d, err = api(http.MethodGet, "/folders?path=big&limit=50", nil); err != nil {
			return err
		}
		folderBase = append(folderBase, d)
		if _, err := run(chromedp.Evaluate(`location.hash = "#/browse"`, nil), poll(`!!document.querySelector("#entries a[href='#/browse/big']")`)); err != nil {
			return err
		}

		if _, err := run(chromedp.Evaluate(`location.hash = "#/search"`, nil), poll(`!!document.getElementById("q")`)); err != nil {
			return err
		}
		word := "zeppelin"
		if d, err = run(chromedp.Evaluate(fmt.Sprintf(`(() => { const b = document.getElementById("q"); b.value = %q;
			b.dispatchEvent(new Event("input", {bubbles: true})); return true; })()`, word), nil),
			poll(`(document.getElementById("result-count") || {}).textContent === "1 result"`)); err != nil {
			return fmt.Errorf("console search: %w", err)
		}
		typing = append(typing, d)
		if d, err = api(http.MethodPost, "/queryFulltext", map[string]any{"query": map[string]any{"match": map[string]any{"_all": word}}, "size": 20}); err != nil {
			return err
		}
		typingBase = append(typingBase, d)
		if _, err := run(chromedp.Evaluate(`location.hash = "#/browse"`, nil), poll(`!document.getElementById("q")`)); err != nil {
			return err
		}
	}
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
	add := func(name string, q, b []time.Duration) {
		mq, mb := median(q), median(b)
		s.rep.rows = append(s.rep.rows, row{name: name, quire: ms(mq), baseline: ms(mb),
			ratio: fmt.Sprintf("%.1f", float64(mq)/float64(max(mb, time.Microsecond))), target: "-", status: "info"})
	}
	add("console: first load to the sign-in form (cache off), median", load, loadBase)
	add(fmt.Sprintf("console: open a folder of %d documents (first page of 50), median", docs), folder, folderBase)
	add("console: search as you type, last key to results (250 ms typing pause included), median", typing, typingBase)
	s.rep.note("console (Chromium): baselines are the console's favicon in the same tab, GET /folders?limit=50 and POST /queryFulltext from Go; %d rounds each", rounds)
	return nil
}

// disableCache turns the tab's HTTP cache off: every load is a first load.
func disableCache() chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		return network.SetCacheDisabled(true).Do(ctx)
	})
}
