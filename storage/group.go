package storage

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/dgraph-io/badger/v4"
)

// Group commit (DESIGN.md, "Sustained writes"). With SyncWrites, Badger
// syncs its write-ahead log once per transaction: its writer takes the
// commits that queued meanwhile in one round, but msyncs after each of
// them, so N concurrent creates cost N syncs. Apply therefore hands small
// commands to one committer goroutine, which applies everything queued
// (up to groupMax commands, groupBytes of estimated writes) in one Badger
// transaction, in queue order, and commits it: one sync for the group.
//   - Serializable as before: the commands run one after another in the
//     transaction, each seeing the writes of those before it, as if
//     applied in that order; each has its own tx (touched documents,
//     events, replay) and its own OnCommit hooks.
//   - Durable as before: a command's Apply returns after the group's
//     commit returned, that is after the sync.
//   - One command never undoes its neighbours: if an applier refuses its
//     command (validation, conflict, not found, a panic), the group's
//     transaction is discarded, that command is applied on its own by its
//     caller, exactly as without grouping, and the others are tried again
//     as a group; a commit that loses an optimistic race is tried again.
//     After groupRetries such tries, or if the transaction is too big,
//     every command left is applied on its own. A commit failing with an I/O
//     error fails every command of the group (as it would have failed
//     each alone, and latched the write gate).
//   - Hooks run before Apply returns, under the same shared write lock as
//     the commit (Quiesce sees every committed command's hooks done): the
//     committer holds it until every caller of the group has run its
//     hooks, in its own goroutine.
//   - Not grouped: content chunks (PutChunks, written in batches of their
//     own), commands over groupOne, and everything while a commit fault is
//     injected (tests count commits).
const (
	groupRetries = 4 // a group's tries after a refused command or a lost race
	groupMax     = 64
	groupBytes   = 512 << 10
	groupOne     = 128 << 10
)

// pendingApply is one command waiting for the committer.
type pendingApply struct {
	ctx  context.Context
	c    *Command
	fn   applyFunc
	size uint64
	done chan groupAnswer
}

// groupAnswer is the committer's answer to one command: fallback (apply
// it alone), or its result and error; after a commit, hooks is the
// shared write lock's release, called once the command's hooks ran.
type groupAnswer struct {
	fallback bool
	res      Result // for the hooks
	err      error
	hooks    *sync.WaitGroup
}

// groupQueue is what the committer takes from.
type groupQueue struct {
	mu      sync.Mutex
	pending []*pendingApply
	closed  bool // the committer stopped: nothing more is queued
	wake    chan struct{}
	// applying counts the Applies under way: one alone is applied
	// directly, without the hand-off to the committer.
	applying atomic.Int64
	largest  atomic.Int64 // the most commands committed in one group (tests)
	faulty   atomic.Bool  // a commit fault is injected (SetCommitFault)
}

// groupable reports whether c may be applied in a group.
func (d *DB) groupable(c *Command, size uint64) bool {
	if size > groupOne {
		return false
	}
	if _, ok := c.local.(PutChunks); ok {
		return false
	}
	return !d.group.faulty.Load()
}

// applyGrouped applies c through the committer. ok is false when c must
// be applied alone (the group failed, or the store is closing).
func (d *DB) applyGrouped(ctx context.Context, c *Command, fn applyFunc, size uint64) (Result, bool, error) {
	p := &pendingApply{ctx: ctx, c: c, fn: fn, size: size, done: make(chan groupAnswer, 1)}
	q := &d.group
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return Result{}, true, ErrClosed
	}
	q.pending = append(q.pending, p)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	// Every queued command is answered: the committer drains the queue
	// when it stops.
	a := <-p.done
	if a.fallback {
		return Result{}, false, nil
	}
	if a.hooks != nil {
		if a.err == nil {
			if c.Op == OpSetSiteConfig {
				d.siteCfg.clear()
			}
			d.runHooks(c, a.res)
		}
		a.hooks.Done()
	}
	if a.err != nil {
		return Result{}, true, a.err
	}
	return Result{Value: a.res.Value, Replayed: a.res.Replayed}, true, nil
}

// groupLoop is the committer.
func (d *DB) groupLoop() {
	defer d.wg.Done()
	q := &d.group
	for {
		select {
		case <-d.stop:
			q.mu.Lock()
			left := q.pending
			q.pending, q.closed = nil, true
			q.mu.Unlock()
			for _, p := range left {
				p.done <- groupAnswer{err: ErrClosed}
			}
			return
		case <-q.wake:
		}
		for {
			q.mu.Lock()
			n, size := 0, uint64(0)
			for n < len(q.pending) && n < groupMax && (n == 0 || size+q.pending[n].size <= groupBytes) {
				size += q.pending[n].size
				n++
			}
			batch := q.pending[:n:n]
			q.pending = q.pending[n:]
			if len(q.pending) == 0 {
				q.pending = nil
			}
			q.mu.Unlock()
			if len(batch) == 0 {
				break
			}
			d.commitGroup(batch)
		}
	}
}

// commitGroup applies batch in one transaction and answers every command.
func (d *DB) commitGroup(batch []*pendingApply) {
	live := batch[:0:0]
	for _, p := range batch {
		if err := p.ctx.Err(); err != nil {
			p.done <- groupAnswer{err: err}
			continue
		}
		live = append(live, p)
	}
	if len(live) == 0 {
		return
	}
	// A lone command is committed here too: while its sync runs, the
	// next group gathers (handing it back would leave the committer idle
	// and every group a single command).
	d.writeMu.RLock()
	var txs []*tx
	var vals []any
	for attempt := 0; ; attempt++ {
		var bad int
		var err error
		txs, vals, bad, err = d.runGroup(live)
		if err == nil {
			break
		}
		if IsIOError(err) {
			d.writeMu.RUnlock()
			werr := d.failedWrite(err)
			for _, p := range live {
				p.done <- groupAnswer{err: werr}
			}
			return
		}
		if attempt < groupRetries && bad >= 0 && len(live) > 2 {
			// The refused command goes alone (its caller gets the
			// applier's answer there); the others try again without it.
			live[bad].done <- groupAnswer{fallback: true}
			live = append(live[:bad:bad], live[bad+1:]...)
			continue
		}
		if attempt < groupRetries && errors.Is(err, badger.ErrConflict) {
			continue // a race lost at commit: nobody's fault, try again
		}
		d.writeMu.RUnlock()
		for _, p := range live {
			p.done <- groupAnswer{fallback: true}
		}
		return
	}
	// Committed: every caller runs its hooks under the shared write lock,
	// released once all have.
	if n := int64(len(live)); n > d.group.largest.Load() {
		d.group.largest.Store(n)
	}
	hooks := &sync.WaitGroup{}
	hooks.Add(len(live))
	for i, p := range live {
		t := txs[i]
		res := Result{Value: vals[i], Replayed: t.replayed, Events: t.events}
		for r := range t.touched {
			res.Touched = append(res.Touched, r)
		}
		for r, at := range t.queued {
			res.Queued = append(res.Queued, QueuedDoc{r, at})
		}
		p.done <- groupAnswer{res: res, hooks: hooks}
	}
	go func() {
		hooks.Wait()
		d.writeMu.RUnlock()
	}()
}

// runGroup runs every command of live in one transaction and commits it.
// An error means nothing was written; bad is then the index of the
// command whose applier failed, or -1.
func (d *DB) runGroup(live []*pendingApply) (txs []*tx, vals []any, bad int, err error) {
	if d.bdb.IsClosed() {
		return nil, nil, -1, badger.ErrDBClosed
	}
	txn := d.bdb.NewTransaction(true)
	defer txn.Discard()
	txs = make([]*tx, len(live))
	vals = make([]any, len(live))
	// The commands share their cached scans (tx.scanCached: rulesets,
	// sequences, event subscriptions): they read and write one
	// transaction, and a write under a cached prefix by any of them drops
	// the cache for all. Each command reading them afresh opened an
	// iterator that sorted every write of the commands before it.
	scans := map[string][]kv{}
	for i, p := range live {
		t := &tx{txn: txn, scans: scans}
		v, err := runApplierSafe(t, p.c, p.fn)
		if err != nil {
			return nil, nil, i, err
		}
		txs[i], vals[i] = t, v
	}
	if err := txn.Commit(); err != nil {
		return nil, nil, -1, err
	}
	return txs, vals, -1, nil
}

// errApplierPanic stands for a panic in an applier run by the committer:
// the command is then applied alone, in its caller's goroutine, where the
// server turns a panic into a 500.
var errApplierPanic = errors.New("applier panicked")

// runApplierSafe is runApplier with a panic turned into an error.
func runApplierSafe(t *tx, c *Command, fn applyFunc) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, fmt.Errorf("%w: %v", errApplierPanic, r)
		}
	}()
	return runApplier(t, c, fn)
}
