package index

import (
	"math"
	"runtime/debug"
	"sync"
)

// batchHeadroom is how far above the process's soft memory limit the Go
// heap may grow while a Bleve batch is built: analysing a few hundred
// documents needs tens of MiB for a moment, and under a tight limit the
// garbage collector would run continuously instead (indexing three times
// slower). 128 MiB since 2026-11-26 (was 64): under a long creation load
// the worker builds batches nearly all the time, and at 64 the collector
// still ran near the limit, making a batch take three times as long now
// and then, the spikes that set fulltext freshness p99 (index/DESIGN.md,
// "The second second"). The limit itself holds at rest and for
// everything else.
const batchHeadroom = 128 << 20

var headroom struct {
	sync.Mutex
	users int
	base  int64
}

// withHeadroom runs fn with the soft memory limit raised by batchHeadroom,
// when a limit is set.
func withHeadroom(fn func() error) error {
	headroom.Lock()
	if headroom.users == 0 {
		headroom.base = debug.SetMemoryLimit(-1)
		if headroom.base != math.MaxInt64 {
			debug.SetMemoryLimit(headroom.base + batchHeadroom)
		}
	}
	headroom.users++
	headroom.Unlock()
	defer func() {
		headroom.Lock()
		headroom.users--
		if headroom.users == 0 && headroom.base != math.MaxInt64 {
			debug.SetMemoryLimit(headroom.base)
		}
		headroom.Unlock()
	}()
	return fn()
}
