package index

import (
	"context"
	"fmt"
	"time"

	"github.com/blevesearch/bleve/v2/index/scorch"
	segment "github.com/blevesearch/scorch_segment_api/v2"
)

// Warming the best hits (index/DESIGN.md, "Warming"). A word's first
// one-word query in a segment reads all its postings there to build the
// segment's entry in bestHits: at a million documents, a word in a fifth
// of them is about 200,000 postings, and those first queries are the
// p99. Once the index is quiet (after the idle merge, merge.go), the warm
// pass builds the entries of the costliest words ahead of the queries:
// for each segment of the text index's current snapshot it walks the
// content field's dictionary, keeps the (segment, word) pairs with at
// least minPostings live matches and no entry yet, the most matches
// first, and builds their entries as a first-page query would, until
// half of the cache's bound is held by warmed entries (the rest is left
// to what queries build). A change cancels it, like the idle merge.

// warmKeep is the hits a warmed entry keeps: what a query of a first
// page (up to 32 hits) builds.
var warmKeep = keepFor(10)

// warmHook, when set (tests), is called after each entry the warm pass
// builds.
var warmHook func()

// warmBest runs the warm pass on the text index's current snapshot and
// returns the entries it built and the hits they hold. It stops with
// ctx's error when ctx is canceled.
func (x *Index) warmBest(ctx context.Context) (entries, hits int, err error) {
	r, err := x.textReader()
	if err != nil {
		return 0, 0, err
	}
	defer r.Close()
	snap, ok := r.(*scorch.IndexSnapshot)
	if !ok {
		return 0, 0, fmt.Errorf("index: the text index reader is a %T, not scorch's", r)
	}
	return x.best.warm(ctx, snap, fContent)
}

// warmCand is a (segment, word) pair the warm pass may build.
type warmCand struct {
	seg   int // in the snapshot's segments
	term  string
	count uint64 // live matches
}

// warm builds the entries of field's words with the most live matches
// per segment of snap, as queries would, within the warm budget.
func (b *bestHits) warm(ctx context.Context, snap *scorch.IndexSnapshot, field string) (entries, hits int, err error) {
	segs := snap.Segments()
	b.dropGone(segs)
	budget := b.warmBudget()
	if budget < 1 {
		return 0, 0, nil
	}
	// The candidates: as many pairs as the budget can hold, those with
	// the most matches, in a heap with the fewest on top. An entry holds
	// warmKeep hits, or every match if fewer (minPostings is larger in
	// production: budget / warmKeep pairs).
	smallest := max(min(uint64(warmKeep), b.minPostings), 1)
	top := &worstFirst[warmCand]{k: max(budget/int(smallest), 1), worse: func(a, c *warmCand) bool {
		if a.count != c.count {
			return a.count < c.count
		}
		if a.seg != c.seg {
			return a.seg > c.seg
		}
		return a.term > c.term
	}}
	var pl segment.PostingsList
	for i, ss := range segs {
		var deleted uint64
		if d := ss.Deleted(); d != nil {
			deleted = d.GetCardinality()
		}
		dict, err := ss.Segment().Dictionary(field)
		if err != nil {
			return 0, 0, err
		}
		terms := dict.AutomatonIterator(nil, nil, nil)
		for n := 0; ; n++ {
			if n&255 == 0 {
				if err := ctx.Err(); err != nil {
					return 0, 0, err
				}
			}
			e, err := terms.Next()
			if err != nil {
				return 0, 0, err
			}
			if e == nil {
				break
			}
			// e.Count counts deleted documents too: an upper bound.
			if e.Count < b.minPostings {
				continue
			}
			c := warmCand{seg: i, term: e.Term, count: e.Count}
			if !top.admits(&c) {
				continue
			}
			if deleted > 0 {
				if pl, err = dict.PostingsList([]byte(e.Term), ss.Deleted(), pl); err != nil {
					return 0, 0, err
				}
				if c.count = pl.Count(); c.count < b.minPostings || !top.admits(&c) {
					continue
				}
			}
			if b.has(bestKey{seg: ss.Id(), field: field, term: e.Term}, deleted) {
				continue
			}
			top.add(c)
		}
	}
	for _, c := range top.drain() {
		if err := ctx.Err(); err != nil {
			return entries, hits, err
		}
		keep := int(min(uint64(warmKeep), c.count))
		if hits+keep > budget {
			break
		}
		ss := segs[c.seg]
		var deleted uint64
		if d := ss.Deleted(); d != nil {
			deleted = d.GetCardinality()
		}
		key := bestKey{seg: ss.Id(), field: field, term: c.term}
		if b.has(key, deleted) {
			continue // a query built it meanwhile
		}
		dict, err := ss.Segment().Dictionary(field)
		if err != nil {
			return entries, hits, err
		}
		if pl, err = dict.PostingsList([]byte(c.term), ss.Deleted(), pl); err != nil {
			return entries, hits, err
		}
		got, err := b.build(ctx, snap, ss, key, pl, deleted, warmKeep, true)
		if err != nil {
			return entries, hits, err
		}
		entries++
		hits += len(got)
		if warmHook != nil {
			warmHook()
		}
	}
	return entries, hits, nil
}

// warmBudget is how many hits the warm pass may add: warmed entries hold
// at most half the bound, and the pass evicts nothing queries built.
func (b *bestHits) warmBudget() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return min(b.maxHits/2-b.warmHeld, b.maxHits-b.held)
}

// dropGone drops the entries of segments that left the index before
// snapshot segs was taken (merged away): they would never be used again.
// Segment ids grow, so an id above segs' largest is a newer segment.
func (b *bestHits) dropGone(segs []*scorch.SegmentSnapshot) {
	live := make(map[uint64]bool, len(segs))
	var newest uint64
	for _, ss := range segs {
		live[ss.Id()] = true
		newest = max(newest, ss.Id())
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for el := b.lru.Front(); el != nil; {
		next := el.Next()
		if id := el.Value.(*bestEntry).key.seg; id < newest && !live[id] {
			b.removeLocked(el)
		}
		el = next
	}
}

// WarmStats reports the warm passes that ran to the end (done), those a
// change or Close stopped (yielded), and the entries they built.
func (ix *Indexer) WarmStats() (done, yielded, entries uint64) {
	return ix.warmDone.Load(), ix.warmYielded.Load(), ix.x.best.warmed.Load()
}

// Warming reports whether the warm pass runs, or follows the idle merge
// that just ended (no gap between Merging and Warming).
func (ix *Indexer) Warming() bool { return ix.warmPending.Load() && !ix.merging.Load() }

// idleWarm runs the warm pass, stopped by a change or Close as the idle
// merge is.
func (ix *Indexer) idleWarm() error {
	// A change since the quiet period began (the idle merge yielded to
	// it, or it came after) or Close cancels it before it starts.
	ctx, cancel := ix.idleContext()
	defer cancel()
	began := time.Now()
	entries, hits, err := ix.x.warmBest(ctx)
	// A pass that built nothing (all warm already, or a change before
	// it began) logs at debug level: it follows every quiet period.
	logf := ix.log.Info
	if entries == 0 {
		logf = ix.log.Debug
	}
	if ctx.Err() != nil {
		ix.warmYielded.Add(1)
		logf("index warm pass yielded to a change", "entries", entries, "hits", hits, "took", time.Since(began).Round(time.Millisecond))
		return nil
	}
	if err != nil {
		return err
	}
	ix.warmDone.Add(1)
	logf("index idle: best hits warmed", "entries", entries, "hits", hits, "took", time.Since(began).Round(time.Millisecond))
	return nil
}
