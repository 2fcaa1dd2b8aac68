package index

import (
	"context"
	"math"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/search/query"
	bleveindex "github.com/blevesearch/bleve_index_api"
	segment "github.com/blevesearch/scorch_segment_api/v2"
)

// fragmentTerms is the query of a fragment of plain text (wordQuery): the
// terms it begins in the text (content) and in the path words (path), as
// a disjunction. Text recognizes it when it is the whole query and ranks
// the union from the postings (collectFragment) instead of through
// Bleve's disjunction searcher, whose heap of term searchers and a match
// object per document were most of a fragment's cost at 100,000
// documents (index/DESIGN.md, "Fragments").
type fragmentTerms struct {
	*query.DisjunctionQuery
	content, path []string
}

// collectFragment answers a fragment alone, in two tiers as collectWord
// answers a word: the documents with one of the terms in their text,
// then those that have one only in their path words. Within a tier a
// document scores the sum over the terms it has of idf² · sqrt(frequency)
// · the field's length norm (a term query's factors; idf = 1 + ln(N /
// (df + 1)) over the index, so a rare word weighs more), the path tier
// times pathBoost; ties by id. The total counts each document once.
func (x *Index) collectFragment(ctx context.Context, f *fragmentTerms, from, size int) ([]Hit, uint64, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	r, err := x.textReader()
	if err != nil {
		return nil, 0, err
	}
	defer r.Close()
	snap, err := scorchSnapshot(r)
	if err != nil {
		return nil, 0, err
	}
	n, err := r.DocCount()
	if err != nil {
		return nil, 0, err
	}
	cw, err := termWeights(snap, fContent, f.content, n)
	if err != nil {
		return nil, 0, err
	}
	pw, err := termWeights(snap, fPath, f.path, n)
	if err != nil {
		return nil, 0, err
	}
	k := from + size
	text, path := newTopHits(r, k), newTopHits(r, k)
	var total, base uint64
	// The accumulator goes back to the pool clean: only after every
	// segment's scores were offered (and so cleared).
	acc := fragmentAccs.Get().(*fragmentAcc)
	for _, ss := range snap.Segments() {
		segBase := base
		base += uint64(ss.FullSize())
		inText, err := acc.add(ctx, ss, fContent, f.content, cw, nil)
		if err != nil {
			return nil, 0, err
		}
		total += inText.GetCardinality()
		if err := acc.offer(text, inText, segBase, 1); err != nil {
			return nil, 0, err
		}
		inPath, err := acc.add(ctx, ss, fPath, f.path, pw, inText)
		if err != nil {
			return nil, 0, err
		}
		total += inPath.GetCardinality()
		if err := acc.offer(path, inPath, segBase, pathBoost); err != nil {
			return nil, 0, err
		}
	}
	fragmentAccs.Put(acc)
	best, err := text.ranked()
	if err != nil {
		return nil, 0, err
	}
	if len(best) < k {
		more, err := path.ranked()
		if err != nil {
			return nil, 0, err
		}
		best = append(best, more[:min(len(more), k-len(best))]...)
	}
	hits, err := pageOf(r, best, from)
	return hits, total, err
}

// termWeights returns idf² of each of terms in field over the n documents
// of snap.
func termWeights(snap *scorch.IndexSnapshot, field string, terms []string, n uint64) ([]float64, error) {
	out := make([]float64, len(terms))
	var pl segment.PostingsList
	for i, t := range terms {
		var df uint64
		for _, ss := range snap.Segments() {
			var err error
			if pl, err = segmentPostings(ss, field, t, pl); err != nil {
				return nil, err
			}
			df += pl.Count()
		}
		idf := 1 + math.Log(float64(n)/float64(df+1))
		out[i] = idf * idf
	}
	return out, nil
}

// fragmentAcc accumulates the scores of one segment's documents.
type fragmentAcc struct {
	score []float64 // by document number in the segment
	pl    segment.PostingsList
	it    segment.PostingsIterator
}

var fragmentAccs = sync.Pool{New: func() any { return &fragmentAcc{} }}

// add sums into a.score the weighted scores of terms in field of the
// segment ss for the documents not in skip, and returns those documents.
func (a *fragmentAcc) add(ctx context.Context, ss *scorch.SegmentSnapshot, field string, terms []string, w []float64, skip *roaring.Bitmap) (*roaring.Bitmap, error) {
	if size := int(ss.FullSize()); len(a.score) < size {
		a.score = make([]float64, size)
	}
	docs := roaring.New()
	for i, t := range terms {
		var err error
		if a.pl, err = segmentPostings(ss, field, t, a.pl); err != nil {
			return nil, err
		}
		if a.pl.Count() == 0 {
			continue
		}
		a.it, err = eachPosting(ctx, a.pl, a.it, func(num uint64, score float64) error {
			if skip != nil && skip.Contains(uint32(num)) {
				return nil
			}
			docs.Add(uint32(num))
			a.score[num] += w[i] * score
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return docs, nil
}

// offer offers top the documents docs of a segment numbered from base,
// with their accumulated scores times boost, and clears those scores.
func (a *fragmentAcc) offer(top *topHits, docs *roaring.Bitmap, base uint64, boost float64) error {
	var iid bleveindex.IndexInternalID
	it := docs.Iterator()
	for it.HasNext() {
		num := it.Next()
		s := a.score[num]
		a.score[num] = 0
		if top.k == 0 || len(top.h) == top.k && s*boost < top.h[0].score {
			continue
		}
		iid = bleveindex.NewIndexInternalID(iid, base+uint64(num))
		top.offer(candidate{score: s * boost, iid: iid})
		if top.err != nil {
			return top.err
		}
	}
	return nil
}
