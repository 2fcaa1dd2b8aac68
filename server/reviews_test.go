package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"quire/quiretest"
)

func AddReview(t *testing.T, s *quiretest.Server, tok, path string, review map[string]any) string {
	t.Helper()
	r := s.Do(http.MethodPost, path, map[string]any{"review": review}, tok)
	MustStatus(t, r, http.StatusCreated)
	id := quiretest.Str(t, r.JSON(t), "reviewId")
	if id == "" {
		t.Fatalf("no reviewId: %s", r.Body)
	}
	return id
}

func ReviewStatus(t *testing.T, s *quiretest.Server, tok, path string) string {
	t.Helper()
	r := s.Do(http.MethodGet, path, nil, tok)
	MustStatus(t, r, http.StatusOK)
	return quiretest.Str(t, quiretest.Obj(t, r.JSON(t)["review"]), "reviewStatus")
}

// TestReviews_Routes walks every review route and status transition on
// both sites, for a document and for one of its artifacts.
func TestReviews_Routes(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range Sites {
		t.Run(site.Name, func(t *testing.T) {
			doc := AddDoc(t, s, tok, site.Query, map[string]any{"path": "review/me.txt", "content": "x"})
			base := "/documents/" + doc + "/reviews"
			rid := AddReview(t, s, tok, base+site.Query, map[string]any{"reviewCategory": "legal", "requiredDecisions": 2, "comments": "please"})
			one := base + "/" + rid
			missing := "/documents/00000000-0000-4000-8000-000000000000/reviews"
			RunSteps(t, s, tok, site.Query, []Step{
				{"get", "GET", one, nil, 200, `~"reviewStatus":"PENDING"`},
				{"get fields", "GET", one, nil, 200, `~"requiredDecisions":2`},
				{"list", "GET", base, nil, 200, `~"reviewId":"` + rid + `"`},
				{"no decisions yet", "GET", one + "/decisions", nil, 200, `{"decisions":[]}`},
				{"no review", "POST", base, map[string]any{}, 400, `{"errors":[{"key":"review","error":"'review' is required"}]}`},
				{"no category or count", "POST", base, map[string]any{"review": map[string]any{}}, 400,
					`{"errors":[{"key":"reviewCategory","error":"'reviewCategory' is required"},{"key":"requiredDecisions","error":"'requiredDecisions' is required"}]}`},
				{"zero decisions", "POST", base, map[string]any{"review": map[string]any{"reviewCategory": "c", "requiredDecisions": 0}}, 400,
					`{"errors":[{"key":"requiredDecisions","error":"'requiredDecisions' must be between 1 and 100"}]}`},
				{"created completed", "POST", base, map[string]any{"review": map[string]any{"reviewCategory": "c", "requiredDecisions": 1, "reviewStatus": "COMPLETED"}}, 400,
					`{"errors":[{"key":"reviewStatus","error":"a new review is PENDING or IN_PROGRESS"}]}`},
				{"bad status", "POST", base, map[string]any{"review": map[string]any{"reviewCategory": "c", "requiredDecisions": 1, "reviewStatus": "DONE"}}, 400,
					`{"errors":[{"key":"reviewStatus","error":"invalid 'reviewStatus'"}]}`},
				{"empty cc", "POST", base, map[string]any{"review": map[string]any{"reviewCategory": "c", "requiredDecisions": 1,
					"notifications": []map[string]any{{"notificationType": "IN_APP", "cc": []string{}, "subject": "s", "body": "b"}}}}, 400,
					`{"errors":[{"key":"notifications[0].cc","error":"'cc' needs at least one address"}]}`},
				{"no subject", "POST", base, map[string]any{"review": map[string]any{"reviewCategory": "c", "requiredDecisions": 1,
					"notifications": []map[string]any{{"notificationType": "IN_APP", "cc": []string{"a@example.com"}, "body": "b"}}}}, 400,
					`{"errors":[{"key":"notifications[0].subject","error":"'subject' is required"}]}`},
				{"mail unconfigured", "POST", base, map[string]any{"review": map[string]any{"reviewCategory": "c", "requiredDecisions": 1,
					"notifications": []map[string]any{{"notificationType": "EMAIL", "cc": []string{"a@example.com"}, "subject": "s", "body": "b"}}}}, 400,
					`{"errors":[{"key":"notifications","error":"notificationEmail is not configured"}]}`},
				{"missing document", "POST", missing, map[string]any{"review": map[string]any{"reviewCategory": "c", "requiredDecisions": 1}}, 404, ""},
				{"missing document list", "GET", missing, nil, 404, ""},
				{"unknown review", "GET", base + "/nope", nil, 404, `{"message":"Review 'nope' not found"}`},
				{"unknown review decision", "POST", base + "/nope/decisions", map[string]any{"decision": map[string]any{"type": "APPROVAL"}}, 404, ""},
				{"no decision", "POST", one + "/decisions", map[string]any{}, 400, `{"errors":[{"key":"decision","error":"'decision' is required"}]}`},
				{"bad type", "POST", one + "/decisions", map[string]any{"decision": map[string]any{"type": "VETO"}}, 400,
					`{"errors":[{"key":"type","error":"invalid 'type', use APPROVAL, RECOMMENDATION, ACKNOWLEDGMENT or COMMENT"}]}`},
				{"patch comments", "PATCH", one, map[string]any{"review": map[string]any{"comments": "now"}}, 200, `{"message":"Review updated"}`},
				{"patch to completed", "PATCH", one, map[string]any{"review": map[string]any{"reviewStatus": "COMPLETED"}}, 400, ""},
				{"patch bad count", "PATCH", one, map[string]any{"review": map[string]any{"requiredDecisions": -1}}, 400, ""},
				{"first decision", "POST", one + "/decisions", map[string]any{"decision": map[string]any{"type": "APPROVAL", "decision": "APPROVED", "comment": "ok"}}, 201, `~"decisionId"`},
				{"in progress", "GET", one, nil, 200, `~"reviewStatus":"IN_PROGRESS"`},
				{"back to pending refused", "PATCH", one, map[string]any{"review": map[string]any{"reviewStatus": "PENDING"}}, 400, ""},
				{"second decision", "POST", one + "/decisions", map[string]any{"decision": map[string]any{"type": "ACKNOWLEDGMENT"}}, 201, ""},
				{"completed", "GET", one, nil, 200, `~"reviewStatus":"COMPLETED"`},
				{"decision on completed", "POST", one + "/decisions", map[string]any{"decision": map[string]any{"type": "APPROVAL"}}, 409,
					`{"message":"Review '` + rid + `' is COMPLETED"}`},
				{"patch completed", "PATCH", one, map[string]any{"review": map[string]any{"comments": "late"}}, 409, ""},
				{"decisions listed", "GET", one + "/decisions", nil, 200, `~"comment":"ok"`},
			})
			r := s.Do(http.MethodGet, one+"/decisions"+site.Query, nil, tok)
			MustStatus(t, r, http.StatusOK)
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
			c := AddReview(t, s, tok, base+site.Query, map[string]any{"reviewCategory": "c", "requiredDecisions": 1})
			RunSteps(t, s, tok, site.Query, []Step{
				{"claim", "PATCH", base + "/" + c, map[string]any{"review": map[string]any{"reviewStatus": "IN_PROGRESS"}}, 200, ""},
				{"cancel", "PATCH", base + "/" + c, map[string]any{"review": map[string]any{"reviewStatus": "CANCELLED"}}, 200, ""},
				{"decision on cancelled", "POST", base + "/" + c + "/decisions", map[string]any{"decision": map[string]any{"type": "APPROVAL"}}, 409, ""},
				{"reopen cancelled", "PATCH", base + "/" + c, map[string]any{"review": map[string]any{"reviewStatus": "PENDING"}}, 409, ""},
			})
			sup := AddReview(t, s, tok, base+site.Query, map[string]any{"reviewCategory": "c", "requiredDecisions": 3})
			MustStatus(t, s.Do(http.MethodPost, base+"/"+sup+"/decisions"+site.Query, map[string]any{"decision": map[string]any{"type": "COMMENT"}}, tok), http.StatusCreated)
			MustStatus(t, s.Do(http.MethodPatch, base+"/"+sup+site.Query, map[string]any{"review": map[string]any{"requiredDecisions": 1}}, tok), http.StatusOK)
			if st := ReviewStatus(t, s, tok, base+"/"+sup+site.Query); st != "COMPLETED" {
				t.Fatalf("lowered requiredDecisions: %s", st)
			}
			fol := AddReview(t, s, tok, base+site.Query, map[string]any{"reviewCategory": "c", "requiredDecisions": 1})
			MustStatus(t, s.Do(http.MethodPatch, base+"/"+fol+site.Query, map[string]any{"review": map[string]any{"reviewStatus": "SUPERSEDED"}}, tok), http.StatusOK)
			MustStatus(t, s.Do(http.MethodPost, base+"/"+fol+"/decisions"+site.Query, map[string]any{"decision": map[string]any{"type": "APPROVAL"}}, tok), http.StatusConflict)

			// An artifact has its own reviews.
			art := AddArtifact(t, s, tok, site.Query, doc, map[string]any{"content": "a"})
			aq := Query(site.Query, "artifactId="+art)
			ar := AddReview(t, s, tok, base+aq, map[string]any{"reviewCategory": "artifact", "requiredDecisions": 1})
			r = s.Do(http.MethodGet, base+"/"+ar+aq, nil, tok)
			MustStatus(t, r, http.StatusOK)
			if rv := quiretest.Obj(t, r.JSON(t)["review"]); quiretest.Str(t, rv, "artifactId") != art || quiretest.Str(t, rv, "documentId") != doc {
				t.Fatalf("artifact review: %s", r.Body)
			}
			MustStatus(t, s.Do(http.MethodGet, base+"/"+ar+site.Query, nil, tok), http.StatusNotFound)
			MustStatus(t, s.Do(http.MethodGet, base+"/"+rid+aq, nil, tok), http.StatusNotFound)
			r = s.Do(http.MethodGet, base+aq, nil, tok)
			if rs := quiretest.List(t, r.JSON(t), "reviews"); len(rs) != 1 {
				t.Fatalf("artifact reviews: %s", r.Body)
			}
			MustStatus(t, s.Do(http.MethodPost, base+"/"+ar+"/decisions"+aq, map[string]any{"decision": map[string]any{"type": "APPROVAL"}}, tok), http.StatusCreated)
			if st := ReviewStatus(t, s, tok, base+"/"+ar+aq); st != "COMPLETED" {
				t.Fatalf("artifact review: %s", st)
			}
			r = s.Do(http.MethodGet, base+"/"+ar+"/decisions"+aq, nil, tok)
			if d := quiretest.Item(t, r.JSON(t), "decisions", 0); quiretest.Str(t, d, "artifactId") != art {
				t.Fatalf("artifact decision: %s", r.Body)
			}
			MustStatus(t, s.Do(http.MethodGet, base+Query(site.Query, "artifactId=nope"), nil, tok), http.StatusNotFound)

			// Paging, and a read-only caller may read but not write.
			r = s.Do(http.MethodGet, base+Query(site.Query, "limit=1"), nil, tok)
			MustStatus(t, r, http.StatusOK)
			if rs := quiretest.List(t, r.JSON(t), "reviews"); len(rs) != 1 || quiretest.Str(t, r.JSON(t), "next") == "" {
				t.Fatalf("first page: %s", r.Body)
			}
			siteName := strings.TrimPrefix(site.Query, "?siteId=")
			if siteName == "" {
				siteName = "default"
			}
			reader := s.Token("reader", siteName+"_read")
			MustStatus(t, s.Do(http.MethodGet, base+site.Query, nil, reader), http.StatusOK)
			MustStatus(t, s.Do(http.MethodPost, base+site.Query, map[string]any{"review": map[string]any{"reviewCategory": "c", "requiredDecisions": 1}}, reader), http.StatusUnauthorized)

			// Purging the document takes its reviews with it.
			MustStatus(t, s.Do(http.MethodDelete, "/documents/"+doc+"/purge"+site.Query, nil, tok), http.StatusOK)
			MustStatus(t, s.Do(http.MethodGet, one+site.Query, nil, tok), http.StatusNotFound)
		})
	}
}

// TestReviews_ApprovalGroups: with approvalGroups, a decision needs one
// of the caller's groups to be one of them (SERVICE-SPEC.md §5.5), on top
// of WRITE on the site; without, WRITE is enough.
func TestReviews_ApprovalGroups(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range Sites {
		t.Run(site.Name, func(t *testing.T) {
			siteName := strings.TrimPrefix(site.Query, "?siteId=")
			if siteName == "" {
				siteName = "default"
			}
			doc := AddDoc(t, s, tok, site.Query, map[string]any{"path": "groups.txt", "content": "x"})
			base := "/documents/" + doc + "/reviews"
			rid := AddReview(t, s, tok, base+site.Query, map[string]any{"reviewCategory": "c", "requiredDecisions": 2, "approvalGroups": []string{"legal", "board"}})
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
			open := AddReview(t, s, tok, base+site.Query, map[string]any{"reviewCategory": "c", "requiredDecisions": 1})
			MustStatus(t, s.Do(http.MethodPost, base+"/"+open+"/decisions"+site.Query, body, s.Token("w5", siteName)), http.StatusCreated)
		})
	}
}

// TestReviews_ConcurrentDecisions: 50 clients decide at once on a review
// that needs 3: exactly 3 are accepted, the rest get 409, and the review
// holds exactly 3 decisions.
func TestReviews_ConcurrentDecisions(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range Sites {
		t.Run(site.Name, func(t *testing.T) {
			doc := AddDoc(t, s, tok, site.Query, map[string]any{"path": "race.txt", "content": "x"})
			base := "/documents/" + doc + "/reviews"
			rid := AddReview(t, s, tok, base+site.Query, map[string]any{"reviewCategory": "c", "requiredDecisions": 3})
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
			r := s.Do(http.MethodGet, base+"/"+rid+"/decisions"+Query(site.Query, "limit=100"), nil, tok)
			if ds := quiretest.List(t, r.JSON(t), "decisions"); len(ds) != need {
				t.Fatalf("decisions stored: %d: %s", len(ds), r.Body)
			}
			if st := ReviewStatus(t, s, tok, base+"/"+rid+site.Query); st != "COMPLETED" {
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
	s := PipelineServer(t)
	tok := s.Admin()
	for _, site := range Sites {
		t.Run(site.Name, func(t *testing.T) {
			sid := SiteID(site.Query)
			MustStatus(t, s.Do(http.MethodPatch, "/sites/"+sid+"/configuration", map[string]any{"notification": map[string]any{
				"email": sid + "-dms@example.com", "provider": "SMTP", "smtp": map[string]any{"host": mail.Host, "port": mail.Port}}}, tok), http.StatusOK)
			doc := AddDoc(t, s, tok, site.Query, map[string]any{"path": "mail.txt", "content": "x"})
			art := AddArtifact(t, s, tok, site.Query, doc, map[string]any{"content": "a"})
			before := len(mail.Messages())
			AddReview(t, s, tok, "/documents/"+doc+"/reviews"+Query(site.Query, "artifactId="+art), map[string]any{"reviewCategory": "c", "requiredDecisions": 1,
				"notifications": []map[string]any{
					{"notificationType": "EMAIL", "cc": []string{"rev@example.com"}, "subject": "Review " + sid, "body": "Please review"},
					{"notificationType": "IN_APP", "cc": []string{"inapp@example.com"}, "subject": "s", "body": "b"},
				}})
			if st := WaitActions(t, s, tok, site.Query, doc); !EqualStrings(st, []string{"COMPLETE"}) {
				t.Fatalf("actions %v", st)
			}
			msgs := mail.Messages()
			if len(msgs) != before+1 {
				t.Fatalf("got %d messages, want 1", len(msgs)-before)
			}
			if m := msgs[len(msgs)-1]; !EqualStrings(m.To, []string{"rev@example.com"}) || !strings.Contains(m.Data, "Subject: Review "+sid) ||
				!strings.Contains(m.Data, "Please review") {
				t.Fatalf("message %+v", m)
			}
		})
	}
}
