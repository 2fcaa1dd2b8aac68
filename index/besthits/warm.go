package besthits

import (
	"context"

	"github.com/blevesearch/bleve/v2/index/scorch"
	segment "github.com/blevesearch/scorch_segment_api/v2"
)

// The warm pass (index/DESIGN.md, "Warming the best hits"). A word's
// first one-word query in a segment reads all its postings there to
// build the segment's entry: at a million documents, a word in a fifth of
// them is about 200,000 postings, and those first queries are the p99.
// Once the index is quiet, the warm pass builds the entries of the
// costliest words ahead of the queries: for each segment of the text
// index's current snapshot it walks the field's dictionary, keeps the
// (segment, word) pairs with at least MinPostings live matches and no
// entry yet, the most matches first, and builds their entries as a
// first-page query would, until half of the cache's bound is held by
// warmed entries (the rest is left to what queries build).

// WarmKeep is the hits a warmed entry keeps: what a query of a first
// page (up to 32 hits) builds.
var WarmKeep = keepFor(10)

// WarmHook, when set (tests), is called after each entry the warm pass
// builds.
var WarmHook func()

// warmCand is a (segment, word) pair the warm pass may build.
type warmCand struct {
	seg   int // in the snapshot's segments
	term  string
	count uint64 // live matches
}

// Warm is the warm pass: it builds the entries of field's words with the
// most live matches per segment of snap, as queries would, within the
// warm budget (half of MaxHits held by warmed entries), and returns the
// entries it built and the hits they hold. It stops with ctx's error
// when ctx is canceled.
func (b *Cache) Warm(ctx context.Context, snap *scorch.IndexSnapshot, field string) (entries, hits int, err error) {
	segs := snap.Segments()
	b.dropGone(segs)
	budget := b.warmBudget()
	if budget < 1 {
		return 0, 0, nil
	}
	// The candidates: as many pairs as the budget can hold, those with
	// the most matches, in a heap with the fewest on top. An entry holds
	// WarmKeep hits, or every match if fewer (minPostings is larger in
	// production: budget / WarmKeep pairs).
	smallest := max(min(uint64(WarmKeep), b.MinPostings), 1)
	top := &TopK[warmCand]{K: max(budget/int(smallest), 1), Worse: func(a, c *warmCand) bool {
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
			if e.Count < b.MinPostings {
				continue
			}
			c := warmCand{seg: i, term: e.Term, count: e.Count}
			if !top.Admits(&c) {
				continue
			}
			if deleted > 0 {
				if pl, err = dict.PostingsList([]byte(e.Term), ss.Deleted(), pl); err != nil {
					return 0, 0, err
				}
				if c.count = pl.Count(); c.count < b.MinPostings || !top.Admits(&c) {
					continue
				}
			}
			if b.has(bestKey{seg: ss.Id(), field: field, term: e.Term}, deleted) {
				continue
			}
			top.Add(c)
		}
	}
	for _, c := range top.Drain() {
		if err := ctx.Err(); err != nil {
			return entries, hits, err
		}
		keep := int(min(uint64(WarmKeep), c.count))
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
		got, err := b.build(ctx, snap, ss, key, pl, deleted, WarmKeep, true)
		if err != nil {
			return entries, hits, err
		}
		entries++
		hits += len(got)
		if WarmHook != nil {
			WarmHook()
		}
	}
	return entries, hits, nil
}

// warmBudget is how many hits the warm pass may add: warmed entries hold
// at most half the bound, and the pass evicts nothing queries built.
func (b *Cache) warmBudget() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return min(b.MaxHits/2-b.warmHeld, b.MaxHits-b.held)
}

// dropGone drops the entries of segments that left the index before
// snapshot segs was taken (merged away): they would never be used again.
// Segment ids grow, so an id above segs' largest is a newer segment.
func (b *Cache) dropGone(segs []*scorch.SegmentSnapshot) {
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

// WarmHeld returns the hits held by the entries the warm pass put
// (tests).
func (b *Cache) WarmHeld() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.warmHeld
}

// Terms returns the terms the cache holds entries of, with how many
// segments each (tests).
func (b *Cache) Terms() map[string]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := map[string]int{}
	for k := range b.entries {
		m[k.term]++
	}
	return m
}
