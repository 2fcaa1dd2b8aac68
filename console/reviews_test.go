package console_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestConsole_ReviewsInbox: a member of a review's approval group finds
// it in the inbox and approves it with a comment; a staff member outside
// the group does not see it, and a decision forced from the page is
// refused by the API.
func TestConsole_ReviewsInbox(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.must(t, "POST", "/groups", map[string]any{"group": map[string]any{"name": "legal"}}, http.StatusOK)
	e.user(t, "lena", "default", "temporary-1", true)
	e.must(t, "POST", "/groups/legal/users", map[string]any{"user": map[string]any{"username": "lena"}}, http.StatusOK)
	e.user(t, "otto", "default", "temporary-1", true)
	out := e.must(t, "POST", "/documents?siteId=default", map[string]any{"path": "contracts/lease.txt", "content": "the lease", "contentType": "text/plain"}, http.StatusCreated)
	doc, _ := out["documentId"].(string)
	out = e.must(t, "POST", "/documents/"+doc+"/reviews?siteId=default", map[string]any{"review": map[string]any{"reviewCategory": "Legal check",
		"requiredDecisions": 1, "approvalGroups": []string{"legal"}, "comments": "Please check clause 4"}}, http.StatusCreated)
	review, _ := out["reviewId"].(string)

	// Otto, outside the approval group.
	b := newBrowser(t, "en-US")
	var forced string
	steps := append([]step{{"open the console", navigate(e.s.URL + "/console/")}}, signIn("otto", password)...)
	steps = append(steps,
		step{"the inbox is empty for a non-member", chromedp.Tasks{click(`nav a[href="#/reviews"]`), textOf("#review-list", "No review awaits")}},
		step{"a decision forced from the page", js(fmt.Sprintf(`import("/console/js/api.js").then(m => m.api("POST", "/documents/%s/reviews/%s/decisions",
			{query: {siteId: "default"}, body: {decision: {type: "APPROVAL", decision: "APPROVED"}}})).then(() => "allowed", (e) => String(e.status) + " " + e.message)`, doc, review), &forced)},
		step{"is refused", check(func() error {
			if !strings.HasPrefix(forced, "401") || !strings.Contains(forced, "approval group") {
				return fmt.Errorf("forced decision: %s", forced)
			}
			return nil
		})},
	)
	b.run(steps...)

	// Lena, in the group.
	b = newBrowser(t, "en-US")
	steps = append([]step{{"open the console", navigate(e.s.URL + "/console/")}}, signIn("lena", password)...)
	steps = append(steps,
		step{"the review is in her inbox", chromedp.Tasks{click(`nav a[href="#/reviews"]`), textOf("#review-list", "contracts/lease.txt"),
			textOf("#review-list", "Please check clause 4"), shot("reviews")}},
		step{"approve with a comment", chromedp.Tasks{setValue("#review-list textarea", "Clause 4 is fine"), click("#review-list button.approve")}},
		step{"confirmed, and the inbox is empty", chromedp.Tasks{textOf("#status", "You approved contracts/lease.txt"), textOf("#review-list", "No review awaits")}},
	)
	b.run(steps...)
	r := e.must(t, "GET", "/documents/"+doc+"/reviews/"+review+"?siteId=default", nil, http.StatusOK)
	if rv, _ := r["review"].(map[string]any); rv["reviewStatus"] != "COMPLETED" {
		t.Errorf("review after the approval: %v", r)
	}
	d := e.must(t, "GET", "/documents/"+doc+"/reviews/"+review+"/decisions?siteId=default", nil, http.StatusOK)
	if s := fmt.Sprint(d); !strings.Contains(s, "Clause 4 is fine") || !strings.Contains(s, "APPROVED") || !strings.Contains(s, "lena") {
		t.Errorf("decisions: %s", s)
	}
}
