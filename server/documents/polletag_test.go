package documents_test

import (
	"net/http"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// TestPolls_ETag: GET /documents/{id}/actions and .../artifacts answer
// with an ETag, and a request whose If-None-Match names it gets 304
// without a body, until the answer would change: another site, other
// paging, a new action or artifact each give another ETag (and a 200).
func TestPolls_ETag(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	const doc = "0d5e4c1a-7f1b-4a55-9b6e-5a1e0c7d2b10" // the same id in both sites
	for _, site := range servertest.Sites {
		servertest.AddDoc(t, s, tok, site.Query, map[string]any{"documentId": doc, "path": "etag.txt", "content": "e", "actions": []any{}})
	}
	get := func(t *testing.T, path, inm string) *quiretest.Response {
		t.Helper()
		var h map[string]string
		if inm != "" {
			h = map[string]string{"If-None-Match": inm}
		}
		r := s.DoHeaders(http.MethodGet, path, nil, tok, h)
		if r.Status != http.StatusOK && r.Status != http.StatusNotModified {
			t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
		}
		if r.Header.Get("ETag") == "" {
			t.Fatalf("GET %s (%d): no ETag", path, r.Status)
		}
		return r
	}
	routes := []struct {
		name   string
		path   string
		change func(t *testing.T)
	}{
		{"actions", "/documents/" + doc + "/actions", func(t *testing.T) {
			r := s.Do(http.MethodPost, "/documents/"+doc+"/actions", map[string]any{"actions": []map[string]any{{"type": "FULLTEXT"}}}, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			// The action runs: its answer settles when it is done.
			if st := servertest.WaitActions(t, s, tok, "", doc); len(st) != 1 {
				t.Fatalf("FULLTEXT: %v", st)
			}
		}},
		{"artifacts", "/documents/" + doc + "/artifacts", func(t *testing.T) {
			servertest.AddArtifact(t, s, tok, "", doc, map[string]any{"content": "a"})
		}},
	}
	for _, rt := range routes {
		t.Run(rt.name, func(t *testing.T) {
			first := get(t, rt.path, "")
			tag := first.Header.Get("ETag")
			if first.Status != http.StatusOK || !strings.HasPrefix(tag, `W/"`) || first.Header.Get("Cache-Control") != "no-cache" {
				t.Fatalf("first read: %d ETag %q Cache-Control %q", first.Status, tag, first.Header.Get("Cache-Control"))
			}
			steps := []struct {
				name string
				path string
				inm  string
				want int  // status
				same bool // the ETag is the first read's
			}{
				{name: "unchanged", path: rt.path, inm: tag, want: http.StatusNotModified, same: true},
				{name: "in a list, strong form", path: rt.path, inm: `"0000", ` + strings.TrimPrefix(tag, "W/"), want: http.StatusNotModified, same: true},
				{name: "any", path: rt.path, inm: "*", want: http.StatusNotModified, same: true},
				{name: "another tag", path: rt.path, inm: `W/"0000"`, want: http.StatusOK, same: true},
				{name: "other paging", path: rt.path + "?limit=1", inm: tag, want: http.StatusOK},
				{name: "other site, same document and answer", path: rt.path + "?siteId=finance", inm: tag, want: http.StatusOK},
			}
			for _, st := range steps {
				r := get(t, st.path, st.inm)
				if r.Status != st.want || (r.Header.Get("ETag") == tag) != st.same {
					t.Fatalf("%s: %d ETag %q (first %q), want %d, same %v", st.name, r.Status, r.Header.Get("ETag"), tag, st.want, st.same)
				}
				if r.Status == http.StatusNotModified && len(r.Body) != 0 {
					t.Fatalf("%s: a 304 with a body: %s", st.name, r.Body)
				}
				if st.name == "other site, same document and answer" && string(r.Body) != string(first.Body) {
					t.Fatalf("the sites' answers differ (%s vs %s): the case proves nothing", r.Body, first.Body)
				}
			}
			rt.change(t)
			r := get(t, rt.path, tag)
			now := r.Header.Get("ETag")
			if r.Status != http.StatusOK || now == tag || string(r.Body) == string(first.Body) {
				t.Fatalf("after a change: %d ETag %q (before %q) %s", r.Status, now, tag, r.Body)
			}
			if r := get(t, rt.path, now); r.Status != http.StatusNotModified {
				t.Fatalf("the new ETag: %d", r.Status)
			}
		})
	}
}
