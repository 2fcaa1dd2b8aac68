package index

import (
	"container/list"
	"context"
	"sync"
	"sync/atomic"

	"github.com/blevesearch/bleve/v2/index/scorch"
	bleveindex "github.com/blevesearch/bleve_index_api"
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
// from bestHits; its cost no longer grows with the number of matches.
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

// bestHits is the cache of the best hits per segment and word, with
// least-recently-used eviction by the number of hits held.
type bestHits struct {
	mu      sync.Mutex
	entries map[bestKey]*list.Element // of *bestEntry
	lru     list.List                 // most recent first
	held    int                       // hits of every entry

	// minPostings and maxHits are the constants, changed by tests.
	minPostings uint64
	maxHits     int

	used, built atomic.Uint64 // entries used, and computed (tests, metrics)
}

type bestKey struct {
	seg         uint64 // scorch's segment id, unique for the index's life
	field, term string
}

type bestEntry struct {
	key      bestKey
	deleted  uint64   // size of the segment's deleted set it was built against
	hits     []segHit // best first
	complete bool     // every match that was live then, not only the best
}

// segHit is a match in a segment: its document number there, its score,
// and its id once read (to break a tie).
type segHit struct {
	num   uint64
	score float64
	id    string
}

// BestHits reports how many times a segment's cached best hits answered
// a one-word query (used) and how many times they were computed (built).
func (x *Index) BestHits() (used, built uint64) {
	return x.best.used.Load(), x.best.built.Load()
}

func newBestHits() *bestHits {
	return &bestHits{entries: map[bestKey]*list.Element{}, minPostings: bestMinPostings, maxHits: bestMaxHits}
}

// segmentBest returns the best k live matches of term in field in one
// segment ss of the snapshot r (whose documents are numbered from base),
// best first, given the term's postings pl there. It uses or builds an
// entry; it returns ok false when the segment is better read directly
// (few matches, a page too deep, an older snapshot than the entry's).
func (b *bestHits) segmentBest(ctx context.Context, r bleveindex.IndexReader, ss *scorch.SegmentSnapshot, base uint64, field, term string, pl segment.PostingsList, k int) ([]segHit, bool, error) {
	if pl.Count() < b.minPostings || k > bestMaxKeep {
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
			live = make([]segHit, 0, len(e.hits))
			for _, h := range e.hits {
				if !ss.Deleted().Contains(uint32(h.num)) {
					live = append(live, h)
				}
			}
		}
		if len(live) >= k || e.complete {
			b.used.Add(1)
			return live[:min(k, len(live))], true, nil
		}
	}
	keep := min(max(2*k, bestMinKeep), bestMaxKeep)
	hits, err := readBest(ctx, r, base, pl, keep)
	if err != nil {
		return nil, false, err
	}
	b.built.Add(1)
	b.put(&bestEntry{key: key, deleted: deleted, hits: hits, complete: uint64(len(hits)) == pl.Count()})
	return hits[:min(k, len(hits))], true, nil
}

// put stores e unless an entry built against more deletions is there,
// and evicts the least recently used entries over the bound.
func (b *bestHits) put(e *bestEntry) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if el, ok := b.entries[e.key]; ok {
		old := el.Value.(*bestEntry)
		if old.deleted > e.deleted {
			return
		}
		b.held -= len(old.hits)
		b.lru.Remove(el)
		delete(b.entries, e.key)
	}
	b.entries[e.key] = b.lru.PushFront(e)
	b.held += len(e.hits)
	for b.held > b.maxHits && b.lru.Len() > 1 {
		el := b.lru.Back()
		old := el.Value.(*bestEntry)
		b.held -= len(old.hits)
		b.lru.Remove(el)
		delete(b.entries, old.key)
	}
}

// readBest reads every posting of pl (a segment's, its documents numbered
// from base in r) and returns the best keep, best first, ties by id.
func readBest(ctx context.Context, r bleveindex.IndexReader, base uint64, pl segment.PostingsList, keep int) ([]segHit, error) {
	top := &topHits{r: r, k: keep}
	if _, err := offerPostings(ctx, top, pl, nil, base); err != nil {
		return nil, err
	}
	best, err := top.ranked()
	if err != nil {
		return nil, err
	}
	out := make([]segHit, len(best))
	for i, c := range best {
		out[i] = segHit{num: c.iid.Value() - base, score: c.score, id: c.id}
	}
	return out, nil
}
