package search_test

import (
	"net/http"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// TestSavedSearches_Routes: a saved search is its owner's unless shared;
// a shared one is listed for every member of the site and nowhere else;
// only the owner deletes it; refusals have FormKiQ's validation shape.
func TestSavedSearches_Routes(t *testing.T) {
	s := quiretest.NewServer(t)
	alice := s.Token("alice", "finance")
	bob := s.Token("bob", "finance")
	rita := s.Token("rita", "finance_read")
	other := s.Token("olga", "default")
	base := "/sites/finance/savedSearches"
	q := map[string]any{"query": map[string]any{"text": "invoice"}}
	add := func(tok, name string, shared bool) string {
		t.Helper()
		r := s.Do(http.MethodPost, base, map[string]any{"savedSearch": map[string]any{"name": name, "query": q, "shared": shared}}, tok)
		servertest.MustStatus(t, r, http.StatusCreated)
		return quiretest.Str(t, r.JSON(t), "savedSearchId")
	}
	private := add(alice, "My invoices", false)
	shared := add(alice, "Team invoices", true)
	mine := add(rita, "Rita's", false)
	names := func(tok string) string {
		t.Helper()
		r := s.Do(http.MethodGet, base, nil, tok)
		servertest.MustStatus(t, r, http.StatusOK)
		b := r.JSON(t)
		var out []string
		for i := range quiretest.List(t, b, "savedSearches") {
			out = append(out, quiretest.Str(t, quiretest.Item(t, b, "savedSearches", i), "name"))
		}
		return strings.Join(out, ",")
	}
	for _, c := range []struct{ who, tok, want string }{
		{"alice", alice, "My invoices,Team invoices"},
		{"bob", bob, "Team invoices"},
		{"rita", rita, "Rita's,Team invoices"},
	} {
		got := strings.Split(names(c.tok), ",")
		want := strings.Split(c.want, ",")
		if len(got) != len(want) {
			t.Fatalf("%s sees %v, want %v", c.who, got, want)
		}
		for _, w := range want {
			if !strings.Contains(","+strings.Join(got, ",")+",", ","+w+",") {
				t.Fatalf("%s sees %v, want %v", c.who, got, want)
			}
		}
	}
	if r := s.Do(http.MethodGet, base, nil, alice); !strings.Contains(string(r.Body), `"query":{"query":{"text":"invoice"}}`) {
		t.Fatalf("query not kept: %s", r.Body)
	}
	for _, c := range []struct {
		name, tok, method, path string
		body                    any
		want                    int
		resp                    string
	}{
		{"not a member", other, "GET", base, nil, 401, ""},
		{"no body", alice, "POST", base, map[string]any{}, 400, `{"errors":[{"key":"savedSearch","error":"'savedSearch' is required"}]}`},
		{"no name or query", alice, "POST", base, map[string]any{"savedSearch": map[string]any{}}, 400,
			`{"errors":[{"key":"name","error":"'name' is required"},{"key":"query","error":"'query' is required"}]}`},
		{"long name", alice, "POST", base, map[string]any{"savedSearch": map[string]any{"name": strings.Repeat("n", 101), "query": q}}, 400,
			`{"errors":[{"key":"name","error":"'name' is longer than 100 characters"}]}`},
		{"query not an object", alice, "POST", base, map[string]any{"savedSearch": map[string]any{"name": "x", "query": "text"}}, 400,
			`{"errors":[{"key":"query","error":"'query' must be a JSON object"}]}`},
		{"large query", alice, "POST", base, map[string]any{"savedSearch": map[string]any{"name": "x", "query": map[string]any{"text": strings.Repeat("w", 9000)}}}, 400,
			`{"errors":[{"key":"query","error":"'query' is larger than 8192 bytes"}]}`},
		{"reader shares", rita, "POST", base, map[string]any{"savedSearch": map[string]any{"name": "x", "query": q, "shared": true}}, 400,
			`{"errors":[{"key":"shared","error":"sharing a saved search with the site needs WRITE permission"}]}`},
		{"bob deletes alice's shared", bob, "DELETE", base + "/" + shared, nil, 404, `{"message":"Saved search '` + shared + `' not found"}`},
		{"bob deletes alice's private", bob, "DELETE", base + "/" + private, nil, 404, ""},
		{"unknown", alice, "DELETE", base + "/nope", nil, 404, `{"message":"Saved search 'nope' not found"}`},
		{"rita deletes her own", rita, "DELETE", base + "/" + mine, nil, 200, ""},
		{"alice deletes her shared", alice, "DELETE", base + "/" + shared, nil, 200, ""},
	} {
		r := s.Do(c.method, c.path, c.body, c.tok)
		if r.Status != c.want || c.resp != "" && strings.TrimSpace(string(r.Body)) != c.resp {
			t.Fatalf("%s: %d %s, want %d %s", c.name, r.Status, r.Body, c.want, c.resp)
		}
	}
	if got := names(bob); got != "" {
		t.Fatalf("bob still sees %q", got)
	}
	if got := names(alice); got != "My invoices" {
		t.Fatalf("alice sees %q", got)
	}
}

// TestSavedSearches_Limit: a user keeps at most 100 in a site.
func TestSavedSearches_Limit(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Token("alice", "default")
	body := map[string]any{"savedSearch": map[string]any{"name": "v", "query": map[string]any{"query": map[string]any{}}}}
	for range 100 {
		servertest.MustStatus(t, s.Do(http.MethodPost, "/sites/default/savedSearches", body, tok), http.StatusCreated)
	}
	r := s.Do(http.MethodPost, "/sites/default/savedSearches", body, tok)
	servertest.MustStatus(t, r, http.StatusBadRequest)
	servertest.MustBody(t, r, `{"errors":[{"key":"savedSearch","error":"a user keeps at most 100 saved searches in a site"}]}`)
	servertest.MustStatus(t, s.Do(http.MethodPost, "/sites/default/savedSearches", body, s.Token("bob", "default")), http.StatusCreated)
}
