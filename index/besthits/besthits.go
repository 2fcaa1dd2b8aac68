// Package besthits is the cache of each segment's best hits of a word
// (index/DESIGN.md, "A word in most documents: each segment's best hits"
// and "Warming the best hits"): the index's one-word queries take a
// common word's best matches in a large segment from here instead of
// decoding its postings, and the warm pass builds the entries of the
// costliest words ahead of the queries once the index is quiet. It also
// holds the two pieces the index's collectors rank with as the cache
// does: a posting's term-query score (EachPosting) and the best k of what
// is offered (TopK).
package besthits

import (
	"container/list"
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/blevesearch/bleve/v2/index/scorch"
	segment "github.com/blevesearch/scorch_segment_api/v2"
)

// The best hits of a word, per segment (index/DESIGN.md, "A word in most
// documents").
//
// A one-word query ranks its matches by sqrt(frequency) times the length
// norm, both fixed when the segment is written, and a segment never
// changes after that except that documents in it are deleted (replaced by
// a newer version in a newer segment, or removed). So a segment's best
// matches of a word, computed once, stay its best for as long as it lives,
// less the ones deleted since. A query then reads the posting list of a
// common word in a large segment only for its count, which the postings'
// bitmaps answer without decoding a posting, and takes the segment's best
// from the Cache; its cost no longer grows with the number of matches.
//
// What scorch hands a query is a snapshot: its segments, each with the set
// of its documents deleted as of that snapshot. A segment's deleted set
// only grows from one snapshot to the next, so an entry computed against
// a set of n deletions applies to any snapshot where the segment has n or
// more: its hits, less the ones deleted since, are still the best of what
// is left. A query on an older snapshot (fewer deletions) reads the
// postings itself.
const (
	// bestMinPostings is the fewest live matches in one segment for which
	// the segment's best hits are cached; below it reading the postings
	// (about 20 ns each) costs less than keeping them.
	bestMinPostings = 2048
	// bestMinKeep is the fewest hits an entry keeps: a first page of 10
	// and the pages after it, with room for deletions.
	bestMinKeep = 64
	// bestMaxKeep is the most hits an entry keeps; a deeper page reads the
	// postings.
	bestMaxKeep = 4096
	// bestMaxHits bounds the hits held by all entries together (about 40
	// bytes each: 10 MiB), least recently used first out. 65,536 was
	// enough at 100,000 documents, but at a million the bench's 400 rare
	// words computed an entry for every second segment they met
	// (index/DESIGN.md, "At a million documents").
	bestMaxHits = 262144
)

// Cache is the cache of the best hits per segment and word, with
// least-recently-used eviction by the number of hits held.
type Cache struct {
	mu      sync.Mutex
	entries map[bestKey]*list.Element // of *bestEntry
	lru     list.List                 // most recent first
	held    int                       // hits of every entry

	// MinPostings and MaxHits are bestMinPostings and bestMaxHits; tests
	// change them before the cache is used.
	MinPostings uint64
	MaxHits     int

	// Used and Built count the entries used and computed by queries,
	// Warmed those computed by the warm pass (warm.go): tests, metrics.
	Used, Built, Warmed atomic.Uint64
	warmHeld            int // hits of the entries the warm pass put

	ranks *idRanks // tie-breaking while an entry is computed
}

type bestKey struct {
	seg         uint64 // scorch's segment id, unique for the index's life
	field, term string
}

type bestEntry struct {
	key      bestKey
	deleted  uint64 // size of the segment's deleted set it was built against
	hits     []Hit  // best first
	complete bool   // every match that was live then, not only the best
	warm     bool   // put by the warm pass (warm.go)
}

// Hit is a match in a segment: its document number there, its score,
// and its external id once read (to break a tie).
type Hit struct {
	Num   uint64
	Score float64
	ID    string
}

// New returns an empty cache.
func New() *Cache {
	return &Cache{entries: map[bestKey]*list.Element{}, MinPostings: bestMinPostings, MaxHits: bestMaxHits, ranks: newIDRanks()}
}

// SegmentBest returns the best k live matches of term in field in one
// segment ss of snap, best first, given the term's postings pl there. It uses or builds an
// entry; it returns ok false when the segment is better read directly
// (few matches, a page too deep, an older snapshot than the entry's).
func (b *Cache) SegmentBest(ctx context.Context, snap *scorch.IndexSnapshot, ss *scorch.SegmentSnapshot, field, term string, pl segment.PostingsList, k int) ([]Hit, bool, error) {
	if pl.Count() < b.MinPostings || k > bestMaxKeep {
		return nil, false, nil
	}
	var deleted uint64
	if d := ss.Deleted(); d != nil {
		deleted = d.GetCardinality()
	}
	key := bestKey{seg: ss.Id(), field: field, term: term}
	b.mu.Lock()
	el, found := b.entries[key]
	var e *bestEntry
	if found {
		e = el.Value.(*bestEntry)
		b.lru.MoveToFront(el)
	}
	b.mu.Unlock()
	if found && e.deleted > deleted {
		// The entry is newer than this snapshot.
		return nil, false, nil
	}
	if found {
		live := e.hits
		if e.deleted < deleted {
			live = make([]Hit, 0, len(e.hits))
			for _, h := range e.hits {
				if !ss.Deleted().Contains(uint32(h.Num)) {
					live = append(live, h)
				}
			}
		}
		if len(live) >= k || e.complete {
			b.Used.Add(1)
			return live[:min(k, len(live))], true, nil
		}
	}
	hits, err := b.build(ctx, snap, ss, key, pl, deleted, keepFor(k), false)
	if err != nil {
		return nil, false, err
	}
	return hits[:min(k, len(hits))], true, nil
}

// keepFor is how many hits an entry built for a page of k keeps.
func keepFor(k int) int { return min(max(2*k, bestMinKeep), bestMaxKeep) }

// build reads the best keep matches of key's term in segment ss of snap
// (pl: its postings less the deleted set of deleted documents) and stores
// them as the entry of key. Queries and the warm pass (warm) both build
// entries here.
func (b *Cache) build(ctx context.Context, snap *scorch.IndexSnapshot, ss *scorch.SegmentSnapshot, key bestKey, pl segment.PostingsList, deleted uint64, keep int, warm bool) ([]Hit, error) {
	hits, err := readBest(ctx, b.ranks, snap, ss, pl, keep)
	if err != nil {
		return nil, err
	}
	if warm {
		b.Warmed.Add(1)
	} else {
		b.Built.Add(1)
	}
	b.put(&bestEntry{key: key, deleted: deleted, hits: hits, complete: uint64(len(hits)) == pl.Count(), warm: warm})
	return hits, nil
}

// has reports whether key has an entry a snapshot whose segment has
// deleted deletions can use.
func (b *Cache) has(key bestKey, deleted uint64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	el, ok := b.entries[key]
	return ok && el.Value.(*bestEntry).deleted <= deleted
}

// put stores e unless an entry built against more deletions is there,
// and evicts the least recently used entries over the bound.
func (b *Cache) put(e *bestEntry) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if el, ok := b.entries[e.key]; ok {
		old := el.Value.(*bestEntry)
		if old.deleted > e.deleted {
			return
		}
		b.removeLocked(el)
	}
	b.entries[e.key] = b.lru.PushFront(e)
	b.held += len(e.hits)
	if e.warm {
		b.warmHeld += len(e.hits)
	}
	for b.held > b.MaxHits && b.lru.Len() > 1 {
		b.removeLocked(b.lru.Back())
	}
}

// removeLocked drops the entry of el.
func (b *Cache) removeLocked(el *list.Element) {
	old := el.Value.(*bestEntry)
	b.held -= len(old.hits)
	if old.warm {
		b.warmHeld -= len(old.hits)
	}
	b.lru.Remove(el)
	delete(b.entries, old.key)
}

// readBest reads every posting of pl (the postings of segment ss, its
// documents numbered from base) and returns the best keep, best first,
// ties by id. Ties are broken by the documents' ranks in the segment's id
// order (idRanks), so only the ids of the hits kept are read: reading the
// id of every match that tied with the worst hit kept so far was most of
// the cost of building an entry at a million documents, nearly all of it
// page faults on the segments' stored ids (index/DESIGN.md, "Ties inside a
// segment: id ranks").
func readBest(ctx context.Context, ranks *idRanks, snap *scorch.IndexSnapshot, ss *scorch.SegmentSnapshot, pl segment.PostingsList, keep int) ([]Hit, error) {
	rk, err := ranks.of(ss, snap.Segments())
	if err != nil {
		return nil, err
	}
	top := &TopK[Hit]{K: keep, Worse: func(a, b *Hit) bool {
		if a.Score != b.Score {
			return a.Score < b.Score
		}
		return rk[a.Num] > rk[b.Num]
	}}
	if _, err := EachPosting(ctx, pl, nil, func(num uint64, score float64) error {
		if h := (Hit{Num: num, Score: score}); top.Admits(&h) {
			top.Add(h)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	out := top.Drain()
	for i := range out {
		id, err := ss.DocID(out[i].Num)
		if err != nil {
			return nil, err
		}
		out[i].ID = string(id)
	}
	return out, nil
}

// idRanks holds, per segment, every document's rank in the order of the
// segments' external ids (deleted documents included): tie-breaking by id
// inside one segment without reading ids. A segment's ranks are read once
// from its _id dictionary, whose terms are sorted (one dictionary lookup
// per document, about half a second for a segment of a million), and
// dropped once the segment has left the index: together they hold 4
// bytes per document of the index's segments.
type idRanks struct {
	mu    sync.Mutex
	segs  map[uint64]*segRanks
	built atomic.Uint64 // segments whose ranks were read (tests, metrics)
}

type segRanks struct {
	once  sync.Once
	ranks []uint32
	err   error
}

// IDRanks returns every document's rank in the order of ss's external ids
// (read once per segment, kept while the segment lives; live is the
// snapshot's segments), so a collector breaks ties inside a segment
// without reading ids.
func (b *Cache) IDRanks(ss *scorch.SegmentSnapshot, live []*scorch.SegmentSnapshot) ([]uint32, error) {
	return b.ranks.of(ss, live)
}

func newIDRanks() *idRanks { return &idRanks{segs: map[uint64]*segRanks{}} }

// of returns the ranks of ss's documents, reading them on first use.
// Ranks of segments not in live (the segments of the snapshot ss belongs
// to) are dropped when a new segment's are read.
func (x *idRanks) of(ss *scorch.SegmentSnapshot, live []*scorch.SegmentSnapshot) ([]uint32, error) {
	x.mu.Lock()
	s, ok := x.segs[ss.Id()]
	if !ok {
		x.pruneLocked(live)
		s = &segRanks{}
		x.segs[ss.Id()] = s
	}
	x.mu.Unlock()
	s.once.Do(func() {
		s.ranks, s.err = readRanks(ss)
		x.built.Add(1)
	})
	if s.err != nil {
		x.mu.Lock()
		if x.segs[ss.Id()] == s {
			delete(x.segs, ss.Id()) // the next query tries again
		}
		x.mu.Unlock()
	}
	return s.ranks, s.err
}

// pruneLocked drops the ranks of segments not in live.
func (x *idRanks) pruneLocked(live []*scorch.SegmentSnapshot) {
	keep := make(map[uint64]bool, len(live))
	for _, ss := range live {
		keep[ss.Id()] = true
	}
	for id := range x.segs {
		if !keep[id] {
			delete(x.segs, id)
		}
	}
}

// held is the number of documents whose ranks are held (tests).
func (x *idRanks) held() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	n := 0
	for _, s := range x.segs {
		n += len(s.ranks)
	}
	return n
}

// readRanks walks ss's _id dictionary in term order and numbers its
// documents.
func readRanks(ss *scorch.SegmentSnapshot) ([]uint32, error) {
	n := int(ss.FullSize())
	ranks := make([]uint32, n)
	dict, err := ss.Segment().Dictionary("_id")
	if err != nil {
		return nil, err
	}
	var terms segment.DictionaryIterator
	if d, ok := dict.(interface {
		AutomatonIteratorOmitCount(segment.Automaton, []byte, []byte) segment.DictionaryIterator
	}); ok {
		terms = d.AutomatonIteratorOmitCount(nil, nil, nil)
	} else {
		terms = dict.AutomatonIterator(nil, nil, nil)
	}
	var pl segment.PostingsList
	var it segment.PostingsIterator
	seen := 0
	for rank := uint32(0); ; rank++ {
		e, err := terms.Next()
		if err != nil {
			return nil, err
		}
		if e == nil {
			break
		}
		if pl, err = dict.PostingsList([]byte(e.Term), nil, pl); err != nil {
			return nil, err
		}
		it = pl.Iterator(false, false, false, it)
		for {
			p, err := it.Next()
			if err != nil {
				return nil, err
			}
			if p == nil {
				break
			}
			if p.Number() >= uint64(n) {
				return nil, fmt.Errorf("index: segment %d: _id posting %d of %d documents", ss.Id(), p.Number(), n)
			}
			ranks[p.Number()] = rank
			seen++
		}
	}
	if seen != n {
		return nil, fmt.Errorf("index: segment %d: %d _id postings for %d documents", ss.Id(), seen, n)
	}
	return ranks, nil
}
