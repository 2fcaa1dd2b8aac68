// Package memlimit is how the indexer lives with the process's soft memory
// limit (index/DESIGN.md, "Memory"): the limit is raised by a headroom
// while a Bleve batch is built (WithHeadroom), so that the garbage
// collector does not run continuously through a batch's analysis, and
// lowered again after it; a process that does nothing but index (quire
// reindex) fixes it instead (Fixed).
package memlimit

import (
	"math"
	"runtime/debug"
	"sync"
	"time"
)

// batchHeadroom is how far above the process's soft memory limit the Go
// heap may grow while a Bleve batch is built: analysing a few hundred
// documents needs tens of MiB for a moment, and under a tight limit the
// garbage collector would run continuously instead (indexing three times
// slower). 64 MiB: with the default limit of 64 MiB the heap stays under
// 128 MiB, and the server's anonymous memory under the 150 MB goal
// (issue 34) through a long creation load. 128 MiB (2026-11-26 to
// 2026-11-27) let the heap reach twice its live size there, 184–197 MB of
// anonymous memory, for 8% more creates per second and 7% lower
// freshness p99 on a quiet machine (index/DESIGN.md, "Memory", the A/B).
// The limit itself holds at rest and for everything else.
const batchHeadroom = 64 << 20

// headroomLinger is how long the raised limit outlives a batch after
// which more changes wait: the next batch, gathering them, begins within
// maxWait. Lowering the limit right after each batch of a long load left
// the heap over the limit between batches: the runtime then returned
// pages to the system on every span it allocated and faulted them back in
// for the next batch (a CPU profile of the sustained create load: 8% of
// the server's CPU in the scavenger's madvise, 4.5% zeroing the pages
// again), and collected continuously to get under the limit. After a batch
// with nothing waiting (a single upload, the end of a load) the limit is
// lowered at once: keeping it raised for a while after every batch let
// the heap grow in the phases that index little (a 2 s linger took the
// peak RssAnon of the upload phase of make bench from 77 to 131 MB).
const headroomLinger = time.Second

// Fixed sets the process's soft memory limit for a process that does
// nothing but index (quire reindex): the limit is not raised while
// batches are built, as it is for a server, whose batches come between
// other work, and the indexer's Bleve batches hold at most its
// maxBatchText of text (as under any limit). index/DESIGN.md, "Reindex
// memory". The returned func restores the previous limit and behaviour
// (a command run in a test's process).
func Fixed(limit int64) (restore func()) {
	headroom.Lock()
	defer headroom.Unlock()
	headroom.fixed = true
	old := debug.SetMemoryLimit(limit)
	return func() {
		headroom.Lock()
		defer headroom.Unlock()
		headroom.fixed = false
		debug.SetMemoryLimit(old)
	}
}

var headroom struct {
	sync.Mutex
	fixed  bool // Fixed: never raised
	users  int
	base   int64       // the limit to restore
	raised bool        // the limit is base + batchHeadroom
	timer  *time.Timer // restores the limit headroomLinger after the last batch
	gen    uint64      // counts the timers, so that a late one does nothing
}

// WithHeadroom runs fn with the soft memory limit raised by batchHeadroom,
// when a limit is set. When it ends and more (if not nil) reports changes
// waiting for the next batch, the limit stays raised for headroomLinger
// or until that batch; otherwise it is restored.
func WithHeadroom(fn func() error, more func() bool) error {
	headroom.Lock()
	if headroom.timer != nil {
		headroom.timer.Stop()
		headroom.timer = nil
	}
	if !headroom.raised && !headroom.fixed {
		headroom.base = debug.SetMemoryLimit(-1)
		if headroom.base != math.MaxInt64 {
			debug.SetMemoryLimit(headroom.base + batchHeadroom)
			headroom.raised = true
		}
	}
	headroom.users++
	headroom.Unlock()
	defer func() {
		headroom.Lock()
		headroom.users--
		if headroom.users == 0 && headroom.raised {
			headroom.gen++
			if more != nil && more() {
				gen := headroom.gen
				headroom.timer = time.AfterFunc(headroomLinger, func() { restoreLimit(gen) })
			} else {
				debug.SetMemoryLimit(headroom.base)
				headroom.raised = false
			}
		}
		headroom.Unlock()
	}()
	return fn()
}

// restoreLimit lowers the limit back to its base unless a batch has
// begun since timer gen was set.
func restoreLimit(gen uint64) {
	headroom.Lock()
	defer headroom.Unlock()
	if headroom.gen == gen && headroom.users == 0 && headroom.raised {
		debug.SetMemoryLimit(headroom.base)
		headroom.raised = false
	}
}
