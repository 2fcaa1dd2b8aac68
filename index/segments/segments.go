// Package segments drives the segments of Quire's scorch indexes where
// scorch's own loops are not enough (index/DESIGN.md, "Idle merge",
// "Segment size", "Persister nap for a small index" and "A new segment's
// buffer"): it counts an index's segments, merges them one step at a time
// for the idle merge (Merge), holds the persister of a small index in a
// nap (WatchNap), waits for the persister before an index closes
// (WaitPersisted), and turns off zap's estimate of a new segment's
// buffer for the whole process when it is loaded (the index package
// imports it, so before any index opens).
//
// The policy (when to merge, down to how many segments, how large a
// segment may grow, how long a nap lasts) is the index package's: it
// passes it in.
package segments

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"
)

// Scorch returns b's scorch index (nil if it is not one).
func Scorch(b bleve.Index) *scorch.Scorch {
	adv, err := b.Advanced()
	if err != nil {
		return nil
	}
	s, _ := adv.(*scorch.Scorch)
	return s
}

// Count counts the segments of b's current snapshot: on disk (file) and
// in memory, not yet persisted.
func Count(b bleve.Index) (file, mem int) {
	s := Scorch(b)
	if s == nil {
		return 0, 0
	}
	st, ok := s.Stats().(*scorch.Stats)
	if !ok {
		return 0, 0
	}
	return int(atomic.LoadUint64(&st.TotFileSegmentsAtRoot)), int(atomic.LoadUint64(&st.TotMemorySegmentsAtRoot))
}

// Docs returns the live documents of each of b's segments.
func Docs(b bleve.Index) []int64 {
	s := Scorch(b)
	if s == nil {
		return nil
	}
	r, err := s.Reader()
	if err != nil {
		return nil
	}
	defer r.Close()
	snap, ok := r.(*scorch.IndexSnapshot)
	if !ok {
		return nil
	}
	var docs []int64
	for _, seg := range snap.Segments() {
		docs = append(docs, seg.LiveSize())
	}
	return docs
}

// Mergeable counts b's segments, and those a merge may still take: under
// half of maxDocs live documents, as scorch's planner decides with
// MaxSegmentSize maxDocs.
func Mergeable(b bleve.Index, maxDocs int64) (n, eligible int) {
	for _, d := range Docs(b) {
		n++
		if d < maxDocs/2 {
			eligible++
		}
	}
	return n, eligible
}

// Merge merges k of b's segments (eligible of them mergeable) into one,
// so that no segment gets maxDocs documents. It returns once scorch has
// introduced the merged segment, or dropped it because ctx was canceled.
func Merge(ctx context.Context, b bleve.Index, k, eligible int, maxDocs int64) error {
	s := Scorch(b)
	if s == nil {
		return nil
	}
	// The planner keeps adding merge tasks while eligible segments +
	// tasks exceed the budget; a budget of eligible-k+1 stops it after
	// one task of k segments. It picks the k (adjacent by size) that
	// score best: similar sizes, small, with deletions to reclaim; a
	// segment that would take the task to maxDocs is left out.
	budget := eligible - k + 1
	opts := mergeplan.MergePlanOptions{
		MaxSegmentsPerTier:   1,
		MaxSegmentSize:       maxDocs,
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

// WaitPersisted waits until b's persister has written its latest
// snapshot, for at most timeout, or until it fails to write one: on a
// full disk it fails again at every attempt, and a clean stop waited
// out the timeout for each index (20 s of a stop on a full disk; node's
// TestFullDisk_RestartWhileFull). What it did not write is what a
// timeout leaves unwritten: the next start indexes it again from the
// storage version recorded before it. It says which ended the wait.
func WaitPersisted(b bleve.Index, timeout time.Duration) PersistWait {
	s := Scorch(b)
	if s == nil {
		return PersistUnknown
	}
	st, ok := s.Stats().(*scorch.Stats)
	if !ok {
		return PersistUnknown
	}
	failed := atomic.LoadUint64(&st.TotPersistLoopErr)
	deadline := time.Now().Add(timeout)
	for atomic.LoadUint64(&st.LastPersistedEpoch) < atomic.LoadUint64(&st.CurRootEpoch) {
		if atomic.LoadUint64(&st.TotPersistLoopErr) != failed {
			return PersistFailed
		}
		if time.Now().After(deadline) {
			return PersistTimedOut
		}
		time.Sleep(5 * time.Millisecond)
	}
	return Persisted
}

// PersistWait is how WaitPersisted's wait ended.
type PersistWait int

const (
	Persisted       PersistWait = iota // the latest snapshot is on disk
	PersistFailed                      // the persister failed to write it
	PersistTimedOut                    // the timeout passed
	PersistUnknown                     // not a scorch index: not waited for
)
