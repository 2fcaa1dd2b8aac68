package servertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
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

// AddDocs creates n documents, body(i), as AddDoc does, from setupClients
// clients at once, so that the server's group commit syncs each round of
// them once instead of each document; it returns their ids in the order of
// i. Only for setup whose creation order nothing asserts.
func AddDocs(t *testing.T, s *quiretest.Server, tok, site string, n int, body func(i int) any) []string {
	t.Helper()
	const setupClients = 8
	ids := make([]string, n)
	fails := make([]string, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range setupClients {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				r := s.Do(http.MethodPost, "/documents"+site, body(i), tok)
				var v struct {
					DocumentID string `json:"documentId"`
				}
				if r.Status != http.StatusCreated || json.Unmarshal(r.Body, &v) != nil || v.DocumentID == "" {
					fails[i] = fmt.Sprintf("%d %.300s", r.Status, r.Body)
				}
				ids[i] = v.DocumentID
			}
		})
	}
	wg.Wait()
	for i, f := range fails {
		if f != "" {
			t.Fatalf("document %d: %s, want 201 with a documentId", i, f)
		}
	}
	return ids
}
