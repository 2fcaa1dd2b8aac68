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
		var rk []uint32 // the segment's id ranks, read when it has a match
		ranks := func() ([]uint32, error) {
			var err error
			if rk == nil {
				rk, err = x.best.IDRanks(ss, snap.Segments())
			}
			return rk, err
		}
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
		var word *roaring.Bitmap // the word's documents, when termBest ranks them
		if wordFirst {
			// Counted and ranked by termBest: only which documents.
			if wordPL, err = segmentPostings(ss, fContent, f.content[0], wordPL); err != nil {
				return nil, 0, err
			}
			if wordPL.Count() > 0 {
				if word, wordIt, err = actualBitmap(wordPL, wordIt); err != nil {
					return nil, 0, err
				}
			}
		} else {
			if err := acc.add(ctx, ss, fContent, f.content, cw, tierText, nil); err != nil {
				return nil, 0, err
			}
		}
		if f.hasParts() {
			if err := acc.add(ctx, ss, fContent, f.contentParts, cpw, tierParts, word); err != nil {
				return nil, 0, err
			}
			if err := acc.add(ctx, ss, fParts, f.parts, fpw, tierParts, word); err != nil {
				return nil, 0, err
			}
		}
		if err := acc.add(ctx, ss, fPath, f.path, pw, tierPath, word); err != nil {
			return nil, 0, err
		}
		for _, t := range []struct {
			tier  uint8
			top   *topHits
			boost float64
		}{{tierText, text, 1}, {tierParts, parts, partBoost}, {tierPath, path, pathBoost}} {
			total += uint64(len(acc.docs[t.tier]))
			if err := acc.offer(t.top, t.tier, segBase, t.boost, ranks); err != nil {
				return nil, 0, err
			}
		}
		acc.clearMarks()
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
	// tier marks a document of the segment with the tier it was found in
	// first (tierText, tierParts, tierPath; 0: none), and docs lists each
	// tier's documents in the order they were found: a later tier leaves
	// out the documents of an earlier one. Slices, not bitmaps: adding
	// every match to a roaring bitmap, and looking earlier tiers' up in
	// them, was about a tenth of a fragment query's CPU.
	tier []uint8
	docs [tierPath + 1][]uint32
	pl   segment.PostingsList
	it   segment.PostingsIterator
	only *roaring.Bitmap             // when not nil, the segment's documents to count (a site's)
	seg  besthits.TopK[besthits.Hit] // the segment's best, offered to a tier (offer)
}

// The tiers of collectFragment, in rank order.
const (
	tierText uint8 = 1 + iota
	tierParts
	tierPath
)

var fragmentAccs = sync.Pool{New: func() any { return &fragmentAcc{} }}

// add sums into a.score the weighted scores of terms in field of the
// segment ss for the documents of tier, leaving out those of an earlier
// tier, those in skip and, when a.only is set, those not in it.
func (a *fragmentAcc) add(ctx context.Context, ss *scorch.SegmentSnapshot, field string, terms []string, w []float64, tier uint8, skip *roaring.Bitmap) error {
	if size := int(ss.FullSize()); len(a.score) < size {
		a.score = make([]float64, size)
		a.tier = make([]uint8, size)
	}
	docs := a.docs[tier]
	for i, t := range terms {
		var err error
		if a.pl, err = segmentPostings(ss, field, t, a.pl); err != nil {
			return err
		}
		if a.pl.Count() == 0 {
			continue
		}
		a.it, err = besthits.EachPosting(ctx, a.pl, a.it, func(num uint64, score float64) error {
			switch a.tier[num] {
			case tier:
			case 0:
				if skip != nil && skip.Contains(uint32(num)) || a.only != nil && !a.only.Contains(uint32(num)) {
					return nil
				}
				a.tier[num] = tier
				docs = append(docs, uint32(num))
			default: // an earlier tier's
				return nil
			}
			a.score[num] += w[i] * score
			return nil
		})
		if err != nil {
			a.docs[tier] = docs
			return err
		}
	}
	a.docs[tier] = docs
	return nil
}

// clearMarks forgets the tiers of the segment's documents and their
// lists, for the next segment.
func (a *fragmentAcc) clearMarks() {
	for t := range a.docs {
		for _, num := range a.docs[t] {
			a.tier[num] = 0
		}
		a.docs[t] = a.docs[t][:0]
	}
}

// offer offers top the documents of tier of a segment numbered from
// base, with their accumulated scores times boost, and clears those
// scores (not their tier: clearMarks).
// The segment's best k go to top: ranked first among themselves, ties
// by the segment's id ranks (the order of its ids, read once per segment), so only the ids
// of those k are read when top breaks a tie with another segment's.
// Offering every match to top read the id of each one that tied with
// the worst kept, from the segment's stored fields: an eighth of a
// fragment query's CPU at 100,000 documents, where most matches score
// alike (index/DESIGN.md, "Fragments").
func (a *fragmentAcc) offer(top *topHits, tier uint8, base uint64, boost float64, ranks func() ([]uint32, error)) error {
	docs := a.docs[tier]
	if len(docs) == 0 {
		return nil
	}
	rk, err := ranks()
	if err != nil {
		return err
	}
	seg := &a.seg
	seg.H, seg.K = seg.H[:0], top.K
	seg.Worse = func(x, y *besthits.Hit) bool {
		if x.Score != y.Score {
			return x.Score < y.Score
		}
		return rk[x.Num] > rk[y.Num]
	}
	for _, num := range docs {
		s := a.score[num] * boost
		a.score[num] = 0
		if seg.K == 0 || len(seg.H) == seg.K && s < seg.H[0].Score || len(top.H) == top.K && s < top.H[0].score {
			continue
		}
		if h := (besthits.Hit{Num: uint64(num), Score: s}); seg.Admits(&h) {
			seg.Add(h)
		}
	}
	var iid bleveindex.IndexInternalID
	for _, h := range seg.H {
		iid = bleveindex.NewIndexInternalID(iid, base+h.Num)
		top.offer(candidate{score: h.Score, iid: iid})
		if top.err != nil {
			return top.err
		}
	}
	seg.Worse = nil // rk is the segment's: not kept past it
	return nil
}
