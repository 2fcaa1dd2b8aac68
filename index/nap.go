package index

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
)

// The persister's nap for a small index (index/DESIGN.md, "Persister nap
// for a small index"). Below floorSegmentSize live documents scorch's
// merge plan allows one file segment (its budget is the index's size over
// the floor, rounded up), so every batch persisted as a file is merged
// with the whole index at once: a trickle of one-document batches (a
// cluster member following its leader, a small office's uploads) rewrites
// the index's files per batch, each rewrite paying zap's fixed cost per
// field (a vellum builder). So after each persist of a small index the
// persister waits up to persistNap: batches that come meanwhile stay in
// memory, searchable as before, and the persister then merges them in
// memory into one file, which the merger merges once. Nothing a client
// sees changes: a batch is searchable once introduced, nap or not, and a
// crash loses at most the nap's batches, which the next start indexes
// again from the checkpoint persisted before them. The nap ends early when
// the index reaches the floor (checked every napCheck), when the index
// closes, and never starts on a larger index, so a load into an index of
// any size holds no more in memory than it did, beyond the first
// floorSegmentSize documents of a new one.
// A test of scorch's own plan sets it to 0 before opening its index.
var persistNap = defaultPersistNap

const defaultPersistNap = 2 * time.Second

// napCheck is how often a nap looks at the index's size.
const napCheck = 250 * time.Millisecond

// napCallback names onScorchEvent in scorch's registry (openOne's
// eventCallbackName).
const napCallback = "quire.nap"

func init() {
	scorch.RegistryEventCallbacks[napCallback] = onScorchEvent
}

// napper is one open scorch index's nap: d is persistNap when it opened,
// wake is closed when the index starts closing (or Index.Close wants its
// last batches persisted).
type napper struct {
	d       time.Duration
	once    sync.Once
	wake    chan struct{}
	napping atomic.Bool // the persister is in a nap (tests wait for it)
}

func (n *napper) end() { n.once.Do(func() { close(n.wake) }) }

// nappers maps each scorch index openOne opened to its *napper.
var nappers sync.Map

// watchNap gives b's persister its nap (openOne).
func watchNap(b bleve.Index) {
	if s := scorchOf(b); s != nil {
		nappers.Store(s, &napper{d: persistNap, wake: make(chan struct{})})
	}
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

// nap holds s's persister while s is small (see persistNap).
func (n *napper) nap(s *scorch.Scorch) {
	if n.d <= 0 || !smallIndex(s) {
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
			if !smallIndex(s) {
				return
			}
		}
	}
}

// smallIndex reports whether s holds fewer live documents than
// floorSegmentSize.
func smallIndex(s *scorch.Scorch) bool {
	r, err := s.Reader()
	if err != nil {
		return false
	}
	defer r.Close()
	n, err := r.DocCount()
	return err == nil && n < floorSegmentSize
}

// wakeNap ends b's nap for good: Close wants what was written persisted
// without waiting for it.
func wakeNap(b bleve.Index) {
	if s := scorchOf(b); s != nil {
		if v, ok := nappers.Load(s); ok {
			v.(*napper).end()
		}
	}
}
