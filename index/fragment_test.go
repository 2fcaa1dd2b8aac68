package index

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"quire/index/analysis"
)

// TestText_FragmentFromPostings: a fragment alone is ranked from the
// postings (collectFragment): the same documents and total as Bleve's
// disjunction of its terms, across segments and with a replaced
// document; a document with more of its words, or a rarer one, first;
// those with it only in their path words last; every page size gives the
// same order.
func TestText_FragmentFromPostings(t *testing.T) {
	x := openTest(t)
	now := time.Now()
	var docs []Doc
	// 40 documents with the common quarkbar, a few with the rarer
	// quarkzed, one with both; two with a quark word in their path only.
	for i := range 40 {
		docs = append(docs, Doc{ID: fmt.Sprintf("common%02d", i), Path: fmt.Sprintf("misc/n%d.txt", i), Content: "one quarkbar two three"})
	}
	docs = append(docs,
		Doc{ID: "rare1", Path: "misc/r1.txt", Content: "one quarkzed two three"},
		Doc{ID: "rare2", Path: "misc/r2.txt", Content: "one quarkzed two three"},
		Doc{ID: "both", Path: "misc/b.txt", Content: "one quarkbar quarkzed three"},
		Doc{ID: "path1", Path: "quarkfiles/a.txt", Content: "nothing here at all"},
		Doc{ID: "path2", Path: "misc/quarkish.txt", Content: "nothing here at all"},
		Doc{ID: "other", Path: "misc/o.txt", Content: "quasar"},
	)
	for i := range docs {
		docs[i].Site, docs[i].Inserted = "default", now
	}
	// Three segments, and one document written again (its first version
	// deleted in an older segment).
	for _, part := range [][]Doc{docs[:20], docs[20:], {docs[41]}} {
		if err := x.Put(part, nil); err != nil {
			t.Fatal(err)
		}
	}
	f, ok := x.wordQuery("quark", analysis.Default).(*fragmentTerms)
	if !ok {
		t.Fatalf("quark is no fragment query: %T", x.wordQuery("quark", analysis.Default))
	}
	want, wantTotal, err := x.collect(context.Background(), f.DisjunctionQuery, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var wantIDs []string
	for _, h := range want {
		wantIDs = append(wantIDs, h.ID)
	}
	for _, size := range []int{1, 3, 10, 100} {
		t.Run(fmt.Sprint("by ", size), func(t *testing.T) {
			ids, totals := allIDs(t, x, "default", "quark", TextOptions{}, size)
			for _, n := range totals {
				if n != wantTotal || n != 45 {
					t.Fatalf("total %d, want %d as Bleve counts (45)", n, wantTotal)
				}
			}
			if !slices.Equal(slices.Sorted(slices.Values(ids)), slices.Sorted(slices.Values(wantIDs))) {
				t.Fatalf("found %v, Bleve %v", ids, wantIDs)
			}
			if ids[0] != "both" || !slices.Equal(slices.Sorted(slices.Values(ids[1:3])), []string{"rare1", "rare2"}) {
				t.Errorf("first %v, want both, then rare1 and rare2", ids[:3])
			}
			if tail := slices.Sorted(slices.Values(ids[len(ids)-2:])); !slices.Equal(tail, []string{"path1", "path2"}) {
				t.Errorf("last %v, want the path-only documents", ids[len(ids)-2:])
			}
			if size == 1 {
				return
			}
			one, _ := allIDs(t, x, "default", "quark", TextOptions{}, 1)
			if !slices.Equal(one, ids) {
				t.Errorf("pages of %d give %v, of 1 %v", size, ids, one)
			}
		})
	}
	// With a filter the fragment runs through Bleve's searchers, as before.
	ids, totals := allIDs(t, x, "default", "quark", TextOptions{Hide: termQuery(fFolders, "/nowhere")}, 10)
	if totals[0] != 45 || !slices.Equal(slices.Sorted(slices.Values(ids)), slices.Sorted(slices.Values(wantIDs))) {
		t.Errorf("filtered: %d of %d, want Bleve's %v", len(ids), totals[0], wantIDs)
	}
}
