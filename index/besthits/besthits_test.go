package besthits

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
)

// snapshotOf writes batches of n documents each (ids in no order, one
// to four times "word" among filler) to a new scorch index, one segment
// per batch, and returns a snapshot of it, closed with the test.
func snapshotOf(t *testing.T, batches, n int) *scorch.IndexSnapshot {
	t.Helper()
	b, err := bleve.NewUsing(t.TempDir(), bleve.NewIndexMapping(), scorch.Name, scorch.Name, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	r := rand.New(rand.NewPCG(9, 10))
	for seq := range batches {
		batch := b.NewBatch()
		for i := range n {
			var words []string
			for range 1 + r.IntN(4) {
				words = append(words, "word")
			}
			for range r.IntN(6) {
				words = append(words, "other", "filler")
			}
			id := fmt.Sprintf("default/d%06d", (r.IntN(1000)*1000+i)*10+seq)
			if err := batch.Index(id, map[string]any{"content": strings.Join(words, " ")}); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Batch(batch); err != nil {
			t.Fatal(err)
		}
	}
	adv, err := b.Advanced()
	if err != nil {
		t.Fatal(err)
	}
	rd, err := adv.Reader()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rd.Close() })
	return rd.(*scorch.IndexSnapshot)
}

// TestBestHits_Bound: the entries together hold at most MaxHits hits,
// the least recently used going first.
func TestBestHits_Bound(t *testing.T) {
	b := New()
	b.MaxHits = 100
	for i := range 10 {
		b.put(&bestEntry{key: bestKey{seg: uint64(i), field: "f", term: "t"}, hits: make([]Hit, 30)})
		if b.held > b.MaxHits {
			t.Fatalf("after %d entries %d hits are held, more than %d", i+1, b.held, b.MaxHits)
		}
	}
	if _, ok := b.entries[bestKey{seg: 9, field: "f", term: "t"}]; !ok {
		t.Fatal("the entry put last was evicted")
	}
	if _, ok := b.entries[bestKey{seg: 0, field: "f", term: "t"}]; ok {
		t.Fatal("the entry put first is still held")
	}
	if n := len(b.entries); n != b.lru.Len() || n != 3 {
		t.Fatalf("%d entries in the map and %d in the list, want 3 each", n, b.lru.Len())
	}
}

// TestIDRanks_IDOrder: a segment's ranks number its documents in the
// order of their ids, and reading a segment's ranks drops those of the
// segments not in the snapshot it came from.
func TestIDRanks_IDOrder(t *testing.T) {
	snap := snapshotOf(t, 4, 150)
	segs := snap.Segments()
	if len(segs) < 2 {
		t.Fatalf("%d segments, want several", len(segs))
	}
	ranks := newIDRanks()
	for _, ss := range segs {
		rk, err := ranks.of(ss, segs)
		if err != nil {
			t.Fatal(err)
		}
		if len(rk) != int(ss.FullSize()) {
			t.Fatalf("segment %d: %d ranks for %d documents", ss.Id(), len(rk), ss.FullSize())
		}
		byRank := make([]string, len(rk))
		for num, rank := range rk {
			if int(rank) >= len(rk) || byRank[rank] != "" {
				t.Fatalf("segment %d: rank %d of document %d is out of range or taken", ss.Id(), rank, num)
			}
			id, err := ss.DocID(uint64(num))
			if err != nil {
				t.Fatal(err)
			}
			byRank[rank] = string(id)
		}
		if !slices.IsSorted(byRank) {
			t.Fatalf("segment %d: ids in rank order are not sorted: %v", ss.Id(), byRank)
		}
	}
	if got := ranks.built.Load(); got != uint64(len(segs)) {
		t.Fatalf("ranks read %d times for %d segments", got, len(segs))
	}
	if _, err := ranks.of(segs[0], segs); err != nil || ranks.built.Load() != uint64(len(segs)) {
		t.Fatalf("asking again read the ranks again (err %v)", err)
	}
	last := segs[len(segs)-1]
	ranks.segs = map[uint64]*segRanks{}
	if _, err := ranks.of(segs[0], segs); err != nil {
		t.Fatal(err)
	}
	if _, err := ranks.of(last, segs[len(segs)-1:]); err != nil {
		t.Fatal(err)
	}
	if got, want := ranks.held(), int(last.FullSize()); got != want {
		t.Fatalf("%d ranks held after the other segments left, want %d", got, want)
	}
}
