package search_test

import (
	"fmt"
	"net/http"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// TestFulltext_CountsAndPagesInTheIndex: fulltext totals are exact past
// the 1,000 hits searches used to load, documents in the trash or in
// folders the caller may not read are neither listed nor counted, pages
// past the first hold the rest once each, and a document changed just now
// (in the index's overlay) counts as storage has it, without waiting.
func TestFulltext_CountsAndPagesInTheIndex(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	alice := s.Token("alice", "default", "staff")
	const bulk = 1200
	for i := 0; i < bulk; i += 100 {
		var children []map[string]any
		for j := i + 1; j < i+100; j++ {
			children = append(children, map[string]any{"path": fmt.Sprintf("bulk/n%04d.txt", j), "contentType": "text/plain", "content": "common"})
		}
		servertest.AddDoc(t, s, admin, "", map[string]any{"path": fmt.Sprintf("bulk/n%04d.txt", i), "contentType": "text/plain", "content": "common", "documents": children})
	}
	hr := servertest.AddDoc(t, s, admin, "", map[string]any{"path": "hr/pay.txt", "contentType": "text/plain", "content": "common"})
	trash := servertest.AddDoc(t, s, admin, "", map[string]any{"path": "old/gone.txt", "contentType": "text/plain", "content": "common"})
	servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+trash+"?softDelete=true", nil, admin), http.StatusOK)
	servertest.SetFolderRoles(t, s, admin, "", "hr", map[string][]string{"hr_team": {"READ"}})

	fulltext := func(tok string, body map[string]any, extra string) (ids []string, total float64) {
		t.Helper()
		r := s.Do(http.MethodPost, "/searchFulltext"+servertest.Query("", extra), map[string]any{"query": body}, tok)
		servertest.MustStatus(t, r, http.StatusOK)
		m := r.JSON(t)
		for _, d := range quiretest.List(t, m, "documents") {
			ids = append(ids, quiretest.Str(t, quiretest.Obj(t, d), "documentId"))
		}
		n, ok := m["totalCount"].(float64)
		if !ok {
			t.Fatalf("no totalCount: %s", r.Body)
		}
		return ids, n
	}
	common := map[string]any{"text": "common"}
	servertest.WaitFor(t, "every document's text indexed", func() bool {
		_, n := fulltext(admin, common, "")
		return n == bulk+1
	})

	// pages collects every page of a search, checking each page's total.
	pages := func(t *testing.T, want int, page func(n int) ([]string, float64, bool)) map[string]bool {
		t.Helper()
		seen := map[string]bool{}
		for n := 1; ; n++ {
			ids, total, more := page(n)
			if total >= 0 && total != float64(want) {
				t.Fatalf("page %d: totalCount %v, want %d", n, total, want)
			}
			for _, id := range ids {
				if seen[id] {
					t.Fatalf("page %d: %s was on an earlier page", n, id)
				}
				seen[id] = true
			}
			if !more {
				break
			}
		}
		if len(seen) != want {
			t.Fatalf("the pages held %d documents, want %d", len(seen), want)
		}
		if seen[trash] {
			t.Fatalf("the soft-deleted document was listed")
		}
		return seen
	}
	for _, c := range []struct {
		name   string
		tok    string
		want   int
		seesHR bool
	}{{"admin", admin, bulk + 1, true}, {"alice, not in hr_team", alice, bulk, false}} {
		t.Run(c.name, func(t *testing.T) {
			sf := pages(t, c.want, func(n int) ([]string, float64, bool) {
				ids, total := fulltext(c.tok, map[string]any{"text": "common", "page": n}, "limit=100")
				return ids, total, len(ids) == 100
			})
			next := ""
			st := pages(t, c.want, func(int) ([]string, float64, bool) {
				extra := "limit=100"
				if next != "" {
					extra += "&next=" + next
				}
				docs, nx := servertest.Search(t, s, c.tok, "", map[string]any{"query": common}, extra)
				next = nx
				var ids []string
				for _, d := range docs {
					ids = append(ids, quiretest.Str(t, d, "documentId"))
				}
				return ids, -1, nx != ""
			})
			if sf[hr] != c.seesHR || st[hr] != c.seesHR {
				t.Fatalf("hr/pay.txt listed by searchFulltext %v, by search %v; want %v", sf[hr], st[hr], c.seesHR)
			}
			r := s.Do(http.MethodPost, "/queryFulltext", map[string]any{"query": map[string]any{"match": map[string]any{"content": "common"}}}, c.tok)
			servertest.MustStatus(t, r, http.StatusOK)
			total := quiretest.Obj(t, quiretest.Obj(t, quiretest.Obj(t, r.JSON(t)["result"])["hits"])["total"])
			if total["value"] != float64(c.want) || total["relation"] != "eq" {
				t.Fatalf("queryFulltext total %v, want %d eq", total, c.want)
			}
			// documentIds narrow /search text inside the index too.
			docs, _ := servertest.Search(t, s, c.tok, "", map[string]any{"query": map[string]any{"text": "common", "documentIds": []string{hr, trash}}}, "")
			if len(docs) != map[bool]int{true: 1, false: 0}[c.seesHR] {
				t.Fatalf("documentIds [hr, trash]: %v", docs)
			}
		})
	}

	// Changes not yet indexed count as storage has them at once: a
	// document soft-deleted, one moved into hr (for alice), one retagged
	// (for a tag filter).
	var picked []string
	for _, id := range func() []string { ids, _ := fulltext(admin, common, "limit=5"); return ids }() {
		if id != hr {
			picked = append(picked, id)
		}
	}
	if len(picked) < 2 {
		t.Fatalf("want two hits outside hr, got %v", picked)
	}
	moved, retag := picked[0], picked[1]
	servertest.MustStatus(t, s.Do(http.MethodPatch, "/documents/"+retag, map[string]any{"tags": []map[string]any{{"key": "state", "value": "new"}}}, admin), http.StatusOK)
	servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+hr+"?softDelete=true", nil, admin), http.StatusOK)
	servertest.MustStatus(t, s.Do(http.MethodPatch, "/documents/"+moved, map[string]any{"path": "hr/moved.txt"}, admin), http.StatusOK)
	if _, n := fulltext(admin, common, ""); n != bulk {
		t.Fatalf("admin's totalCount right after a soft delete: %v, want %d", n, bulk)
	}
	if ids, n := fulltext(alice, common, "limit=100"); n != bulk-1 || contains(ids, moved) {
		t.Fatalf("alice's totalCount right after a move into hr: %v (moved listed: %v), want %d", n, contains(ids, moved), bulk-1)
	}
	// The retagged document is found by its new tag once its text is
	// reindexed; until then its index entry has no such tag.
	servertest.WaitFor(t, "the retagged document found by its tag", func() bool {
		ids, n := fulltext(admin, map[string]any{"text": "common", "tags": []map[string]any{{"key": "state", "eq": "new"}}}, "")
		return n == 1 && len(ids) == 1 && ids[0] == retag
	})
	// A new document is found once its text is in (within a second).
	fresh := servertest.AddDoc(t, s, admin, "", map[string]any{"path": "bulk/fresh.txt", "contentType": "text/plain", "content": "common freshly"})
	servertest.WaitFor(t, "the new document found", func() bool {
		ids, n := fulltext(admin, map[string]any{"text": "freshly"}, "")
		return n == 1 && len(ids) == 1 && ids[0] == fresh
	})
	if _, n := fulltext(admin, common, ""); n != bulk+1 {
		t.Fatalf("admin's totalCount after the new document: %v, want %d", n, bulk+1)
	}
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}
