package index

import (
	"context"
	"time"

	"github.com/blevesearch/bleve/v2"

	"quire/guard"
	"quire/index/segments"
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

// maxSegmentDocs bounds the documents of a segment that any merge makes:
// scorch's own merge plan (its MaxSegmentSize, openOne) and the idle
// merge. A merge holds the new segment's term dictionaries in memory
// while it writes them (zapx builds each field's FST in a buffer), and
// the _id field has one term per document, so its working memory grows
// with the output: one merge of two 500,000-document segments peaked at
// 122 MB of anonymous memory, over the 150 MB goal once a batch ran
// beside it. Segments of half the bound or more are not merged again, so
// an index at rest holds segments of 125,000 to 250,000 documents, about
// five at a million (index/DESIGN.md, "Segment size"). A test makes it
// small.
var maxSegmentDocs int64 = 250_000

// Segments returns how many segments the text and the names index have
// (on disk and in memory).
func (x *Index) Segments() (text, names int) {
	tf, tm := segments.Count(x.text)
	nf, nm := segments.Count(x.names)
	return tf + tm, nf + nm
}

// mergeable counts b's segments, and those a merge may still take: under
// half of maxSegmentDocs live documents, as scorch's planner decides.
func mergeable(b bleve.Index) (n, eligible int) { return segments.Mergeable(b, maxSegmentDocs) }

// mergeStepOnce merges at most mergeStep of b's n segments (eligible of
// them mergeable) into one, so that no fewer than mergeTo are left and
// no segment gets maxSegmentDocs documents. It returns once scorch has
// introduced the merged segment, or dropped it because ctx was canceled.
func mergeStepOnce(ctx context.Context, b bleve.Index, n, eligible int) error {
	return segments.Merge(ctx, b, min(mergeStep, eligible, n-mergeTo+1), eligible, maxSegmentDocs)
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
// mergeTo, one step at a time, until a change or Close cancels it or no
// two segments can be merged under maxSegmentDocs.
func (ix *Indexer) idleMerge() error {
	for _, one := range []struct {
		name string
		b    bleve.Index
	}{{"names", ix.x.names}, {"text", ix.x.text}} {
		n, eligible := mergeable(one.b)
		if n <= mergeAbove || eligible < 2 {
			continue
		}
		ix.merging.Store(true)
		defer ix.merging.Store(false)
		began := time.Now()
		from := n
		ix.log.Info("index idle: merging segments", "index", one.name, "segments", from, "mergeable", eligible)
		for {
			file, _ := segments.Count(one.b)
			n, eligible = mergeable(one.b)
			if n <= mergeTo || file < 2 || eligible < 2 {
				break
			}
			ctx, cancel := ix.idleContext()
			stepBegan := time.Now()
			// ForceMerge waits for scorch's merger to take the request,
			// which may be busy with a merge of its own: Close does not
			// wait for that. The abandoned request then runs canceled.
			res := make(chan error, 1)
			go func() { res <- mergeStepOnce(ctx, one.b, n, eligible) }()
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
			after, _ := mergeable(one.b)
			if canceled {
				ix.yielded.Add(1)
				ix.log.Info("index merge yielded to a change", "index", one.name, "segments", after)
				return nil
			}
			if after >= n {
				// Nothing the planner would merge (or a change's segment
				// took the merged ones' place): stop rather than loop.
				break
			}
			ix.merged.Add(1)
			ix.log.Debug("index merge step", "index", one.name, "from", n, "to", after, "took", time.Since(stepBegan).Round(time.Millisecond))
		}
		n, _ = mergeable(one.b)
		ix.log.Info("index idle merge done", "index", one.name, "from", from, "segments", n, "took", time.Since(began).Round(time.Millisecond))
	}
	return nil
}
