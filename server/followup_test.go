package server_test

import (
	"net/http"
	"strings"
	"testing"

	"quire/quiretest"
)

// TestReviews_FollowUp: a review names the review it follows up (of the
// same document); that one is SUPERSEDED if open and names its one
// follow-up; bad references are refused.
func TestReviews_FollowUp(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range Sites {
		t.Run(site.Name, func(t *testing.T) {
			doc := AddDoc(t, s, tok, site.Query, map[string]any{"path": "fu/a.txt", "content": "x"})
			other := AddDoc(t, s, tok, site.Query, map[string]any{"path": "fu/b.txt", "content": "y"})
			base := "/documents/" + doc + "/reviews"
			first := AddReview(t, s, tok, base+site.Query, map[string]any{"reviewCategory": "legal", "requiredDecisions": 2})
			second := AddReview(t, s, tok, base+site.Query, map[string]any{"reviewCategory": "legal", "requiredDecisions": 1, "followsUpReviewId": first})
			RunSteps(t, s, tok, site.Query, []Step{
				{"followed is superseded", "GET", base + "/" + first, nil, 200, `~"followUpReviewId":"` + second + `"`},
				{"followed status", "GET", base + "/" + first, nil, 200, `~"reviewStatus":"SUPERSEDED"`},
				{"follow-up names it", "GET", base + "/" + second, nil, 200, `~"followsUpReviewId":"` + first + `"`},
				{"no decision on the followed", "POST", base + "/" + first + "/decisions", map[string]any{"decision": map[string]any{"type": "APPROVAL"}}, 409, `{"message":"Review '` + first + `' is SUPERSEDED"}`},
				{"one follow-up only", "POST", base, map[string]any{"review": map[string]any{"reviewCategory": "legal", "requiredDecisions": 1, "followsUpReviewId": first}}, 409,
					`{"message":"Review '` + first + `' already has a follow-up review '` + second + `'"}`},
				{"unknown review", "POST", base, map[string]any{"review": map[string]any{"reviewCategory": "legal", "requiredDecisions": 1, "followsUpReviewId": "nope"}}, 400,
					`{"errors":[{"key":"followsUpReviewId","error":"'followsUpReviewId' does not exist"}]}`},
				{"another document's review", "POST", "/documents/" + other + "/reviews", map[string]any{"review": map[string]any{"reviewCategory": "legal", "requiredDecisions": 1, "followsUpReviewId": second}}, 400,
					`{"errors":[{"key":"followsUpReviewId","error":"'followsUpReviewId' does not exist"}]}`},
				{"decide the follow-up", "POST", base + "/" + second + "/decisions", map[string]any{"decision": map[string]any{"type": "APPROVAL"}}, 201, ""},
			})
			// A follow-up of a COMPLETED review leaves its status.
			third := AddReview(t, s, tok, base+site.Query, map[string]any{"reviewCategory": "legal", "requiredDecisions": 1, "followsUpReviewId": second})
			RunSteps(t, s, tok, site.Query, []Step{
				{"completed stays", "GET", base + "/" + second, nil, 200, `~"reviewStatus":"COMPLETED"`},
				{"linked", "GET", base + "/" + second, nil, 200, `~"followUpReviewId":"` + third + `"`},
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
	for _, site := range Sites {
		t.Run(site.Name, func(t *testing.T) {
			name := siteNameOf(site.Query)
			doc := AddDoc(t, s, tok, site.Query, map[string]any{"path": "inapp/" + name + ".txt", "content": "x"})
			subject := "Please review " + name
			AddReview(t, s, tok, "/documents/"+doc+"/reviews"+site.Query, map[string]any{"reviewCategory": "c", "requiredDecisions": 1,
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
				MustStatus(t, r, http.StatusOK)
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
			RunSteps(t, s, tok, site.Query, []Step{
				{"on the document", "GET", "/documents/" + doc + "/notifications", nil, 200, `~"notificationType":"IN_APP"`},
				{"no addressee", "POST", "/documents/" + doc + "/reviews", map[string]any{"review": map[string]any{"reviewCategory": "c", "requiredDecisions": 1,
					"notifications": []map[string]any{{"notificationType": "IN_APP", "subject": "s", "body": "b"}}}}, 400,
					`{"errors":[{"key":"notifications[0].cc","error":"an IN_APP notification needs 'cc' or 'bcc'"}]}`},
			})
		})
	}
}
