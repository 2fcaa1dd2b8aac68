package index

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2/index/scorch"

	"quire/index/segments"
)

// textStats are the live counters of x's text index (kept after Close).
func textStats(t *testing.T, x *Index) *scorch.Stats {
	t.Helper()
	st, ok := segments.Scorch(x.text).Stats().(*scorch.Stats)
	if !ok {
		t.Fatal("the text index is not scorch")
	}
	return st
}

// TestPersisterNap_SmallIndex: batches written to a small index during
// the persister's nap are found at once, stay in memory until the nap
// ends and reach disk as one file, so the merger merges once for all of
// them; Close does not wait for the nap and leaves everything persisted;
// an index of floorSegmentSize documents or more is persisted at once.
// Without the nap each of the ten batches is persisted alone and merged
// with the index (ten file merges).
func TestPersisterNap_SmallIndex(t *testing.T) {
	// A nap of a minute: longer than any wait below.
	open := func(dir string) *Index {
		t.Helper()
		persistNap = time.Minute
		defer func() { persistNap = defaultPersistNap }()
		x, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	dir := t.TempDir()
	x := open(dir)
	doc := func(i int) Doc {
		return Doc{Site: "default", ID: uid(i), Path: fmt.Sprintf("nap-%d.txt", i), Content: fmt.Sprintf("napword w%d", i), Inserted: time.Now()}
	}
	// The first batch of a quiet index is persisted at once; the nap
	// follows it.
	if err := x.Put([]Doc{doc(0)}, nil); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 5*time.Millisecond, func() string { return "the first batch was not persisted" }, func() bool {
		_, mem := segments.Count(x.text)
		return mem == 0
	})
	// The persister naps after it: nothing it holds now is written
	// until the nap ends (a minute, or Close).
	waitUntil(t, 5*time.Millisecond, func() string { return "the persister did not nap after the first batch" }, func() bool {
		return segments.Napping(x.text)
	})
	st := textStats(t, x)
	before := atomic.LoadUint64(&st.TotFileMergeZapBeg)
	const batches = 10
	for i := 1; i <= batches; i++ {
		if err := x.Put([]Doc{doc(i)}, nil); err != nil {
			t.Fatal(err)
		}
		hits, _, err := x.Text("default", fmt.Sprintf("w%d", i), TextOptions{Size: 10})
		if err != nil || len(hits) != 1 {
			t.Fatalf("batch %d not found at once during the nap: %v %v", i, hits, err)
		}
	}
	if _, mem := segments.Count(x.text); mem < 2 {
		t.Fatalf("%d of %d batches in memory during the nap, want them all held", mem, batches)
	}
	began := time.Now()
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took > 8*time.Second {
		t.Fatalf("Close took %v: it waited for the nap", took)
	}
	if merges := atomic.LoadUint64(&st.TotFileMergeZapBeg) - before; merges > 2 {
		t.Fatalf("%d file merges for %d batches written during a nap, want at most 2", merges, batches)
	}
	// Everything written is on disk: the reopened index finds it.
	x = open(dir)
	defer x.Close()
	if _, total, err := x.Text("default", "napword", TextOptions{Size: 1}); err != nil || total != batches+1 {
		t.Fatalf("after Close and Open: %d documents found, want %d (%v)", total, batches+1, err)
	}

	// An index of floorSegmentSize documents does not nap.
	var docs []Doc
	for i := batches + 1; i < floorSegmentSize+1; i++ {
		docs = append(docs, doc(i))
	}
	if err := x.Put(docs, nil); err != nil {
		t.Fatal(err)
	}
	if err := x.Put([]Doc{doc(floorSegmentSize + 1)}, nil); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, mem := segments.Count(x.text); mem == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a batch of an index at the floor waited for a nap")
		}
	}
}
