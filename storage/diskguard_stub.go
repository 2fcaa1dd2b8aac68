package storage

// TEMPORARY: a minimal stand-in for engineer P's storage/diskguard.go (the
// write gate and free-space watcher of issue 12), so that the read-only open
// in fullopen.go builds and is tested before both branches meet. The lead
// deletes this file at merge; fullopen.go then registers retryWritable on
// P's space-back hook list (d.onWritable) instead of calling onSpaceBack.

import (
	"sync"
	"time"
)

// WriteState says whether the store takes writes, and why not.
type WriteState struct {
	Writable      bool
	Kind          string
	Reason        string
	Free, Reserve uint64
	Since         time.Time
}

// WriteRefusedError is returned for a write refused by the gate.
type WriteRefusedError struct{ Kind, Reason string }

func (e *WriteRefusedError) Error() string { return e.Reason }

type stubGate struct {
	mu    sync.Mutex
	st    WriteState
	hooks []func()
	stop  chan struct{}
}

var stubGates sync.Map // *DB -> *stubGate

func (d *DB) stubGate() *stubGate {
	g, _ := stubGates.LoadOrStore(d, &stubGate{st: WriteState{Writable: true}})
	return g.(*stubGate)
}

// WriteState reports the gate.
func (d *DB) WriteState() WriteState {
	g := d.stubGate()
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.st
}

func (d *DB) refuseWrites(kind, reason string) {
	g := d.stubGate()
	g.mu.Lock()
	g.st = WriteState{Kind: kind, Reason: reason, Since: time.Now()}
	g.mu.Unlock()
}

func (d *DB) allowWrites(kind string) {
	g := d.stubGate()
	g.mu.Lock()
	if g.st.Kind == kind {
		g.st = WriteState{Writable: true, Since: time.Now()}
	}
	g.mu.Unlock()
}

// stubGateErr refuses a write while the gate is closed (P's Apply check).
func (d *DB) stubGateErr() error {
	if st := d.WriteState(); !st.Writable {
		return &WriteRefusedError{Kind: st.Kind, Reason: st.Reason}
	}
	return nil
}

// onSpaceBack runs fn whenever free space is at least MinReserve again
// (P's watcher: the onWritable hooks). The stub polls every 100 ms until
// Close.
func (d *DB) onSpaceBack(fn func()) {
	g := d.stubGate()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.hooks = append(g.hooks, fn)
	if g.stop != nil {
		return
	}
	g.stop = make(chan struct{})
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-d.stop:
				return
			case <-t.C:
			}
			if free, _, err := diskFree(d.dir); err != nil || free < MinReserve() {
				continue
			}
			g.mu.Lock()
			hooks := g.hooks
			g.mu.Unlock()
			for _, h := range hooks {
				h()
			}
		}
	}()
}
