package index

import (
	"context"
	"fmt"
	"time"

	"github.com/blevesearch/bleve/v2/index/scorch"
)

// Warming the best hits (index/DESIGN.md, "Warming"). A word's first
// one-word query in a segment reads all its postings there to build the
// segment's entry in the best hits cache: at a million documents, a word
// in a fifth of them is about 200,000 postings, and those first queries
// are the p99. Once the index is quiet (after the idle merge, merge.go),
// the warm pass (besthits.Cache.Warm) builds the entries of the costliest
// words ahead of the queries, until half of the cache's bound is held by
// warmed entries. A change cancels it, like the idle merge.

// warmBest runs the warm pass on the text index's current snapshot and
// returns the entries it built and the hits they hold. It stops with
// ctx's error when ctx is canceled.
func (x *Index) warmBest(ctx context.Context) (entries, hits int, err error) {
	r, err := x.textReader()
	if err != nil {
		return 0, 0, err
	}
	defer r.Close()
	snap, ok := r.(*scorch.IndexSnapshot)
	if !ok {
		return 0, 0, fmt.Errorf("index: the text index reader is a %T, not scorch's", r)
	}
	return x.best.Warm(ctx, snap, fContent)
}

// WarmStats reports the warm passes that ran to the end (done), those a
// change or Close stopped (yielded), and the entries they built.
func (ix *Indexer) WarmStats() (done, yielded, entries uint64) {
	return ix.warmDone.Load(), ix.warmYielded.Load(), ix.x.best.Warmed.Load()
}

// Warming reports whether the warm pass runs, or follows the idle merge
// that just ended (no gap between Merging and Warming).
func (ix *Indexer) Warming() bool { return ix.warmPending.Load() && !ix.merging.Load() }

// idleWarm runs the warm pass, stopped by a change or Close as the idle
// merge is.
func (ix *Indexer) idleWarm() error {
	// A change since the quiet period began (the idle merge yielded to
	// it, or it came after) or Close cancels it before it starts.
	ctx, cancel := ix.idleContext()
	defer cancel()
	began := time.Now()
	entries, hits, err := ix.x.warmBest(ctx)
	// A pass that built nothing (all warm already, or a change before
	// it began) logs at debug level: it follows every quiet period.
	logf := ix.log.Info
	if entries == 0 {
		logf = ix.log.Debug
	}
	if ctx.Err() != nil {
		ix.warmYielded.Add(1)
		logf("index warm pass yielded to a change", "entries", entries, "hits", hits, "took", time.Since(began).Round(time.Millisecond))
		return nil
	}
	if err != nil {
		return err
	}
	ix.warmDone.Add(1)
	logf("index idle: best hits warmed", "entries", entries, "hits", hits, "took", time.Since(began).Round(time.Millisecond))
	return nil
}
