package index

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"quire/index/segments"
	"quire/storage"
)

// mergeFixture opens an index whose own merge plan merges nothing (every
// segment is too large for it) and whose persister does not nap (it would
// merge the batches of a nap in memory), so only the idle merge reduces
// segments, and an indexer that merges after idle of quiet.
func mergeFixture(t *testing.T, idle time.Duration) (*storage.DB, *Index, *Indexer) {
	t.Helper()
	scorchExtra = map[string]any{"scorchMergePlanOptions": map[string]any{"MaxSegmentSize": 2}}
	persistNap = 0
	defer func() { scorchExtra, persistNap = nil, defaultPersistNap }()
	return indexerFixture(t, idle)
}

// waitFilesOnly waits until batch b's segments are files: scorch's
// persister, when it falls behind (a loaded machine), merges the
// in-memory segments it finds waiting into one file, a merge the test
// does not mean to make.
func waitFilesOnly(t *testing.T, x *Index, b int) {
	t.Helper()
	waitUntil(t, 5*time.Millisecond, func() string { return fmt.Sprintf("batch %d not persisted in time", b) }, func() bool {
		_, tm := segments.Count(x.text)
		_, nm := segments.Count(x.names)
		return tm == 0 && nm == 0
	})
}

// indexerFixture opens a store, an index with Quire's scorch options and
// an indexer that merges after idle of quiet (0: never).
func indexerFixture(t *testing.T, idle time.Duration) (*storage.DB, *Index, *Indexer) {
	t.Helper()
	db, err := storage.Open(storage.Config{InMemory: true, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	x, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	ix := NewIndexer(db, x, quiet())
	ix.SetMergeIdle(idle)
	if err := ix.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return db, x, ix
}

// addBatch adds n documents (ids from first) and waits until they are
// indexed, so each call makes a segment of its own.
func addBatch(t *testing.T, db *storage.DB, ix *Indexer, first, n int) {
	t.Helper()
	var docs []storage.NewDocument
	for i := first; i < first+n; i++ {
		// "quarterly" in the path words and in a tag (the text field):
		// the warm pass and the best hits read the text field.
		docs = append(docs, storage.NewDocument{
			Document: storage.Document{DocumentID: uid(i), Path: fmt.Sprintf("quarterly-report-%d.txt", i)},
			Tags:     []storage.Tag{{Key: "period", Value: "quarterly"}},
		})
	}
	MustApply(t, db, storage.OpAddDocuments, storage.AddDocuments{Docs: docs})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := ix.WaitText(ctx); err != nil {
		t.Fatalf("batch at %d not indexed: %v", first, err)
	}
}

// results are what a fulltext and a filename search find, in order, and
// the fulltext total.
func results(t *testing.T, x *Index) (text, names []string, total uint64) {
	t.Helper()
	hits, total, err := x.Text("default", "quarterly", TextOptions{Size: 100})
	if err != nil {
		t.Fatal(err)
	}
	nh, err := x.Prefix("default", "filename", "quarterly", nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	return ids(hits), ids(nh), total
}

// waitUntil checks cond every period until it holds, and fails t with
// failure() if it does not within 60 s. The state cond reads is the
// proof; the pause only spaces the checks.
func waitUntil(t *testing.T, every time.Duration, failure func() string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal(failure())
		}
		time.Sleep(every)
	}
}

// waitMerged waits until both indexes have at most mergeTo segments and
// the indexer counted at least steps merge steps.
func waitMerged(t *testing.T, x *Index, ix *Indexer, steps uint64) {
	t.Helper()
	var text, names int
	var merged uint64
	waitUntil(t, 20*time.Millisecond, func() string {
		return fmt.Sprintf("not merged down in time: text %d, names %d segments, %d steps", text, names, merged)
	}, func() bool {
		text, names = x.Segments()
		merged, _ = ix.MergeStats()
		return text <= mergeTo && names <= mergeTo && merged >= steps
	})
}

// TestIdleMerge: after many small batches and a quiet period each index
// is merged down to mergeTo segments, searches answer the same before and
// after, and a document written while the merge runs is kept and found.
func TestIdleMerge(t *testing.T) {
	old := mergeStep
	mergeStep = 2 // several steps, so a write can come between them
	defer func() { mergeStep = old }()
	db, x, ix := mergeFixture(t, time.Second)
	const batches, per = 6, 2
	for b := 0; b < batches; b++ {
		addBatch(t, db, ix, b*per, per)
		waitFilesOnly(t, x, b)
	}
	textSegs, nameSegs := x.Segments()
	if textSegs <= mergeAbove || nameSegs <= mergeAbove {
		t.Fatalf("segments before the quiet period: text %d, names %d; want more than %d", textSegs, nameSegs, mergeAbove)
	}
	text, names, total := results(t, x)
	if total != batches*per || len(names) != batches*per {
		t.Fatalf("before: %d fulltext (%d hits), %d filename hits; want %d", total, len(text), len(names), batches*per)
	}

	waitMerged(t, x, ix, 1)
	text2, names2, total2 := results(t, x)
	if total2 != total || !slices.Equal(text2, text) || !slices.Equal(names2, names) {
		t.Fatalf("after the merge: %d %v / %v; before %d %v / %v", total2, text2, names2, total, text, names)
	}

	// A second load, then a write as soon as the idle merge has made its
	// first step: the write cancels the step under way (or comes between
	// steps); either way it is indexed and found, and the index is
	// merged down again after the next quiet period.
	for b := batches; b < 2*batches; b++ {
		addBatch(t, db, ix, b*per, per)
	}
	stepsBefore, _ := ix.MergeStats()
	waitUntil(t, time.Millisecond, func() string { return "the second idle merge did not start" }, func() bool {
		m, _ := ix.MergeStats()
		return m > stepsBefore
	})
	late := 2 * batches * per
	addBatch(t, db, ix, late, 1)
	warmed, _, _ := ix.WarmStats()
	text3, names3, total3 := results(t, x)
	if total3 != uint64(late+1) || len(names3) != late+1 || !slices.Contains(text3, uid(late)) || !slices.Contains(names3, uid(late)) {
		t.Fatalf("after a write during the merge: %d fulltext, %d filename hits, want %d with %s", total3, len(names3), late+1, uid(late))
	}
	merged, yielded := ix.MergeStats()
	t.Logf("steps %d, yielded %d", merged, yielded)
	// The next quiet period ends with a warm pass. After it no index has
	// more than mergeAbove segments: a merge the write cut short was
	// finished, and one that had ended just before the write (a loaded
	// machine can run every step before the test's next look) left
	// mergeTo plus the write's segment, too few to merge.
	var textSegs4, nameSegs4 int
	waitUntil(t, 20*time.Millisecond, func() string {
		return fmt.Sprintf("no quiet period after the write: text %d, names %d segments", textSegs4, nameSegs4)
	}, func() bool {
		textSegs4, nameSegs4 = x.Segments()
		done, _, _ := ix.WarmStats()
		return done > warmed && !ix.Merging()
	})
	if textSegs4 > mergeAbove || nameSegs4 > mergeAbove {
		t.Fatalf("after the quiet period: text %d, names %d segments; want at most %d", textSegs4, nameSegs4, mergeAbove)
	}
	text4, names4, total4 := results(t, x)
	if total4 != total3 || !slices.Equal(text4, text3) || !slices.Equal(names4, names3) {
		t.Fatalf("after the second merge: %d %v / %v; before %d %v / %v", total4, text4, names4, total3, text3, names3)
	}
}

// TestIdleMergeSegmentCap: the idle merge makes no segment of
// maxSegmentDocs documents or more, and leaves alone those of half of it
// or more: six segments of 3 documents under a bound of 8 become three of
// 6 (without the bound, two of 15 and 3), with every document still
// found.
func TestIdleMergeSegmentCap(t *testing.T) {
	old := maxSegmentDocs
	maxSegmentDocs = 8
	defer func() { maxSegmentDocs = old }()
	db, x, ix := mergeFixture(t, time.Second)
	const batches, per = 6, 3
	for b := 0; b < batches; b++ {
		addBatch(t, db, ix, b*per, per)
	}
	_, _, total := results(t, x)
	if total != batches*per {
		t.Fatalf("before: %d fulltext hits, want %d", total, batches*per)
	}
	// The warm pass follows the idle merge of both indexes: once one has
	// ended, the merge is done.
	waitUntil(t, 20*time.Millisecond, func() string { return "no idle merge and warm pass in time" }, func() bool {
		done, yielded, _ := ix.WarmStats()
		return done+yielded > 0 && !ix.Merging()
	})
	for _, tc := range []struct {
		name string
		docs []int64
	}{{"text", segments.Docs(x.text)}, {"names", segments.Docs(x.names)}} {
		slices.Sort(tc.docs)
		if !slices.Equal(tc.docs, []int64{6, 6, 6}) {
			t.Errorf("%s index segments after the idle merge: %v documents, want [6 6 6]", tc.name, tc.docs)
		}
	}
	text, names, total2 := results(t, x)
	if total2 != batches*per || len(text) != batches*per || len(names) != batches*per {
		t.Fatalf("after the merge: %d fulltext (%d hits), %d filename hits; want %d", total2, len(text), len(names), batches*per)
	}
}

// TestScorchMergeSegmentCap: scorch's own merge plan keeps maxSegmentDocs
// too: thirty segments of 3 documents under a bound of 8 are merged in
// pairs, into fifteen of 6 (scorch's default bound would merge them ten
// at a time, into segments of 30).
func TestScorchMergeSegmentCap(t *testing.T) {
	old := maxSegmentDocs
	maxSegmentDocs = 8
	defer func() { maxSegmentDocs = old }()
	persistNap = 0                    // each batch persisted alone, at once
	db, x, ix := indexerFixture(t, 0) // scorch's plan alone
	persistNap = defaultPersistNap
	const batches, per = 30, 3
	for b := 0; b < batches; b++ {
		addBatch(t, db, ix, b*per, per)
		// Each batch persisted before the next: scorch's persister
		// merges the in-memory segments it finds waiting into one file
		// (on a loaded machine three batches of 3 became one segment of
		// 9), a merge of fresh batches that is not the plan's.
		waitUntil(t, 5*time.Millisecond, func() string { return fmt.Sprintf("batch %d not persisted in time", b) }, func() bool {
			_, mem := segments.Count(x.text)
			return mem == 0
		})
	}
	var docs []int64
	waitUntil(t, 20*time.Millisecond, func() string {
		return fmt.Sprintf("scorch did not merge in time: %d segments %v", len(docs), docs)
	}, func() bool {
		docs = segments.Docs(x.text)
		file, mem := segments.Count(x.text)
		return mem == 0 && file <= batches/2
	})
	for _, d := range docs {
		if d >= maxSegmentDocs {
			t.Fatalf("text index segments %v: one of %d documents, want each under %d", docs, d, maxSegmentDocs)
		}
	}
	if _, _, total := results(t, x); total != batches*per {
		t.Fatalf("%d fulltext hits, want %d", total, batches*per)
	}
}
