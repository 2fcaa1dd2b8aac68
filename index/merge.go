package index

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"

	"quire/guard"
)

// Idle merge (index/DESIGN.md, "Idle merge"). Scorch's merge plan keeps
// tiers of up to ten segments, so an index at rest after a load has tens
// of segments and every query visits each of them (21 at 100,000
// documents; merged down to 2, query p50s fell 2–4x). Once no change has
// come for the idle period, the indexer merges each index with more than
// mergeAbove segments down to mergeTo, one merge of at most mergeStep
// segments at a time, through scorch's ForceMerge. A change arriving
// cancels the merge under way: scorch drops its unfinished output, and
// what earlier steps merged is kept.
const (
	// DefaultMergeIdle is how long the index must be quiet before it is
	// merged down (index.merge_idle).
	DefaultMergeIdle = 30 * time.Second
	mergeAbove       = 4
	mergeTo          = 2
)

// mergeStep is the most segments one step merges (a test makes it small,
// so that a merge takes several steps).
var mergeStep = 10

// scorchOf returns b's scorch index (nil if it is not one).
func scorchOf(b bleve.Index) *scorch.Scorch {
	adv, err := b.Advanced()
	if err != nil {
		return nil
	}
	s, _ := adv.(*scorch.Scorch)
	return s
}

// segments counts the segments of b's current snapshot: on disk (file)
// and in memory, not yet persisted.
func segments(b bleve.Index) (file, mem int) {
	s := scorchOf(b)
	if s == nil {
		return 0, 0
	}
	st, ok := s.Stats().(*scorch.Stats)
	if !ok {
		return 0, 0
	}
	return int(atomic.LoadUint64(&st.TotFileSegmentsAtRoot)), int(atomic.LoadUint64(&st.TotMemorySegmentsAtRoot))
}

// Segments returns how many segments the text and the names index have
// (on disk and in memory).
func (x *Index) Segments() (text, names int) {
	tf, tm := segments(x.text)
	nf, nm := segments(x.names)
	return tf + tm, nf + nm
}

// mergeStepOnce merges at most mergeStep of b's n file segments into one,
// so that no fewer than mergeTo are left. It returns once scorch has
// introduced the merged segment, or dropped it because ctx was canceled.
func mergeStepOnce(ctx context.Context, b bleve.Index, n int) error {
	s := scorchOf(b)
	if s == nil {
		return nil
	}
	k := min(mergeStep, n-mergeTo+1)
	// The planner keeps adding merge tasks while segments + tasks exceed
	// the budget; a budget of n-k+1 stops it after one task of k
	// segments. It picks the k (adjacent by size) that score best:
	// similar sizes, small, with deletions to reclaim.
	budget := n - k + 1
	opts := mergeplan.MergePlanOptions{
		MaxSegmentsPerTier:   1,
		MaxSegmentSize:       mergeplan.MaxSegmentSizeLimit,
		MaxSegmentFileSize:   1 << 40,
		TierGrowth:           1,
		SegmentsPerMergeTask: k,
		FloorSegmentSize:     1,
		ReclaimDeletesWeight: 2,
		CalcBudget: func(int64, int64, *mergeplan.MergePlanOptions) int {
			return budget
		},
	}
	return s.ForceMerge(ctx, &opts)
}

// MergeStats counts the idle merge's steps: merged (a segment made of
// several) and yielded (a step canceled by a change).
func (ix *Indexer) MergeStats() (merged, yielded uint64) {
	return ix.merged.Load(), ix.yielded.Load()
}

// Merging reports whether an idle merge is under way.
func (ix *Indexer) Merging() bool { return ix.merging.Load() }

// SetMergeIdle sets how long the index must be quiet before it is merged
// down (0: never). Call it before Start.
func (ix *Indexer) SetMergeIdle(d time.Duration) { ix.mergeIdle = d }

// noteWrite records a change: the idle period starts again and a merge
// under way is canceled (it runs in scorch's merger, which the segments
// of new batches wait for).
func (ix *Indexer) noteWrite() {
	ix.lastWrite.Store(time.Now().UnixNano())
	ix.mergeMu.Lock()
	if ix.mergeCancel != nil {
		ix.mergeCancel()
	}
	ix.mergeMu.Unlock()
	select {
	case ix.mergeWake <- struct{}{}:
	default:
	}
}

// idleContext returns the context of one piece of idle work (a merge
// step, the warm pass): a change (noteWrite) or Close cancels it, and so
// does a change that came since the quiet period began, before it was
// made. cancel also unregisters it.
func (ix *Indexer) idleContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	ix.mergeMu.Lock()
	ix.mergeCancel = cancel
	ix.mergeMu.Unlock()
	if time.Since(time.Unix(0, ix.lastWrite.Load())) < ix.mergeIdle {
		cancel()
	}
	select {
	case <-ix.stop:
		cancel()
	default:
	}
	return ctx, func() {
		ix.mergeMu.Lock()
		ix.mergeCancel = nil
		ix.mergeMu.Unlock()
		cancel()
	}
}

// mergeLoop waits for the index to be quiet for mergeIdle, then merges
// it down and warms the best hits; after that it waits for the next
// change.
func (ix *Indexer) mergeLoop() {
	defer ix.wg.Done()
	for {
		wait := ix.mergeIdle - time.Since(time.Unix(0, ix.lastWrite.Load()))
		if wait > 0 {
			select {
			case <-ix.stop:
				return
			case <-time.After(wait):
			}
			continue
		}
		// The warm pass follows the merge (warm.go); warmPending is set
		// first so that Warming has no gap between the two.
		ix.warmPending.Store(true)
		if err := guard.Run(ix.log, guard.Indexer, ix.idleMerge); err != nil {
			ix.log.Warn("index merge failed", "err", err)
		}
		if err := guard.Run(ix.log, guard.Indexer, ix.idleWarm); err != nil {
			ix.log.Warn("index warm pass failed", "err", err)
		}
		ix.warmPending.Store(false)
		select {
		case <-ix.stop:
			return
		case <-ix.mergeWake:
		}
	}
}

// idleMerge merges each index with more than mergeAbove segments down to
// mergeTo, one step at a time, until a change or Close cancels it.
func (ix *Indexer) idleMerge() error {
	for _, one := range []struct {
		name string
		b    bleve.Index
	}{{"names", ix.x.names}, {"text", ix.x.text}} {
		file, mem := segments(one.b)
		if file+mem <= mergeAbove {
			continue
		}
		ix.merging.Store(true)
		defer ix.merging.Store(false)
		began := time.Now()
		from := file + mem
		ix.log.Info("index idle: merging segments", "index", one.name, "segments", from)
		for {
			file, mem = segments(one.b)
			if file+mem <= mergeTo || file < 2 {
				break
			}
			ctx, cancel := ix.idleContext()
			stepBegan := time.Now()
			// ForceMerge waits for scorch's merger to take the request,
			// which may be busy with a merge of its own: Close does not
			// wait for that. The abandoned request then runs canceled.
			res := make(chan error, 1)
			go func() { res <- mergeStepOnce(ctx, one.b, file) }()
			var err error
			select {
			case err = <-res:
			case <-ix.stop:
				cancel()
				return nil
			}
			canceled := ctx.Err() != nil
			cancel()
			if err != nil {
				return err
			}
			after, afterMem := segments(one.b)
			if canceled {
				ix.yielded.Add(1)
				ix.log.Info("index merge yielded to a change", "index", one.name, "segments", after+afterMem)
				return nil
			}
			if after >= file {
				// Nothing the planner would merge (or a change's segment
				// took the merged ones' place): stop rather than loop.
				break
			}
			ix.merged.Add(1)
			ix.log.Debug("index merge step", "index", one.name, "from", file, "to", after, "took", time.Since(stepBegan).Round(time.Millisecond))
		}
		file, mem = segments(one.b)
		ix.log.Info("index idle merge done", "index", one.name, "from", from, "segments", file+mem, "took", time.Since(began).Round(time.Millisecond))
	}
	return nil
}
