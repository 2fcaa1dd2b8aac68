package index

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	bleveindex "github.com/blevesearch/bleve_index_api"
	segment "github.com/blevesearch/scorch_segment_api/v2"

	"quire/index/besthits"
)

// collect runs q on the text index and returns its hits from from to
// from+size in score order, ties in document id order, with the number of
// matches. Bleve's own collector breaks ties by the order it meets the
// documents, which a segment merge between two page requests changes (a
// page would repeat or skip documents of equal score); sorting by _id
// instead makes it load the id of every match, tripling the cost of a
// word in most documents. Here a match's id is read only when its score
// ties with the worst hit kept so far, which is rare for all but the
// matches of that one score.
func (x *Index) collect(ctx context.Context, q query.Query, from, size int) ([]Hit, uint64, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	if v, ok := q.(query.ValidatableQuery); ok {
		if err := v.Validate(); err != nil {
			return nil, 0, err
		}
	}
	r, err := x.textReader()
	if err != nil {
		return nil, 0, err
	}
	defer r.Close()
	s, err := q.Searcher(ctx, r, x.text.Mapping(), search.SearcherOptions{})
	if err != nil {
		return nil, 0, err
	}
	defer s.Close()
	sctx := &search.SearchContext{DocumentMatchPool: search.NewDocumentMatchPool(s.DocumentMatchPoolSize()+1, 0), IndexReader: r}
	var last *search.DocumentMatch
	return topN(ctx, r, from, size, func() (float64, bleveindex.IndexInternalID, error) {
		if last != nil {
			sctx.DocumentMatchPool.Put(last)
		}
		d, err := s.Next(sctx)
		if err != nil || d == nil {
			last = nil
			return 0, nil, err
		}
		last = d
		return d.Score, d.IndexInternalID, nil
	})
}

// collectTerm is collect for a query of one term and nothing else (a word
// of plain text, unfiltered: the common query), reading the term's
// postings without a searcher. Its ranking is Bleve's: a term query scores
// sqrt(frequency) times the field's length norm times factors equal for
// every match; the hits' Score is that product. In a segment where the
// term has many matches, the segment's best come from x.best (the best
// hits cache, index/besthits) and only the
// postings' count is read.
func (x *Index) collectTerm(ctx context.Context, field, term string, from, size int) ([]Hit, uint64, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	r, err := x.textReader()
	if err != nil {
		return nil, 0, err
	}
	defer r.Close()
	return x.collectTermIn(ctx, r, field, term, from, size)
}

// collectTermIn is collectTerm on the snapshot r.
func (x *Index) collectTermIn(ctx context.Context, r bleveindex.IndexReader, field, term string, from, size int) ([]Hit, uint64, error) {
	best, total, err := x.termBest(ctx, r, field, term, from+size)
	if err != nil {
		return nil, 0, err
	}
	hits, err := pageOf(r, best, from)
	return hits, total, err
}

// collectWord is collectTerm for a word of plain text (wordTerm): the
// documents with the term in their text, ranked as collectTerm ranks
// them, then the documents that have it only in their path words, ranked
// the same way among themselves. The total counts each document once.
func (x *Index) collectWord(ctx context.Context, term string, from, size int) ([]Hit, uint64, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	r, err := x.textReader()
	if err != nil {
		return nil, 0, err
	}
	defer r.Close()
	return x.collectWordIn(ctx, r, term, from, size)
}

// collectWordIn is collectWord on the snapshot r.
func (x *Index) collectWordIn(ctx context.Context, r bleveindex.IndexReader, term string, from, size int) ([]Hit, uint64, error) {
	best, total, err := x.termBest(ctx, r, fContent, term, from+size)
	if err != nil {
		return nil, 0, err
	}
	more, pathTotal, err := pathOnlyBest(ctx, r, term, from+size-len(best))
	if err != nil {
		return nil, 0, err
	}
	hits, err := pageOf(r, append(best, more...), from)
	return hits, total + pathTotal, err
}

// pathOnlyBest returns the best k documents of r that have term in their
// path words but not in their text (scored as a term query scores them,
// times pathBoost), best first, and how many there are. k may be 0: the
// count alone reads the postings' bitmaps, not the postings.
func pathOnlyBest(ctx context.Context, r bleveindex.IndexReader, term string, k int) ([]candidate, uint64, error) {
	snap, err := scorchSnapshot(r)
	if err != nil {
		return nil, 0, err
	}
	top := newTopHits(r, k)
	var total, base uint64
	var ppl, cpl segment.PostingsList
	var pit, cit segment.PostingsIterator
	for _, ss := range snap.Segments() {
		segBase := base
		base += uint64(ss.FullSize())
		var err error
		if ppl, err = segmentPostings(ss, fPath, term, ppl); err != nil {
			return nil, 0, err
		}
		if ppl.Count() == 0 {
			continue
		}
		if cpl, err = segmentPostings(ss, fContent, term, cpl); err != nil {
			return nil, 0, err
		}
		var inText *roaring.Bitmap
		n := ppl.Count()
		if cpl.Count() > 0 {
			if inText, cit, err = actualBitmap(cpl, cit); err != nil {
				return nil, 0, err
			}
			var inPath *roaring.Bitmap
			if inPath, pit, err = actualBitmap(ppl, pit); err != nil {
				return nil, 0, err
			}
			n -= inPath.AndCardinality(inText)
		}
		total += n
		if n == 0 || k == 0 {
			continue
		}
		var iid bleveindex.IndexInternalID
		pit, err = besthits.EachPosting(ctx, ppl, pit, func(num uint64, score float64) error {
			if inText != nil && inText.Contains(uint32(num)) {
				return nil
			}
			iid = bleveindex.NewIndexInternalID(iid, segBase+num)
			top.offer(candidate{score: pathBoost * score, iid: iid})
			return top.err
		})
		if err != nil {
			return nil, 0, err
		}
	}
	best, err := top.ranked()
	return best, total, err
}

// segmentPostings returns the live postings of term in field in the
// segment ss, reusing reuse (which may be nil).
func segmentPostings(ss *scorch.SegmentSnapshot, field, term string, reuse segment.PostingsList) (segment.PostingsList, error) {
	dict, err := ss.Segment().Dictionary(field)
	if err != nil {
		return nil, err
	}
	return dict.PostingsList([]byte(term), ss.Deleted(), reuse)
}

// actualBitmap returns the live documents of pl as a bitmap (not to be
// changed), and the iterator it used for reuse.
func actualBitmap(pl segment.PostingsList, it segment.PostingsIterator) (*roaring.Bitmap, segment.PostingsIterator, error) {
	it = pl.Iterator(false, false, false, it)
	o, ok := it.(segment.OptimizablePostingsIterator)
	if !ok {
		return nil, it, fmt.Errorf("index: a postings iterator is a %T, without a bitmap", it)
	}
	if bm := o.ActualBitmap(); bm != nil {
		return bm, it, nil
	}
	// A list of one match is kept without a bitmap.
	if n, ok := o.DocNum1Hit(); ok {
		return roaring.BitmapOf(uint32(n)), it, nil
	}
	return roaring.New(), it, nil
}

// termBest returns the best k matches of term in field in r, ranked, and
// how many matches there are.
func (x *Index) termBest(ctx context.Context, r bleveindex.IndexReader, field, term string, k int) ([]candidate, uint64, error) {
	snap, err := scorchSnapshot(r)
	if err != nil {
		return nil, 0, err
	}
	top := newTopHits(r, k)
	var total, base uint64
	var iid bleveindex.IndexInternalID
	var pl segment.PostingsList
	var it segment.PostingsIterator
	for _, ss := range snap.Segments() {
		segBase := base
		base += uint64(ss.FullSize())
		var err error
		if pl, err = segmentPostings(ss, field, term, pl); err != nil {
			return nil, 0, err
		}
		n := pl.Count()
		if n == 0 {
			continue
		}
		total += n
		best, ok, err := x.best.SegmentBest(ctx, snap, ss, field, term, pl, top.K)
		if err != nil {
			return nil, 0, err
		}
		if ok {
			for _, h := range best {
				iid = bleveindex.NewIndexInternalID(iid, segBase+h.Num)
				if !top.offer(candidate{score: h.Score, iid: iid, id: h.ID}) {
					break // the rest of the segment's best rank lower still
				}
			}
			if top.err != nil {
				return nil, 0, top.err
			}
		} else if it, err = offerPostings(ctx, top, pl, it, segBase); err != nil {
			return nil, 0, err
		}
	}
	best, err := top.ranked()
	return best, total, err
}

// offerPostings offers top every posting of pl, a segment's whose
// documents are numbered from base, scored as a term query scores them.
// It returns the iterator for reuse (it may be nil).
func offerPostings(ctx context.Context, top *topHits, pl segment.PostingsList, it segment.PostingsIterator, base uint64) (segment.PostingsIterator, error) {
	var iid bleveindex.IndexInternalID
	return besthits.EachPosting(ctx, pl, it, func(num uint64, score float64) error {
		iid = bleveindex.NewIndexInternalID(iid, base+num)
		top.offer(candidate{score: score, iid: iid})
		return top.err
	})
}

// BestHits reports how many times a segment's cached best hits answered
// a one-word query (used) and how many times they were computed (built).
func (x *Index) BestHits() (used, built uint64) {
	return x.best.Used.Load(), x.best.Built.Load()
}

func (x *Index) textReader() (bleveindex.IndexReader, error) {
	adv, err := x.text.Advanced()
	if err != nil {
		return nil, err
	}
	return adv.Reader()
}

// scorchSnapshot is r as the scorch snapshot whose segments the
// collectors read.
func scorchSnapshot(r bleveindex.IndexReader) (*scorch.IndexSnapshot, error) {
	snap, ok := r.(*scorch.IndexSnapshot)
	if !ok {
		return nil, fmt.Errorf("index: the text index reader is a %T, not scorch's", r)
	}
	return snap, nil
}

// topN keeps the best from+size of the matches next returns (a nil id
// ends them; the id may be reused after the next call) and returns those
// from from on, best first, with the number of matches.
func topN(ctx context.Context, r bleveindex.IndexReader, from, size int, next func() (float64, bleveindex.IndexInternalID, error)) ([]Hit, uint64, error) {
	top := newTopHits(r, from+size)
	var total uint64
	for {
		if total&255 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, 0, err
			}
		}
		score, iid, err := next()
		if err != nil {
			return nil, 0, err
		}
		if iid == nil {
			break
		}
		total++
		top.offer(candidate{score: score, iid: iid})
		if top.err != nil {
			return nil, 0, top.err
		}
	}
	best, err := top.ranked()
	if err != nil {
		return nil, 0, err
	}
	hits, err := pageOf(r, best, from)
	return hits, total, err
}

// pageOf returns the hits of best (ranked) from from on, reading the ids
// not read yet.
func pageOf(r bleveindex.IndexReader, best []candidate, from int) ([]Hit, error) {
	if from >= len(best) {
		return nil, nil
	}
	hits := make([]Hit, 0, len(best)-from)
	for _, c := range best[from:] {
		if c.id == "" {
			var err error
			if c.id, err = r.ExternalID(c.iid); err != nil {
				return nil, err
			}
		}
		site, id := SplitID(c.id)
		hits = append(hits, Hit{Site: site, ID: id, Score: c.score})
	}
	return hits, nil
}

type candidate struct {
	score float64
	iid   bleveindex.IndexInternalID
	id    string // external id, read when needed
}

// topHits keeps the best k hits offered, the worst on top.
type topHits struct {
	besthits.TopK[candidate]
	r   bleveindex.IndexReader
	err error // of reading an id
}

func newTopHits(r bleveindex.IndexReader, k int) *topHits {
	t := &topHits{r: r}
	t.K, t.Worse = k, t.worseHit
	return t
}

// offer keeps c (a copy of its iid) if it ranks among the best k so far,
// and reports whether it did. A match scoring below the worst kept is
// turned away here, without the comparison through worse: that takes c's
// address, which moved every match offered to the heap (a sixth of a
// fragment query's CPU at 100,000 documents: index/DESIGN.md,
// "Fragments").
func (t *topHits) offer(c candidate) bool {
	if t.K == 0 || len(t.H) == t.K && c.score < t.H[0].score {
		return false
	}
	return t.offerRanked(c)
}

// offerRanked is offer for a match that may rank among the best k.
func (t *topHits) offerRanked(c candidate) bool {
	if !t.Admits(&c) {
		return false
	}
	c.iid = slices.Clone(c.iid)
	t.Add(c)
	return true
}

// ranked empties t and returns what it kept, best first.
func (t *topHits) ranked() ([]candidate, error) {
	return t.Drain(), t.err
}

// idOf reads (once) the external id of c.
func (t *topHits) idOf(c *candidate) string {
	if c.id == "" && t.err == nil {
		c.id, t.err = t.r.ExternalID(c.iid)
	}
	return c.id
}

// worseHit reports whether a ranks below b: a lower score, or the same
// score and a greater id.
func (t *topHits) worseHit(a, b *candidate) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return strings.Compare(t.idOf(a), t.idOf(b)) > 0
}
