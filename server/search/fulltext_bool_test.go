package search_test

import (
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// TestQueryFulltext_BoolFilters: OpenSearch's bool query narrows a
// fulltext query by folder (and below), exact tag and attribute values
// and a range of insertion dates, keeps the highlighted snippets and
// counts only what it matches; unsupported clauses are 400.
func TestQueryFulltext_BoolFilters(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	servertest.MustStatus(t, s.Do(http.MethodPost, "/attributes", map[string]any{"attribute": map[string]any{"key": "amount", "dataType": "NUMBER"}}, admin), http.StatusCreated)
	a := servertest.AddDoc(t, s, admin, "", map[string]any{"path": "invoices/2026/a.txt", "contentType": "text/plain", "content": "invoice alpha",
		"tags": []map[string]any{{"key": "dept", "value": "sales"}}, "attributes": []map[string]any{{"key": "amount", "numberValue": 12}}})
	b := servertest.AddDoc(t, s, admin, "", map[string]any{"path": "invoices/b.txt", "contentType": "text/plain", "content": "invoice beta",
		"tags": []map[string]any{{"key": "dept", "value": "hr"}}})
	c := servertest.AddDoc(t, s, admin, "", map[string]any{"path": "letters/c.txt", "contentType": "text/plain", "content": "invoice gamma"})
	name := map[string]string{a: "a", b: "b", c: "c"}
	query := func(t *testing.T, q map[string]any) (got string, snippets bool, status int, body string) {
		t.Helper()
		r := s.Do(http.MethodPost, "/queryFulltext", map[string]any{"query": q}, admin)
		if r.Status != http.StatusOK {
			return "", false, r.Status, string(r.Body)
		}
		hits := quiretest.List(t, quiretest.Obj(t, quiretest.Obj(t, r.JSON(t)["result"])["hits"]), "hits")
		var names []string
		snippets = len(hits) > 0
		for _, h := range hits {
			m := quiretest.Obj(t, h)
			names = append(names, name[quiretest.Str(t, m, "_id")])
			if _, ok := m["highlight"]; !ok {
				snippets = false
			}
		}
		sort.Strings(names)
		return strings.Join(names, ","), snippets, r.Status, string(r.Body)
	}
	servertest.WaitFor(t, "the three documents indexed", func() bool {
		got, _, _, _ := query(t, map[string]any{"match": map[string]any{"content": "invoice"}})
		return got == "a,b,c"
	})
	must := map[string]any{"match": map[string]any{"content": "invoice"}}
	today := time.Now().UTC().Format("2006-01-02")
	tomorrow := time.Now().UTC().AddDate(0, 0, 1).Format("2006-01-02")
	for _, tc := range []struct {
		name   string
		filter any
		want   string
	}{
		{"folder and below", []any{map[string]any{"term": map[string]any{"folder": "invoices"}}}, "a,b"},
		{"a deeper folder", []any{map[string]any{"term": map[string]any{"folder": "/invoices/2026/"}}}, "a"},
		{"tag value", []any{map[string]any{"term": map[string]any{"tags.dept": "hr"}}}, "b"},
		{"tag values", []any{map[string]any{"terms": map[string]any{"tags.dept": []string{"hr", "sales"}}}}, "a,b"},
		{"tag exists", []any{map[string]any{"exists": map[string]any{"field": "tags.dept"}}}, "a,b"},
		{"number attribute", []any{map[string]any{"term": map[string]any{"attributes.amount": 12}}}, "a"},
		{"inserted today", []any{map[string]any{"range": map[string]any{"insertedDate": map[string]any{"gte": today, "lte": today}}}}, "a,b,c"},
		{"inserted from tomorrow", []any{map[string]any{"range": map[string]any{"insertedDate": map[string]any{"gte": tomorrow}}}}, ""},
		{"folder and tag", []any{map[string]any{"term": map[string]any{"folder": "invoices"}}, map[string]any{"term": map[string]any{"tags.dept": "sales"}}}, "a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, snippets, status, body := query(t, map[string]any{"bool": map[string]any{"must": must, "filter": tc.filter}})
			if status != http.StatusOK || got != tc.want {
				t.Fatalf("%d %s: got [%s], want [%s]", status, body, got, tc.want)
			}
			if got != "" && !snippets {
				t.Fatalf("hits without highlight: %s", body)
			}
		})
	}
	t.Run("no must: every document of the folder", func(t *testing.T) {
		if got, _, status, body := query(t, map[string]any{"bool": map[string]any{"filter": map[string]any{"term": map[string]any{"folder": "letters"}}}}); got != "c" {
			t.Fatalf("%d %s", status, body)
		}
	})
	for _, bad := range []map[string]any{
		{"bool": map[string]any{"should": []any{must}}},
		{"bool": map[string]any{"filter": []any{map[string]any{"term": map[string]any{"owner": "x"}}}}},
		{"bool": map[string]any{"filter": []any{map[string]any{"range": map[string]any{"insertedDate": map[string]any{"gte": "yesterday"}}}}}},
		{"bool": map[string]any{"filter": []any{map[string]any{"range": map[string]any{"insertedDate": map[string]any{"gte": "2999-01-01"}}}}}},
		{"bool": map[string]any{"filter": []any{map[string]any{"wildcard": map[string]any{"folder": "x*"}}}}},
		{"bool": "x"},
	} {
		if _, _, status, body := query(t, bad); status != http.StatusBadRequest || !strings.Contains(body, `"key":"query"`) {
			t.Errorf("%v: %d %s, want 400 key query", bad, status, body)
		}
	}
}

// TestUserNotifications_DirectoryUser: a user of the built-in directory
// signed in with /login reads the notifications addressed to the email
// an Admin gave them (their tokens carry it as "email", not Cognito's
// custom:email); a user without an email, or with another, reads none.
func TestUserNotifications_DirectoryUser(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	servertest.MustStatus(t, s.Do(http.MethodPost, "/groups", map[string]any{"group": map[string]any{"name": "default"}}, admin), http.StatusOK)
	for _, u := range []map[string]any{{"username": "sue", "email": "sue@example.com"}, {"username": "tom", "email": "tom@example.com"}, {"username": "ned"}} {
		servertest.MustStatus(t, s.Do(http.MethodPost, "/users", map[string]any{"user": u, "temporaryPassword": "temporary-1"}, admin), http.StatusOK)
		servertest.MustStatus(t, s.Do(http.MethodPost, "/groups/default/users", map[string]any{"user": map[string]any{"username": u["username"]}}, admin), http.StatusOK)
	}
	doc := servertest.AddDoc(t, s, admin, "", map[string]any{"path": "n.txt", "content": "x"})
	servertest.MustStatus(t, s.Do(http.MethodPost, "/documents/"+doc+"/reviews", map[string]any{"review": map[string]any{"reviewCategory": "check", "requiredDecisions": 1,
		"notifications": []map[string]any{{"notificationType": "IN_APP", "cc": []string{"SUE@example.com"}, "subject": "For Sue", "body": "b"}}}}, admin), http.StatusCreated)
	for _, c := range []struct {
		user string
		want int
	}{{"sue", 1}, {"tom", 0}, {"ned", 0}} {
		t.Run(c.user, func(t *testing.T) {
			tok, _ := servertest.FirstSignIn(t, s, c.user, "temporary-1", "correct-horse-9")
			r := s.Do(http.MethodGet, "/userNotifications", nil, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			if got := quiretest.List(t, r.JSON(t), "notifications"); len(got) != c.want {
				t.Fatalf("%s: %d notifications, want %d: %s", c.user, len(got), c.want, r.Body)
			}
		})
	}
}

// A match on every field, the console's search, forgives as /search does:
// a stem, a fragment of a word and a word of the file name find the
// document; a field named keeps OpenSearch's exact words (issue 46).
func TestQueryFulltext_MatchOnEveryFieldForgives(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	id := servertest.AddDoc(t, s, admin, "", map[string]any{"path": "post/quarterly-report.txt", "contentType": "text/plain",
		"content": "the zebracorn grazes by the river", "actions": []any{map[string]any{"type": "FULLTEXT"}}})
	servertest.WaitIndexed(t, s)
	for _, tt := range []struct {
		name  string
		query map[string]any
		found bool
	}{
		{"the word", map[string]any{"match": map[string]any{"_all": "zebracorn"}}, true},
		{"a stem", map[string]any{"match": map[string]any{"_all": "Zebracorns"}}, true},
		{"a fragment", map[string]any{"match": map[string]any{"_all": "zebracor"}}, true},
		{"a fragment, query form", map[string]any{"match": map[string]any{"_all": map[string]any{"query": "zebrac river"}}}, true},
		{"a word of the file name", map[string]any{"match": map[string]any{"_all": "quarterly"}}, true},
		{"two words, one absent", map[string]any{"match": map[string]any{"_all": "zebracorn elephant"}}, false},
		{"syntax is text", map[string]any{"match": map[string]any{"_all": "content:zebracorn"}}, false},
		{"a named field stays exact", map[string]any{"match": map[string]any{"content": "zebracor"}}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			deadline := time.Now().Add(5 * time.Second) // fulltext may lag by a second
			for {
				r := s.Do(http.MethodPost, "/queryFulltext", map[string]any{"query": tt.query}, admin)
				servertest.MustStatus(t, r, http.StatusOK)
				found := false
				for _, h := range quiretest.List(t, quiretest.Obj(t, quiretest.Obj(t, r.JSON(t)["result"])["hits"]), "hits") {
					found = found || quiretest.Str(t, quiretest.Obj(t, h), "_id") == id
				}
				if found == tt.found {
					return
				}
				if !tt.found || time.Now().After(deadline) {
					t.Fatalf("found %v, want %v: %s", found, tt.found, r.Body)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}
