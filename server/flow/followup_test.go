package flow_test

import (
	"net/http"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// TestReviews_FollowUp: a review names the review it follows up (of the
// same document); that one is SUPERSEDED if open and names its one
// follow-up; bad references are refused.
func TestReviews_FollowUp(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			doc := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "fu/a.txt", "content": "x"})
			other := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "fu/b.txt", "content": "y"})
			base := "/documents/" + doc + "/reviews"
			first := servertest.AddReview(t, s, tok, base+site.Query, map[string]any{"reviewCategory": "legal", "requiredDecisions": 2})
			second := servertest.AddReview(t, s, tok, base+site.Query, map[string]any{"reviewCategory": "legal", "requiredDecisions": 1, "followsUpReviewId": first})
			servertest.RunSteps(t, s, tok, site.Query, []servertest.Step{
				{Name: "followed is superseded", Method: "GET", Path: base + "/" + first, Body: nil, Want: 200, Resp: `~"followUpReviewId":"` + second + `"`},
				{Name: "followed status", Method: "GET", Path: base + "/" + first, Body: nil, Want: 200, Resp: `~"reviewStatus":"SUPERSEDED"`},
				{Name: "follow-up names it", Method: "GET", Path: base + "/" + second, Body: nil, Want: 200, Resp: `~"followsUpReviewId":"` + first + `"`},
				{Name: "no decision on the followed", Method: "POST", Path: base + "/" + first + "/decisions", Body: map[string]any{"decision": map[string]any{"type": "APPROVAL"}}, Want: 409, Resp: `{"message":"Review '` + first + `' is SUPERSEDED"}`},
				{Name: "one follow-up only", Method: "POST", Path: base, Body: map[string]any{"review": map[string]any{"reviewCategory": "legal", "requiredDecisions": 1, "followsUpReviewId": first}}, Want: 409,
					Resp: `{"message":"Review '` + first + `' already has a follow-up review '` + second + `'"}`},
				{Name: "unknown review", Method: "POST", Path: base, Body: map[string]any{"review": map[string]any{"reviewCategory": "legal", "requiredDecisions": 1, "followsUpReviewId": "nope"}}, Want: 400,
					Resp: `{"errors":[{"key":"followsUpReviewId","error":"'followsUpReviewId' does not exist"}]}`},
				{Name: "another document's review", Method: "POST", Path: "/documents/" + other + "/reviews", Body: map[string]any{"review": map[string]any{"reviewCategory": "legal", "requiredDecisions": 1, "followsUpReviewId": second}}, Want: 400,
					Resp: `{"errors":[{"key":"followsUpReviewId","error":"'followsUpReviewId' does not exist"}]}`},
				{Name: "decide the follow-up", Method: "POST", Path: base + "/" + second + "/decisions", Body: map[string]any{"decision": map[string]any{"type": "APPROVAL"}}, Want: 201, Resp: ""},
			})
			// A follow-up of a COMPLETED review leaves its status.
			third := servertest.AddReview(t, s, tok, base+site.Query, map[string]any{"reviewCategory": "legal", "requiredDecisions": 1, "followsUpReviewId": second})
			servertest.RunSteps(t, s, tok, site.Query, []servertest.Step{
				{Name: "completed stays", Method: "GET", Path: base + "/" + second, Body: nil, Want: 200, Resp: `~"reviewStatus":"COMPLETED"`},
				{Name: "linked", Method: "GET", Path: base + "/" + second, Body: nil, Want: 200, Resp: `~"followUpReviewId":"` + third + `"`},
			})
		})
	}
}

// TestReviews_InAppNotifications: a review's IN_APP blocks reach their
// addressees' /userNotifications at once (and nobody else's); a block
// without addressees is refused.
func TestReviews_InAppNotifications(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			name := siteNameOf(site.Query)
			doc := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "inapp/" + name + ".txt", "content": "x"})
			subject := "Please review " + name
			servertest.AddReview(t, s, tok, "/documents/"+doc+"/reviews"+site.Query, map[string]any{"reviewCategory": "c", "requiredDecisions": 1,
				"notifications": []map[string]any{{"notificationType": "IN_APP", "cc": []string{"Ann@Example.com"}, "bcc": []string{"carl@example.com"}, "subject": subject, "body": "Due Friday"}}})
			for _, c := range []struct {
				who  string
				tok  string
				want bool
			}{
				{"cc", s.TokenWithClaims("ann", map[string]any{"custom:email": "ann@example.com"}, name), true},
				{"bcc", s.TokenWithClaims("carl", map[string]any{"custom:email": "carl@example.com"}, name+"_read"), true},
				{"someone else", s.TokenWithClaims("bob", map[string]any{"custom:email": "bob@example.com"}, name), false},
			} {
				r := s.Do(http.MethodGet, "/userNotifications"+site.Query, nil, c.tok)
				servertest.MustStatus(t, r, http.StatusOK)
				got := strings.Contains(string(r.Body), subject)
				if got != c.want {
					t.Fatalf("%s: notified %v, want %v: %s", c.who, got, c.want, r.Body)
				}
				if c.want {
					n := quiretest.Item(t, r.JSON(t), "notifications", 0)
					if n["notificationType"] != "IN_APP" || n["body"] != "Due Friday" || n["documentId"] != doc || n["status"] != "ACTION_CREATED" {
						t.Fatalf("%s: notification %v", c.who, n)
					}
				}
			}
			// Another site's token sees nothing of it.
			r := s.Do(http.MethodGet, "/userNotifications?siteId="+otherSite(name), nil, s.TokenWithClaims("ann", map[string]any{"custom:email": "ann@example.com"}, otherSite(name)))
			if strings.Contains(string(r.Body), subject) {
				t.Fatalf("another site shows it: %s", r.Body)
			}
			servertest.RunSteps(t, s, tok, site.Query, []servertest.Step{
				{Name: "on the document", Method: "GET", Path: "/documents/" + doc + "/notifications", Body: nil, Want: 200, Resp: `~"notificationType":"IN_APP"`},
				{Name: "no addressee", Method: "POST", Path: "/documents/" + doc + "/reviews", Body: map[string]any{"review": map[string]any{"reviewCategory": "c", "requiredDecisions": 1,
					"notifications": []map[string]any{{"notificationType": "IN_APP", "subject": "s", "body": "b"}}}}, Want: 400,
					Resp: `{"errors":[{"key":"notifications[0].cc","error":"an IN_APP notification needs 'cc' or 'bcc'"}]}`},
			})
		})
	}
}
