package search_test

import (
	"net/http"
	"net/url"
	"path"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
	"quire/server/internal/testhooks"
)

// folderNames lists a GET /folders answer's entries by name (a folder's
// path is its name, a document's its full path) and its paging fields.
func folderNames(t *testing.T, r *quiretest.Response) (names []string, total float64, hasTotal bool, next string) {
	t.Helper()
	servertest.MustStatus(t, r, http.StatusOK)
	m := r.JSON(t)
	for _, d := range quiretest.List(t, m, "documents") {
		names = append(names, path.Base(quiretest.Str(t, quiretest.Obj(t, d), "path")))
	}
	total, hasTotal = m["totalCount"].(float64)
	next, _ = m["next"].(string)
	return names, total, hasTotal, next
}

// walkFolderPages follows a listing's next tokens (at most 5 pages),
// checking each page, and returns the entries' names in order.
func walkFolderPages(t *testing.T, s *quiretest.Server, tok, query string, check func(r *quiretest.Response, m map[string]any, total float64, hasTotal bool)) []string {
	t.Helper()
	var all []string
	next := ""
	for range 5 {
		q := query
		if next != "" {
			q += "&next=" + url.QueryEscape(next)
		}
		r := s.Do(http.MethodGet, q, nil, tok)
		names, total, ok, n := folderNames(t, r)
		check(r, r.JSON(t), total, ok)
		all = append(all, names...)
		if next = n; next == "" {
			return all
		}
	}
	t.Fatalf("%s: more than 5 pages", query)
	return nil
}

// TestFolders_Sorted: GET /folders with sort and sortBy (issue 47, item
// 1) answers the folder in that order, folders first in either
// direction, names in natural order (n2 before n15 before n144, without
// case), with totalCount and pages in that order; refused values get
// FormKiQ's validation shape; a folder above the bound is answered in
// the stored order, marked "sorted": false, without a total.
func TestFolders_Sorted(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, d := range []struct {
		name, ctype string
		size        int
	}{
		{"n144.txt", "text/plain", 300}, {"n15.txt", "application/json", 10}, {"n2.txt", "text/markdown", 50}, {"B.txt", "text/csv", 5},
	} {
		servertest.AddDoc(t, s, tok, "", map[string]any{"path": "sorted/" + d.name, "contentType": d.ctype, "content": strings.Repeat("x", d.size)})
	}
	for _, f := range []string{"sorted/n15", "sorted/N2"} {
		servertest.MustStatus(t, s.Do(http.MethodPost, "/folders", map[string]any{"path": f}, tok), http.StatusCreated)
	}
	for _, tt := range []struct {
		name, query string
		want        string
	}{
		{"path ascending", "sort=ASC&sortBy=path", "N2 n15 B.txt n2.txt n15.txt n144.txt"},
		{"sortBy alone is ascending", "sortBy=path", "N2 n15 B.txt n2.txt n15.txt n144.txt"},
		{"sort alone is by path", "sort=DESC", "n15 N2 n144.txt n15.txt n2.txt B.txt"},
		{"size", "sort=ASC&sortBy=contentLength", "N2 n15 B.txt n15.txt n2.txt n144.txt"},
		{"size, largest first", "sort=DESC&sortBy=contentLength", "n15 N2 n144.txt n2.txt n15.txt B.txt"},
		{"type", "sort=ASC&sortBy=contentType", "N2 n15 n15.txt B.txt n2.txt n144.txt"},
		{"newest first", "sort=DESC&sortBy=lastModifiedDate", "N2 n15 B.txt n2.txt n15.txt n144.txt"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			names, total, ok, next := folderNames(t, s.Do(http.MethodGet, "/folders?path=sorted&limit=100&"+tt.query, nil, tok))
			if got := strings.Join(names, " "); got != tt.want {
				t.Errorf("order %q, want %q", got, tt.want)
			}
			if !ok || total != 6 || next != "" {
				t.Errorf("totalCount %v (given %v), next %q; want 6 and no next", total, ok, next)
			}
		})
	}

	t.Run("pages in the order", func(t *testing.T) {
		all := walkFolderPages(t, s, tok, "/folders?path=sorted&limit=4&sort=ASC&sortBy=path", func(r *quiretest.Response, _ map[string]any, total float64, ok bool) {
			if !ok || total != 6 {
				t.Fatalf("totalCount %v (given %v): %s", total, ok, r.Body)
			}
		})
		if got := strings.Join(all, " "); got != "N2 n15 B.txt n2.txt n15.txt n144.txt" {
			t.Fatalf("pages gave %q", got)
		}
	})

	for _, tt := range []struct {
		name, query string
		want        int
		body        string
	}{
		{"a bad direction", "sort=UP", 400, `{"errors":[{"key":"sort","error":"invalid 'sort', use ASC or DESC"}]}`},
		{"a bad sortBy", "sortBy=size", 400, `{"errors":[{"key":"sortBy","error":"invalid 'sortBy', use path, lastModifiedDate, contentLength or contentType"}]}`},
		{"both bad", "sort=asc&sortBy=name", 400, `{"errors":[{"key":"sort","error":"invalid 'sort', use ASC or DESC"},{"key":"sortBy","error":"invalid 'sortBy', use path, lastModifiedDate, contentLength or contentType"}]}`},
		{"a token beyond the bound", "sortBy=path&next=c29ydGVkOjk5OTk5", 400, `{"message":"Invalid Next token"}`},
		{"a token that is no number", "sortBy=path&next=c29ydGVkOng", 400, `{"message":"Invalid Next token"}`},
		{"a token of no listing", "sortBy=path&next=garbage", 400, `{"message":"Invalid Next token"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(http.MethodGet, "/folders?path=sorted&"+tt.query, nil, tok)
			servertest.MustStatus(t, r, tt.want)
			servertest.MustBody(t, r, tt.body)
		})
	}

	t.Run("above the bound: the stored order, unsorted", func(t *testing.T) {
		testhooks.SetSortedFolderBound(5)
		defer testhooks.SetSortedFolderBound(0)
		all := walkFolderPages(t, s, tok, "/folders?path=sorted&limit=4&sort=DESC&sortBy=contentLength", func(r *quiretest.Response, m map[string]any, _ float64, hasTotal bool) {
			if sorted, ok := m["sorted"].(bool); !ok || sorted || hasTotal {
				t.Fatalf("sorted %v, totalCount given %v: %s", m["sorted"], hasTotal, r.Body)
			}
		})
		if len(all) != 6 {
			t.Fatalf("the stored order's pages gave %v", all)
		}
	})
}
