package index

import (
	"context"
	"math"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/search/query"
	bleveindex "github.com/blevesearch/bleve_index_api"
	segment "github.com/blevesearch/scorch_segment_api/v2"

	"quire/index/besthits"
)

// fragmentTerms is the query of a fragment of plain text (wordQuery): the
// terms it begins in the text (content) and in the path words (path), as
// a disjunction. Text recognizes it when it is the whole query and ranks
// the union from the postings (collectFragment) instead of through
// Bleve's disjunction searcher, whose heap of term searchers and a match
// object per document were most of a fragment's cost at 100,000
// documents (index/DESIGN.md, "Fragments"). On a site that indexes
// compound parts (compoundWordQuery) it is also the query of a word with
// its parts: contentParts (words of the text it begins) and parts (terms
// of fParts), a tier between the text and the path words.
type fragmentTerms struct {
	*query.DisjunctionQuery
	content, path       []string
	contentParts, parts []string
	// word: content is the word itself (a term of the index), not the
	// words a fragment begins.
	word bool
}

// newFragmentTerms returns the disjunction of the terms in their fields,
// the parts weighed by partBoost and the path words by pathBoost: a
// *fragmentTerms, or the term query when there is one term.
func newFragmentTerms(content, contentParts, parts, path []string) query.Query {
	qs := make([]query.Query, 0, len(content)+len(contentParts)+len(parts)+len(path))
	for _, t := range content {
		qs = append(qs, termQuery(fContent, t))
	}
	for _, t := range contentParts {
		qs = append(qs, boosted(termQuery(fContent, t), partBoost))
	}
	for _, t := range parts {
		qs = append(qs, boosted(termQuery(fParts, t), partBoost))
	}
	for _, t := range path {
		qs = append(qs, pathQuery(termQuery(fPath, t)))
	}
	if len(qs) == 1 {
		return qs[0]
	}
	return &fragmentTerms{DisjunctionQuery: bleve.NewDisjunctionQuery(qs...), content: content, path: path, contentParts: contentParts, parts: parts}
}

// hasParts reports whether f has a tier of compound parts.
func (f *fragmentTerms) hasParts() bool { return len(f.contentParts)+len(f.parts) > 0 }

// isCompound reports whether q is the query of a word with compound parts.
func isCompound(q query.Query) bool {
	f, ok := q.(*fragmentTerms)
	return ok && f.hasParts()
}

// collectFragment answers a fragment alone, in two tiers as collectWord
// answers a word: the documents with one of the terms in their text,
// then those that have one only in their path words. Within a tier a
// document scores the sum over the terms it has of idf² · sqrt(frequency)
// · the field's length norm (a term query's factors; idf = 1 + ln(N /
// (df + 1)) over the index, so a rare word weighs more), the path tier
// times pathBoost; ties by id. The total counts each document once. A
// word with compound parts has a tier between those two: the documents
// with a part and not the word in their text, times partBoost. site, when
// not "", keeps the documents of that site only (an index of several
// sites). Unfiltered, the tier of a word the index has is the word's best
// hits as collectWord ranks them (termBest: cached for a common word), and
// only the parts' and path words' postings are summed here.

func (x *Index) collectFragment(ctx context.Context, f *fragmentTerms, site string, from, size int) ([]Hit, uint64, error) {
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
	var cpw, fpw []float64
	if f.hasParts() {
		if cpw, err = termWeights(snap, fContent, f.contentParts, n); err != nil {
			return nil, 0, err
		}
		if fpw, err = termWeights(snap, fParts, f.parts, n); err != nil {
			return nil, 0, err
		}
	}
	k := from + size
	var best []candidate
	var total uint64
	wordFirst := site == "" && f.word && len(f.content) == 1
	if wordFirst {
		if best, total, err = x.termBest(ctx, r, fContent, f.content[0], k); err != nil {
			return nil, 0, err
		}
	}
	var wordPL segment.PostingsList
	var wordIt segment.PostingsIterator
	text, path := newTopHits(r, k), newTopHits(r, k)
	tiers := []*topHits{text, path}
	var parts *topHits
	if f.hasParts() {
		parts = newTopHits(r, k)
		tiers = []*topHits{text, parts, path}
	}
	var base uint64
	var sitePL segment.PostingsList
	var siteIt segment.PostingsIterator
	// The accumulator goes back to the pool clean: only after every
	// segment's scores were offered (and so cleared).
	acc := fragmentAccs.Get().(*fragmentAcc)
	for _, ss := range snap.Segments() {
		segBase := base
		base += uint64(ss.FullSize())
		acc.only = nil
		if site != "" {
			if sitePL, err = segmentPostings(ss, fSite, site, sitePL); err != nil {
				return nil, 0, err
			}
			if sitePL.Count() == 0 {
				continue
			}
			if acc.only, siteIt, err = actualBitmap(sitePL, siteIt); err != nil {
				return nil, 0, err
			}
		}
		var inText *roaring.Bitmap
		if wordFirst {
			// Counted and ranked by termBest: only which documents.
			if wordPL, err = segmentPostings(ss, fContent, f.content[0], wordPL); err != nil {
				return nil, 0, err
			}
			inText = roaring.New()
			if wordPL.Count() > 0 {
				if inText, wordIt, err = actualBitmap(wordPL, wordIt); err != nil {
					return nil, 0, err
				}
			}
		} else {
			if inText, err = acc.add(ctx, ss, fContent, f.content, cw, nil); err != nil {
				return nil, 0, err
			}
			total += inText.GetCardinality()
			if err := acc.offer(text, inText, segBase, 1); err != nil {
				return nil, 0, err
			}
		}
		before := inText
		if f.hasParts() {
			inParts, err := acc.add(ctx, ss, fContent, f.contentParts, cpw, inText)
			if err != nil {
				return nil, 0, err
			}
			more, err := acc.add(ctx, ss, fParts, f.parts, fpw, inText)
			if err != nil {
				return nil, 0, err
			}
			inParts.Or(more)
			total += inParts.GetCardinality()
			if err := acc.offer(parts, inParts, segBase, partBoost); err != nil {
				return nil, 0, err
			}
			before = roaring.Or(inText, inParts)
		}
		inPath, err := acc.add(ctx, ss, fPath, f.path, pw, before)
		if err != nil {
			return nil, 0, err
		}
		total += inPath.GetCardinality()
		if err := acc.offer(path, inPath, segBase, pathBoost); err != nil {
			return nil, 0, err
		}
	}
	acc.only = nil
	fragmentAccs.Put(acc)
	for _, tier := range tiers {
		if len(best) >= k {
			break
		}
		more, err := tier.ranked()
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
	only  *roaring.Bitmap // when not nil, the segment's documents to count (a site's)
}

var fragmentAccs = sync.Pool{New: func() any { return &fragmentAcc{} }}

// add sums into a.score the weighted scores of terms in field of the
// segment ss for the documents not in skip (and in a.only, when set), and
// returns those documents.
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
		a.it, err = besthits.EachPosting(ctx, a.pl, a.it, func(num uint64, score float64) error {
			if skip != nil && skip.Contains(uint32(num)) || a.only != nil && !a.only.Contains(uint32(num)) {
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
		if top.K == 0 || len(top.H) == top.K && s*boost < top.H[0].score {
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
