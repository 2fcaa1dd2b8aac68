package servertest

import (
	"net/http"
	"strings"
	"testing"

	"quire/quiretest"
)

// Sites are the two sites every API test runs on: the default one and a
// second one reached with ?siteId=.
var Sites = []struct {
	Name, Query string
}{
	{"default", ""},
	{"finance", "?siteId=finance"},
}

// Query appends extra query parameters to a site query.
func Query(site, extra string) string {
	switch {
	case site == "" && extra == "":
		return ""
	case site == "":
		return "?" + extra
	case extra == "":
		return site
	}
	return site + "&" + extra
}

func MustStatus(t *testing.T, r *quiretest.Response, want int) {
	t.Helper()
	if r.Status != want {
		t.Fatalf("status = %d, want %d; body %s", r.Status, want, r.Body)
	}
}

func MustBody(t *testing.T, r *quiretest.Response, want string) {
	t.Helper()
	if got := strings.TrimSpace(string(r.Body)); got != want {
		t.Fatalf("body = %s\nwant   %s", got, want)
	}
}

func AddDoc(t *testing.T, s *quiretest.Server, tok, site string, body any) string {
	t.Helper()
	r := s.Do(http.MethodPost, "/documents"+site, body, tok)
	MustStatus(t, r, http.StatusCreated)
	id, _ := r.JSON(t)["documentId"].(string)
	if id == "" {
		t.Fatalf("no documentId in %s", r.Body)
	}
	return id
}
