package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2/index/scorch"
	segment "github.com/blevesearch/scorch_segment_api/v2"

	"quire/index/besthits"
	"quire/storage"
)

// Words of warmFixture's documents and their matches per segment (of
// warmPer documents): each is in every warmEvery-th document.
var warmWords = []struct {
	word  string
	every int
}{{"alpha", 1}, {"beta", 2}, {"gamma", 4}, {"delta", 50}}

const warmSegs, warmPer = 4, 100

// warmFixture opens an index of warmSegs segments (scorch's own merging
// off and each persisted before the next is written, so they stay) of warmPer documents each, holding warmWords one to
// four times, so that many share a score, and caching a segment's best
// hits from 8 matches: alpha has 100 per segment, beta 50, gamma 25,
// delta 2 (below the threshold).
func warmFixture(t *testing.T) *Index {
	t.Helper()
	scorchExtra = map[string]any{"scorchMergePlanOptions": map[string]any{"MaxSegmentSize": 2}}
	persistNap = 0
	x := openTest(t)
	scorchExtra, persistNap = nil, defaultPersistNap
	x.best.MinPostings = 8
	r := rand.New(rand.NewPCG(11, 12))
	for s := range warmSegs {
		var docs []Doc
		for i := range warmPer {
			var words []string
			for _, w := range warmWords {
				if i%w.every == 0 {
					for range 1 + r.IntN(4) {
						words = append(words, w.word)
					}
				}
			}
			for range r.IntN(5) {
				words = append(words, "other")
			}
			r.Shuffle(len(words), func(a, b int) { words[a], words[b] = words[b], words[a] })
			docs = append(docs, Doc{Site: "default", ID: fmt.Sprintf("d%06d", r.IntN(1000)*1000+s*warmPer+i), Content: strings.Join(words, " "), Inserted: time.Now()})
		}
		if err := x.Put(docs, nil); err != nil {
			t.Fatal(err)
		}
		// Persisted before the next, or the persister would merge the
		// two in memory.
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			if persisted(t, x) == s+1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d segments persisted, want %d", persisted(t, x), s+1)
			}
		}
	}
	snap, err := x.textReader()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	if n := len(snap.(*scorch.IndexSnapshot).Segments()); n != warmSegs {
		t.Fatalf("%d text segments, want %d", n, warmSegs)
	}
	return x
}

// persisted is the number of segments of x's text snapshot if all of
// them are persisted, else -1.
func persisted(t *testing.T, x *Index) int {
	t.Helper()
	snap, err := x.textReader()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	segs := snap.(*scorch.IndexSnapshot).Segments()
	for _, ss := range segs {
		if _, ok := ss.Segment().(segment.PersistedSegment); !ok {
			return -1
		}
	}
	return len(segs)
}

// warmedWords returns the words the cache holds entries of, with how
// many segments each.
func warmedWords(x *Index) map[string]int {
	return x.best.Terms()
}

// firstPageAsBleve checks that the first page of size of a one-word query
// is Bleve's, with Bleve's total.
func firstPageAsBleve(t *testing.T, x *Index, word string, size int) {
	t.Helper()
	want, total := bleveOrder(t, x, termQuery(fContent, word))
	hits, got, err := x.Text("default", word, TextOptions{Size: size})
	if err != nil {
		t.Fatal(err)
	}
	if got != total || !slices.Equal(ids(hits), want[:min(size, len(want))]) {
		t.Fatalf("%q, page of %d (total %d) differs from Bleve's (total %d):\n got %v\nwant %v", word, size, got, total, ids(hits), want[:min(size, len(want))])
	}
}

// TestWarm_QueriesUseWarmedEntries: after the warm pass, a one-word query
// of every word with enough matches uses the warmed entries of every
// segment and builds none, and answers as Bleve does; a second pass finds
// nothing left to build.
func TestWarm_QueriesUseWarmedEntries(t *testing.T) {
	x := warmFixture(t)
	entries, hits, err := x.warmBest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 * warmSegs; entries != want || x.best.Warmed.Load() != uint64(want) || x.best.Built.Load() != 0 {
		t.Fatalf("warmed %d entries (%d hits; counter %d, built %d), want %d", entries, hits, x.best.Warmed.Load(), x.best.Built.Load(), want)
	}
	for _, tt := range []struct {
		word   string
		cached bool
	}{{"alpha", true}, {"beta", true}, {"gamma", true}, {"delta", false}} {
		t.Run(tt.word, func(t *testing.T) {
			for _, size := range []int{10, 30} {
				used, built := x.BestHits()
				firstPageAsBleve(t, x, tt.word, size)
				used2, built2 := x.BestHits()
				if built2 != built {
					t.Fatalf("page of %d built %d entries after the warm pass", size, built2-built)
				}
				if tt.cached && used2-used != warmSegs {
					t.Fatalf("page of %d used %d cached entries, want %d (one per segment)", size, used2-used, warmSegs)
				}
			}
		})
	}
	if again, _, err := x.warmBest(context.Background()); err != nil || again != 0 {
		t.Fatalf("a second pass built %d entries (%v), want 0: every pair has one", again, err)
	}
}

// TestWarm_Budget: the warm pass builds the entries of the words with the
// most matches first and stops at half the cache's bound.
func TestWarm_Budget(t *testing.T) {
	for _, tt := range []struct {
		name    string
		maxHits int
		want    map[string]int
	}{
		// alpha's entries hold besthits.WarmKeep (64) hits, beta's its 50 matches.
		{"two entries", 4 * besthits.WarmKeep, map[string]int{"alpha": 2}},
		{"one word", 2*warmSegs*besthits.WarmKeep + 1, map[string]int{"alpha": warmSegs}},
		{"two words", 2 * warmSegs * (besthits.WarmKeep + 50), map[string]int{"alpha": warmSegs, "beta": warmSegs}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			x := warmFixture(t)
			x.best.MaxHits = tt.maxHits
			_, hits, err := x.warmBest(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got := warmedWords(x); !mapsEqual(got, tt.want) {
				t.Fatalf("warmed %v, want %v", got, tt.want)
			}
			if hits > tt.maxHits/2 || x.best.WarmHeld() != hits {
				t.Fatalf("warmed %d hits (held %d), budget %d", hits, x.best.WarmHeld(), tt.maxHits/2)
			}
		})
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestWarm_ChangeStopsThePass: a change while the warm pass runs (here
// right after its first entry: it deletes that entry's best hits) stops
// it at once, and every query after the change still answers as Bleve
// does.
func TestWarm_ChangeStopsThePass(t *testing.T) {
	x := warmFixture(t)
	ix := &Indexer{x: x, log: quiet(), stop: make(chan struct{}), mergeWake: make(chan struct{}, 1), mergeIdle: time.Nanosecond}
	want, _ := bleveOrder(t, x, termQuery(fContent, "alpha"))
	var del []string
	for _, id := range want[:20] {
		del = append(del, docID("default", id))
	}
	var hookErr error
	besthits.WarmHook = func() {
		if x.best.Warmed.Load() == 1 {
			hookErr = x.Put(nil, del)
			ix.noteWrite()
		}
	}
	defer func() { besthits.WarmHook = nil }()
	done := make(chan error, 1)
	go func() { done <- ix.idleWarm() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the warm pass did not return after a change")
	}
	if hookErr != nil {
		t.Fatal(hookErr)
	}
	finished, yielded, warmed := ix.WarmStats()
	if finished != 0 || yielded != 1 || warmed != 1 {
		t.Fatalf("passes done %d, yielded %d, entries %d; want 0, 1, 1 (stopped after the change)", finished, yielded, warmed)
	}
	for _, w := range warmWords {
		want, total := bleveOrder(t, x, termQuery(fContent, w.word))
		for _, size := range []int{10, 33} {
			got, totals := allIDs(t, x, "default", w.word, TextOptions{}, size)
			if !slices.Equal(got, want) || totals[0] != total {
				t.Fatalf("%q in pages of %d (total %d) differs from Bleve's (total %d):\n got %v\nwant %v", w.word, size, totals[0], total, got, want)
			}
		}
	}
	if used, _ := x.BestHits(); used == 0 {
		t.Fatal("no query used a cached entry")
	}
}

// TestWarm_AfterIdlePeriod: the indexer runs the warm pass once the index
// has been quiet (after the idle merge, here with nothing to merge), and
// a query then uses what it built.
func TestWarm_AfterIdlePeriod(t *testing.T) {
	db, err := storage.Open(storage.Config{InMemory: true, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	x := openTest(t)
	x.best.MinPostings = 2
	ix := NewIndexer(db, x, quiet())
	ix.SetMergeIdle(time.Second)
	if err := ix.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	for b := range 2 {
		addBatch(t, db, ix, b*4, 4)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if done, _, warmed := ix.WarmStats(); done > 0 && warmed > 0 && !ix.Warming() {
			break
		}
		if time.Now().After(deadline) {
			done, yielded, warmed := ix.WarmStats()
			t.Fatalf("no warm pass: %d done, %d yielded, %d entries", done, yielded, warmed)
		}
		time.Sleep(20 * time.Millisecond)
	}
	used, built := x.BestHits()
	if _, _, err := x.Text("default", "quarterly", TextOptions{Size: 10}); err != nil {
		t.Fatal(err)
	}
	if used2, built2 := x.BestHits(); used2 == used || built2 != built {
		t.Fatalf("query after the warm pass: used %d → %d, built %d → %d", used, used2, built, built2)
	}
}
