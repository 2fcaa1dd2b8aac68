package besthits

import (
	"context"
	"math"

	segment "github.com/blevesearch/scorch_segment_api/v2"
)

// EachPosting calls fn with the document number and the term query's
// score of every posting of pl, stopping at fn's first error. It returns
// the iterator for reuse (it may be nil).
func EachPosting(ctx context.Context, pl segment.PostingsList, it segment.PostingsIterator, fn func(num uint64, score float64) error) (segment.PostingsIterator, error) {
	it = pl.Iterator(true, true, false, it)
	for n := 0; ; n++ {
		if n&255 == 0 {
			if err := ctx.Err(); err != nil {
				return it, err
			}
		}
		p, err := it.Next()
		if err != nil || p == nil {
			return it, err
		}
		if err := fn(p.Number(), math.Sqrt(float64(p.Frequency()))*p.Norm()); err != nil {
			return it, err
		}
	}
}
