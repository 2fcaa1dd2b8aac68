package console_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"quire/quiretest"
)

// TestConsole_ActionsAndActivity: the document page shows the
// pipeline's actions with their status, a failed one is retried from
// the page, and the activity trail lists the document's changes.
func TestConsole_ActionsAndActivity(t *testing.T) {
	t.Parallel()
	e := newEnv(t, quiretest.AllowLoopbackOutbound, func(c *quiretest.Config) { c.Pipeline.RetryBase = 20 * time.Millisecond })
	e.user(t, "ali", "default", "temporary-1", true)
	out := e.must(t, "POST", "/documents?siteId=default", map[string]any{"path": "hooks/order.txt", "content": "order 42", "contentType": "text/plain"}, http.StatusCreated)
	id, _ := out["documentId"].(string)
	e.must(t, "POST", "/documents/"+id+"/tags?siteId=default", map[string]any{"tags": []map[string]any{{"key": "state", "value": "new"}}}, http.StatusCreated)
	// A webhook to a closed loopback port fails every try.
	e.must(t, "POST", "/documents/"+id+"/actions?siteId=default", map[string]any{"actions": []map[string]any{
		{"type": "WEBHOOK", "parameters": map[string]any{"url": "http://127.0.0.1:1/hook"}}}}, http.StatusOK)
	failed := func() error {
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			a := e.must(t, "GET", "/documents/"+id+"/actions?siteId=default", nil, http.StatusOK)
			if s := fmt.Sprint(a["actions"]); strings.Contains(s, "status:FAILED") || strings.Contains(s, "MAX_RETRIES_REACHED") {
				return nil
			}
		}
		return fmt.Errorf("the webhook action never failed")
	}
	if err := failed(); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, "en-US")
	steps := append([]step{{"open the console", navigate(e.s.URL + "/console/")}}, signIn("ali", password)...)
	steps = append(steps,
		step{"the document's actions", chromedp.Tasks{chromedp.Navigate(e.s.URL + "/console/#/doc/" + id), textOf("#actions", "Webhook"),
			wait(`!!document.querySelector('#actions tr[data-status="FAILED"], #actions tr[data-status="MAX_RETRIES_REACHED"]')`)}},
		step{"the activity trail", chromedp.Tasks{textOf("#activity", "admin · changed (tags)"), textOf("#activity", "admin · created")}},
		step{"retry the failed action", chromedp.Tasks{click("#retry-actions"), textOf("#status", "run again"),
			wait(`!!document.querySelector('#actions tr[data-status="FAILED_RETRY"]')`)}},
	)
	b.run(steps...)
}
