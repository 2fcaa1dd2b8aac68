package segments

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
)

// The persister's nap for a small index (index/DESIGN.md, "Persister nap
// for a small index"). Below the merge plan's FloorSegmentSize live
// documents scorch's merge plan allows one file segment (its budget is
// the index's size over the floor, rounded up), so every batch persisted
// as a file is merged with the whole index at once: a trickle of
// one-document batches (a cluster member following its leader, a small
// office's uploads) rewrites the index's files per batch, each rewrite
// paying zap's fixed cost per field (a vellum builder). So after each
// persist of a small index the persister waits up to the nap: batches
// that come meanwhile stay in memory, searchable as before, and the
// persister then merges them in memory into one file, which the merger
// merges once. Nothing a client sees changes: a batch is searchable once
// introduced, nap or not, and a crash loses at most the nap's batches,
// which the next start indexes again from the checkpoint persisted before
// them. The nap ends early when the index reaches the floor (checked every
// napCheck), when the index closes, and never starts on a larger index,
// so a load into an index of any size holds no more in memory than it
// did, beyond the first floor documents of a new one.

// napCheck is how often a nap looks at the index's size.
const napCheck = 250 * time.Millisecond

// NapCallback names scorch's event callback of this package in scorch's
// registry: an index that may nap is opened with it as its
// eventCallbackName, then given to WatchNap.
const NapCallback = "quire.nap"

func init() {
	scorch.RegistryEventCallbacks[NapCallback] = onScorchEvent
}

// napper is one open scorch index's nap: d long while the index holds
// fewer than floor live documents; wake is closed when the index starts
// closing (or WakeNap wants its last batches persisted).
type napper struct {
	d       time.Duration
	floor   uint64
	once    sync.Once
	wake    chan struct{}
	napping atomic.Bool // the persister is in a nap (tests wait for it)
}

func (n *napper) end() { n.once.Do(func() { close(n.wake) }) }

// nappers maps each scorch index given to WatchNap to its *napper.
var nappers sync.Map

// WatchNap gives b's persister its nap: up to d after each persist while
// b holds fewer than floor live documents (0: no nap). b was opened with
// NapCallback.
func WatchNap(b bleve.Index, d time.Duration, floor uint64) {
	if s := Scorch(b); s != nil {
		nappers.Store(s, &napper{d: d, floor: floor, wake: make(chan struct{})})
	}
}

// Napping reports whether b's persister is in a nap (tests wait for it).
func Napping(b bleve.Index) bool {
	v, ok := nappers.Load(Scorch(b))
	return ok && v.(*napper).napping.Load()
}

// onScorchEvent runs in scorch's goroutines, for every event of every
// index opened with it: only a persister's progress may nap.
func onScorchEvent(e scorch.Event) bool {
	v, ok := nappers.Load(e.Scorch)
	if !ok {
		return true
	}
	n := v.(*napper)
	switch e.Kind {
	case scorch.EventKindCloseStart:
		n.end()
	case scorch.EventKindClose:
		nappers.Delete(e.Scorch)
	case scorch.EventKindPersisterProgress:
		n.nap(e.Scorch)
	}
	return true
}

// nap holds s's persister while s is small (see the nap above).
func (n *napper) nap(s *scorch.Scorch) {
	if n.d <= 0 || !n.small(s) {
		return
	}
	n.napping.Store(true)
	defer n.napping.Store(false)
	t := time.NewTimer(n.d)
	defer t.Stop()
	tick := time.NewTicker(napCheck)
	defer tick.Stop()
	for {
		select {
		case <-n.wake:
			return
		case <-t.C:
			return
		case <-tick.C:
			if !n.small(s) {
				return
			}
		}
	}
}

// small reports whether s holds fewer live documents than n.floor.
func (n *napper) small(s *scorch.Scorch) bool {
	r, err := s.Reader()
	if err != nil {
		return false
	}
	defer r.Close()
	docs, err := r.DocCount()
	return err == nil && docs < n.floor
}

// WakeNap ends b's nap for good: the index's Close wants what was written
// persisted without waiting for it.
func WakeNap(b bleve.Index) {
	if s := Scorch(b); s != nil {
		if v, ok := nappers.Load(s); ok {
			v.(*napper).end()
		}
	}
}
