package flow_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// TestReviews_Routes walks every review route and status transition on
// both sites, for a document and for one of its artifacts.
func TestReviews_Routes(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			doc := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "review/me.txt", "content": "x"})
			base := "/documents/" + doc + "/reviews"
			rid := servertest.AddReview(t, s, tok, base+site.Query, map[string]any{"reviewCategory": "legal", "requiredDecisions": 2, "comments": "please"})
			one := base + "/" + rid
			missing := "/documents/00000000-0000-4000-8000-000000000000/reviews"
			servertest.RunSteps(t, s, tok, site.Query, []servertest.Step{
				{Name: "get", Method: "GET", Path: one, Body: nil, Want: 200, Resp: `~"reviewStatus":"PENDING"`},
				{Name: "get fields", Method: "GET", Path: one, Body: nil, Want: 200, Resp: `~"requiredDecisions":2`},
				{Name: "list", Method: "GET", Path: base, Body: nil, Want: 200, Resp: `~"reviewId":"` + rid + `"`},
				{Name: "no decisions yet", Method: "GET", Path: one + "/decisions", Body: nil, Want: 200, Resp: `{"decisions":[]}`},
				{Name: "no review", Method: "POST", Path: base, Body: map[string]any{}, Want: 400, Resp: `{"errors":[{"key":"review","error":"'review' is required"}]}`},
				{Name: "no category or count", Method: "POST", Path: base, Body: map[string]any{"review": map[string]any{}}, Want: 400,
					Resp: `{"errors":[{"key":"reviewCategory","error":"'reviewCategory' is required"},{"key":"requiredDecisions","error":"'requiredDecisions' is required"}]}`},
				{Name: "zero decisions", Method: "POST", Path: base, Body: map[string]any{"review": map[string]any{"reviewCategory": "c", "requiredDecisions": 0}}, Want: 400,
					Resp: `{"errors":[{"key":"requiredDecisions","error":"'requiredDecisions' must be between 1 and 100"}]}`},
				{Name: "created completed", Method: "POST", Path: base, Body: map[string]any{"review": map[string]any{"reviewCategory": "c", "requiredDecisions": 1, "reviewStatus": "COMPLETED"}}, Want: 400,
					Resp: `{"errors":[{"key":"reviewStatus","error":"a new review is PENDING or IN_PROGRESS"}]}`},
				{Name: "bad status", Method: "POST", Path: base, Body: map[string]any{"review": map[string]any{"reviewCategory": "c", "requiredDecisions": 1, "reviewStatus": "DONE"}}, Want: 400,
					Resp: `{"errors":[{"key":"reviewStatus","error":"invalid 'reviewStatus'"}]}`},
				{Name: "empty cc", Method: "POST", Path: base, Body: map[string]any{"review": map[string]any{"reviewCategory": "c", "requiredDecisions": 1,
					"notifications": []map[string]any{{"notificationType": "IN_APP", "cc": []string{}, "subject": "s", "body": "b"}}}}, Want: 400,
					Resp: `{"errors":[{"key":"notifications[0].cc","error":"'cc' needs at least one address"}]}`},
				{Name: "no subject", Method: "POST", Path: base, Body: map[string]any{"review": map[string]any{"reviewCategory": "c", "requiredDecisions": 1,
					"notifications": []map[string]any{{"notificationType": "IN_APP", "cc": []string{"a@example.com"}, "body": "b"}}}}, Want: 400,
					Resp: `{"errors":[{"key":"notifications[0].subject","error":"'subject' is required"}]}`},
				{Name: "mail unconfigured", Method: "POST", Path: base, Body: map[string]any{"review": map[string]any{"reviewCategory": "c", "requiredDecisions": 1,
					"notifications": []map[string]any{{"notificationType": "EMAIL", "cc": []string{"a@example.com"}, "subject": "s", "body": "b"}}}}, Want: 400,
					Resp: `{"errors":[{"key":"notifications","error":"notificationEmail is not configured"}]}`},
				{Name: "missing document", Method: "POST", Path: missing, Body: map[string]any{"review": map[string]any{"reviewCategory": "c", "requiredDecisions": 1}}, Want: 404, Resp: ""},
				{Name: "missing document list", Method: "GET", Path: missing, Body: nil, Want: 404, Resp: ""},
				{Name: "unknown review", Method: "GET", Path: base + "/nope", Body: nil, Want: 404, Resp: `{"message":"Review 'nope' not found"}`},
				{Name: "unknown review decision", Method: "POST", Path: base + "/nope/decisions", Body: map[string]any{"decision": map[string]any{"type": "APPROVAL"}}, Want: 404, Resp: ""},
				{Name: "no decision", Method: "POST", Path: one + "/decisions", Body: map[string]any{}, Want: 400, Resp: `{"errors":[{"key":"decision","error":"'decision' is required"}]}`},
				{Name: "bad type", Method: "POST", Path: one + "/decisions", Body: map[string]any{"decision": map[string]any{"type": "VETO"}}, Want: 400,
					Resp: `{"errors":[{"key":"type","error":"invalid 'type', use APPROVAL, RECOMMENDATION, ACKNOWLEDGMENT or COMMENT"}]}`},
				{Name: "patch comments", Method: "PATCH", Path: one, Body: map[string]any{"review": map[string]any{"comments": "now"}}, Want: 200, Resp: `{"message":"Review updated"}`},
				{Name: "patch to completed", Method: "PATCH", Path: one, Body: map[string]any{"review": map[string]any{"reviewStatus": "COMPLETED"}}, Want: 400, Resp: ""},
				{Name: "patch bad count", Method: "PATCH", Path: one, Body: map[string]any{"review": map[string]any{"requiredDecisions": -1}}, Want: 400, Resp: ""},
				{Name: "first decision", Method: "POST", Path: one + "/decisions", Body: map[string]any{"decision": map[string]any{"type": "APPROVAL", "decision": "APPROVED", "comment": "ok"}}, Want: 201, Resp: `~"decisionId"`},
				{Name: "in progress", Method: "GET", Path: one, Body: nil, Want: 200, Resp: `~"reviewStatus":"IN_PROGRESS"`},
				{Name: "back to pending refused", Method: "PATCH", Path: one, Body: map[string]any{"review": map[string]any{"reviewStatus": "PENDING"}}, Want: 400, Resp: ""},
				{Name: "second decision", Method: "POST", Path: one + "/decisions", Body: map[string]any{"decision": map[string]any{"type": "ACKNOWLEDGMENT"}}, Want: 201, Resp: ""},
				{Name: "completed", Method: "GET", Path: one, Body: nil, Want: 200, Resp: `~"reviewStatus":"COMPLETED"`},
				{Name: "decision on completed", Method: "POST", Path: one + "/decisions", Body: map[string]any{"decision": map[string]any{"type": "APPROVAL"}}, Want: 409,
					Resp: `{"message":"Review '` + rid + `' is COMPLETED"}`},
				{Name: "patch completed", Method: "PATCH", Path: one, Body: map[string]any{"review": map[string]any{"comments": "late"}}, Want: 409, Resp: ""},
				{Name: "decisions listed", Method: "GET", Path: one + "/decisions", Body: nil, Want: 200, Resp: `~"comment":"ok"`},
			})
			r := s.Do(http.MethodGet, one+"/decisions"+site.Query, nil, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			b := r.JSON(t)
			if ds := quiretest.List(t, b, "decisions"); len(ds) != 2 {
				t.Fatalf("decisions: %s", r.Body)
			}
			for i := range 2 {
				if d := quiretest.Item(t, b, "decisions", i); quiretest.Str(t, d, "userId") != "admin" || quiretest.Str(t, d, "reviewId") != rid || quiretest.Str(t, d, "documentId") != doc {
					t.Fatalf("decision %d: %v", i, d)
				}
			}

			// PATCH transitions: PENDING -> IN_PROGRESS -> CANCELLED (final);
			// lowering requiredDecisions to the decisions taken completes.
			c := servertest.AddReview(t, s, tok, base+site.Query, map[string]any{"reviewCategory": "c", "requiredDecisions": 1})
			servertest.RunSteps(t, s, tok, site.Query, []servertest.Step{
				{Name: "claim", Method: "PATCH", Path: base + "/" + c, Body: map[string]any{"review": map[string]any{"reviewStatus": "IN_PROGRESS"}}, Want: 200, Resp: ""},
				{Name: "cancel", Method: "PATCH", Path: base + "/" + c, Body: map[string]any{"review": map[string]any{"reviewStatus": "CANCELLED"}}, Want: 200, Resp: ""},
				{Name: "decision on cancelled", Method: "POST", Path: base + "/" + c + "/decisions", Body: map[string]any{"decision": map[string]any{"type": "APPROVAL"}}, Want: 409, Resp: ""},
				{Name: "reopen cancelled", Method: "PATCH", Path: base + "/" + c, Body: map[string]any{"review": map[string]any{"reviewStatus": "PENDING"}}, Want: 409, Resp: ""},
			})
			sup := servertest.AddReview(t, s, tok, base+site.Query, map[string]any{"reviewCategory": "c", "requiredDecisions": 3})
			servertest.MustStatus(t, s.Do(http.MethodPost, base+"/"+sup+"/decisions"+site.Query, map[string]any{"decision": map[string]any{"type": "COMMENT"}}, tok), http.StatusCreated)
			servertest.MustStatus(t, s.Do(http.MethodPatch, base+"/"+sup+site.Query, map[string]any{"review": map[string]any{"requiredDecisions": 1}}, tok), http.StatusOK)
			if st := servertest.ReviewStatus(t, s, tok, base+"/"+sup+site.Query); st != "COMPLETED" {
				t.Fatalf("lowered requiredDecisions: %s", st)
			}
			fol := servertest.AddReview(t, s, tok, base+site.Query, map[string]any{"reviewCategory": "c", "requiredDecisions": 1})
			servertest.MustStatus(t, s.Do(http.MethodPatch, base+"/"+fol+site.Query, map[string]any{"review": map[string]any{"reviewStatus": "SUPERSEDED"}}, tok), http.StatusOK)
			servertest.MustStatus(t, s.Do(http.MethodPost, base+"/"+fol+"/decisions"+site.Query, map[string]any{"decision": map[string]any{"type": "APPROVAL"}}, tok), http.StatusConflict)

			// An artifact has its own reviews.
			art := servertest.AddArtifact(t, s, tok, site.Query, doc, map[string]any{"content": "a"})
			aq := servertest.Query(site.Query, "artifactId="+art)
			ar := servertest.AddReview(t, s, tok, base+aq, map[string]any{"reviewCategory": "artifact", "requiredDecisions": 1})
			r = s.Do(http.MethodGet, base+"/"+ar+aq, nil, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			if rv := quiretest.Obj(t, r.JSON(t)["review"]); quiretest.Str(t, rv, "artifactId") != art || quiretest.Str(t, rv, "documentId") != doc {
				t.Fatalf("artifact review: %s", r.Body)
			}
			servertest.MustStatus(t, s.Do(http.MethodGet, base+"/"+ar+site.Query, nil, tok), http.StatusNotFound)
			servertest.MustStatus(t, s.Do(http.MethodGet, base+"/"+rid+aq, nil, tok), http.StatusNotFound)
			r = s.Do(http.MethodGet, base+aq, nil, tok)
			if rs := quiretest.List(t, r.JSON(t), "reviews"); len(rs) != 1 {
				t.Fatalf("artifact reviews: %s", r.Body)
			}
			servertest.MustStatus(t, s.Do(http.MethodPost, base+"/"+ar+"/decisions"+aq, map[string]any{"decision": map[string]any{"type": "APPROVAL"}}, tok), http.StatusCreated)
			if st := servertest.ReviewStatus(t, s, tok, base+"/"+ar+aq); st != "COMPLETED" {
				t.Fatalf("artifact review: %s", st)
			}
			r = s.Do(http.MethodGet, base+"/"+ar+"/decisions"+aq, nil, tok)
			if d := quiretest.Item(t, r.JSON(t), "decisions", 0); quiretest.Str(t, d, "artifactId") != art {
				t.Fatalf("artifact decision: %s", r.Body)
			}
			servertest.MustStatus(t, s.Do(http.MethodGet, base+servertest.Query(site.Query, "artifactId=nope"), nil, tok), http.StatusNotFound)

			// Paging, and a read-only caller may read but not write.
			r = s.Do(http.MethodGet, base+servertest.Query(site.Query, "limit=1"), nil, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			if rs := quiretest.List(t, r.JSON(t), "reviews"); len(rs) != 1 || quiretest.Str(t, r.JSON(t), "next") == "" {
				t.Fatalf("first page: %s", r.Body)
			}
			siteName := strings.TrimPrefix(site.Query, "?siteId=")
			if siteName == "" {
				siteName = "default"
			}
			reader := s.Token("reader", siteName+"_read")
			servertest.MustStatus(t, s.Do(http.MethodGet, base+site.Query, nil, reader), http.StatusOK)
			servertest.MustStatus(t, s.Do(http.MethodPost, base+site.Query, map[string]any{"review": map[string]any{"reviewCategory": "c", "requiredDecisions": 1}}, reader), http.StatusUnauthorized)

			// Purging the document takes its reviews with it.
			servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+doc+"/purge"+site.Query, nil, tok), http.StatusOK)
			servertest.MustStatus(t, s.Do(http.MethodGet, one+site.Query, nil, tok), http.StatusNotFound)
		})
	}
}

// TestReviews_ApprovalGroups: with approvalGroups, a decision needs one
// of the caller's groups to be one of them (SERVICE-SPEC.md §5.5), on top
// of WRITE on the site; without, WRITE is enough.
func TestReviews_ApprovalGroups(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			siteName := strings.TrimPrefix(site.Query, "?siteId=")
			if siteName == "" {
				siteName = "default"
			}
			doc := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "groups.txt", "content": "x"})
			base := "/documents/" + doc + "/reviews"
			rid := servertest.AddReview(t, s, tok, base+site.Query, map[string]any{"reviewCategory": "c", "requiredDecisions": 2, "approvalGroups": []string{"legal", "board"}})
			dec := base + "/" + rid + "/decisions" + site.Query
			body := map[string]any{"decision": map[string]any{"type": "APPROVAL"}}
			for _, c := range []struct {
				name string
				tok  string
				want int
			}{
				{"writer outside the groups", s.Token("w1", siteName), http.StatusUnauthorized},
				{"admin outside the groups", tok, http.StatusUnauthorized},
				{"group member reading only", s.Token("r1", siteName+"_read", "legal"), http.StatusUnauthorized},
				{"group member on another site", s.Token("o1", "elsewhere", "legal"), http.StatusUnauthorized},
				{"legal writer", s.Token("w2", siteName, "legal"), http.StatusCreated},
				{"board writer", s.Token("w3", siteName, "board"), http.StatusCreated},
				{"after completion", s.Token("w4", siteName, "legal"), http.StatusConflict},
			} {
				if r := s.Do(http.MethodPost, dec, body, c.tok); r.Status != c.want {
					t.Fatalf("%s: status %d, want %d: %s", c.name, r.Status, c.want, r.Body)
				}
			}
			r := s.Do(http.MethodGet, dec, nil, tok)
			if ds := quiretest.List(t, r.JSON(t), "decisions"); len(ds) != 2 {
				t.Fatalf("decisions: %s", r.Body)
			}
			open := servertest.AddReview(t, s, tok, base+site.Query, map[string]any{"reviewCategory": "c", "requiredDecisions": 1})
			servertest.MustStatus(t, s.Do(http.MethodPost, base+"/"+open+"/decisions"+site.Query, body, s.Token("w5", siteName)), http.StatusCreated)
		})
	}
}

// TestReviews_ConcurrentDecisions: 50 clients decide at once on a review
// that needs 3: exactly 3 are accepted, the rest get 409, and the review
// holds exactly 3 decisions.
func TestReviews_ConcurrentDecisions(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			doc := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "race.txt", "content": "x"})
			base := "/documents/" + doc + "/reviews"
			rid := servertest.AddReview(t, s, tok, base+site.Query, map[string]any{"reviewCategory": "c", "requiredDecisions": 3})
			const clients, need = 50, 3
			statuses := make([]int, clients)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					r := s.Do(http.MethodPost, base+"/"+rid+"/decisions"+site.Query,
						map[string]any{"decision": map[string]any{"type": "APPROVAL", "comment": fmt.Sprint(i)}}, tok)
					statuses[i] = r.Status
				}()
			}
			close(start)
			wg.Wait()
			counts := map[int]int{}
			for _, st := range statuses {
				counts[st]++
			}
			if counts[http.StatusCreated] != need || counts[http.StatusConflict] != clients-need {
				t.Fatalf("statuses %v, want %d created and %d conflicts", counts, need, clients-need)
			}
			r := s.Do(http.MethodGet, base+"/"+rid+"/decisions"+servertest.Query(site.Query, "limit=100"), nil, tok)
			if ds := quiretest.List(t, r.JSON(t), "decisions"); len(ds) != need {
				t.Fatalf("decisions stored: %d: %s", len(ds), r.Body)
			}
			if st := servertest.ReviewStatus(t, s, tok, base+"/"+rid+site.Query); st != "COMPLETED" {
				t.Fatalf("status %s", st)
			}
		})
	}
}

// TestReviews_NotificationMail: an EMAIL notification block given at
// creation is queued as a NOTIFICATION action of the document and sent
// through the site's SMTP configuration; an artifact's review mails via
// its document.
func TestReviews_NotificationMail(t *testing.T) {
	mail := quiretest.NewMailServer(t)
	s := servertest.PipelineServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			sid := servertest.SiteID(site.Query)
			servertest.MustStatus(t, s.Do(http.MethodPatch, "/sites/"+sid+"/configuration", map[string]any{"notification": map[string]any{
				"email": sid + "-dms@example.com", "provider": "SMTP", "smtp": map[string]any{"host": mail.Host, "port": mail.Port}}}, tok), http.StatusOK)
			doc := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "mail.txt", "content": "x", "actions": []any{}})
			art := servertest.AddArtifact(t, s, tok, site.Query, doc, map[string]any{"content": "a"})
			before := len(mail.Messages())
			servertest.AddReview(t, s, tok, "/documents/"+doc+"/reviews"+servertest.Query(site.Query, "artifactId="+art), map[string]any{"reviewCategory": "c", "requiredDecisions": 1,
				"notifications": []map[string]any{
					{"notificationType": "EMAIL", "cc": []string{"rev@example.com"}, "subject": "Review " + sid, "body": "Please review"},
					{"notificationType": "IN_APP", "cc": []string{"inapp@example.com"}, "subject": "s", "body": "b"},
				}})
			if st := servertest.WaitActions(t, s, tok, site.Query, doc); !servertest.EqualStrings(st, []string{"COMPLETE"}) {
				t.Fatalf("actions %v", st)
			}
			msgs := mail.Messages()
			if len(msgs) != before+1 {
				t.Fatalf("got %d messages, want 1", len(msgs)-before)
			}
			if m := msgs[len(msgs)-1]; !servertest.EqualStrings(m.To, []string{"rev@example.com"}) || !strings.Contains(m.Data, "Subject: Review "+sid) ||
				!strings.Contains(m.Data, "Please review") {
				t.Fatalf("message %+v", m)
			}
		})
	}
}
