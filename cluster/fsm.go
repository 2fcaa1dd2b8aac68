package cluster

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"

	"quire/storage"
)

// ErrHalted is returned for every entry once the node failed to apply
// one: it stopped applying rather than skip an entry (DESIGN.md, "The
// apply rule") and must be restarted.
var ErrHalted = errors.New("cluster: this node stopped applying the log after a local failure; restart it")

// applyResult is what the FSM returns for a command (ApplyFuture.Response).
type applyResult struct {
	res storage.Result
	err error
}

// fsm applies the log to the store. Raft calls Apply, Snapshot and
// Restore from one goroutine.
type fsm struct {
	// ctx ends when the node closes (a digest walk stops).
	ctx       context.Context
	db        *storage.DB
	log       *slog.Logger
	onRestore func()
	onHalt    func(error)

	mu      sync.Mutex
	applied uint64        // the store's applied index, as last written
	advance chan struct{} // closed and replaced when applied moves
	halted  error

	// digests holds the digests taken at digest marks (digest.go).
	digests digestTable

	applies  atomic.Int64 // entries applied to the store (not skipped)
	skips    atomic.Int64 // entries at or below the store's index, skipped
	restores atomic.Int64 // snapshots loaded
	batches  atomic.Int64 // batches applied in one transaction (ApplyBatch)
}

func newFSM(db *storage.DB, lg *slog.Logger, applied uint64) *fsm {
	return &fsm{ctx: context.Background(), db: db, log: lg, applied: applied, advance: make(chan struct{})}
}

func (f *fsm) appliedIndex() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.applied
}

func (f *fsm) setApplied(idx uint64) {
	f.mu.Lock()
	f.applied = idx
	close(f.advance)
	f.advance = make(chan struct{})
	f.mu.Unlock()
}

// wait returns the applied index, a channel closed when it moves, and the
// halt error if any.
func (f *fsm) wait() (uint64, <-chan struct{}, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.applied, f.advance, f.halted
}

func (f *fsm) haltedErr() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.halted
}

// halt stops applying: the entry at index was not applied, and no later
// entry may be.
func (f *fsm) halt(index uint64, err error) any {
	f.mu.Lock()
	first := f.halted == nil
	if first {
		f.halted = fmt.Errorf("%w: entry %d: %v", ErrHalted, index, err)
		close(f.advance) // waiters look at halted
		f.advance = make(chan struct{})
	}
	herr := f.halted
	f.mu.Unlock()
	if first {
		f.log.Error("cannot apply a committed raft entry: stopping this node", "index", index, "err", err)
		if f.onHalt != nil {
			f.onHalt(herr)
		}
	}
	return applyResult{err: herr}
}

// Apply applies one committed entry.
func (f *fsm) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		return nil
	}
	if err := f.haltedErr(); err != nil {
		return applyResult{err: err}
	}
	if l.Index <= f.appliedIndex() {
		// Replayed after a restart: the store holds it already.
		f.skips.Add(1)
		return applyResult{}
	}
	cmd, err := storage.DecodeCommand(l.Data)
	var res storage.Result
	if err != nil {
		// The same bytes fail to decode on every node: recorded, not applied.
		if merr := f.db.MarkApplied(l.Index); merr != nil {
			return f.halt(l.Index, merr)
		}
	} else {
		res, err = f.db.ApplyAt(cmd, l.Index)
		var ue *storage.UnappliedError
		if errors.As(err, &ue) {
			return f.halt(l.Index, err)
		}
	}
	if err == nil && cmd.Op == storage.OpDigestMark {
		// Before the index moves: a Digest waiting for it finds the
		// entry (it would take the mark for one applied before).
		f.takeDigest(l.Index)
	}
	f.applies.Add(1)
	f.setApplied(l.Index)
	return applyResult{res: res, err: err}
}

// ApplyBatch applies the committed entries Raft hands over together
// (raft.BatchingFSM, up to MaxAppendEntries) in one Badger transaction,
// so a batch costs one fsync (DESIGN.md, "Batched apply"). When the
// batch cannot be applied whole (an entry that does not decode, a command
// its applier refuses, a transaction too big, a failed commit) nothing is
// written and the entries are applied one by one with Apply: a failed
// command never undoes its neighbours, and a failure of this node halts
// at the right entry.
func (f *fsm) ApplyBatch(logs []*raft.Log) []any {
	out := make([]any, len(logs))
	if f.haltedErr() != nil {
		return f.applyEach(logs, out)
	}
	applied := f.appliedIndex()
	batch := make([]storage.IndexedCommand, 0, len(logs))
	pos := make([]int, 0, len(logs))
	skipped := 0
	for i, l := range logs {
		if l.Type != raft.LogCommand {
			continue
		}
		if l.Index <= applied {
			skipped++
			continue
		}
		cmd, err := storage.DecodeCommand(l.Data)
		if err != nil || cmd.Op == storage.OpDigestMark {
			// A digest is taken at the mark's index exactly: one by one.
			return f.applyEach(logs, out)
		}
		batch = append(batch, storage.IndexedCommand{Index: l.Index, Cmd: cmd})
		pos = append(pos, i)
	}
	if len(batch) < 2 {
		return f.applyEach(logs, out)
	}
	res, errs, ok := f.db.ApplyBatchAt(batch)
	if !ok {
		return f.applyEach(logs, out)
	}
	for i, l := range logs {
		if l.Type == raft.LogCommand && l.Index <= applied {
			out[i] = applyResult{}
		}
	}
	for j, i := range pos {
		out[i] = applyResult{res: res[j], err: errs[j]}
	}
	f.skips.Add(int64(skipped))
	f.applies.Add(int64(len(batch)))
	f.batches.Add(1)
	f.setApplied(batch[len(batch)-1].Index)
	return out
}

// applyEach applies logs one entry at a time.
func (f *fsm) applyEach(logs []*raft.Log, out []any) []any {
	for i, l := range logs {
		out[i] = f.Apply(l)
	}
	return out
}

// snapshotMagic starts every snapshot stream, followed by the store's
// applied index (big endian) and the store in Backup's format.
var snapshotMagic = [8]byte{'Q', 'S', 'N', 'A', 'P', 0, 0, 1}

// Snapshot pins the store's state in a read transaction; Persist streams
// it while later entries are applied.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	if err := f.haltedErr(); err != nil {
		// The store is behind what Raft believes applied: a snapshot now
		// would carry a wrong index.
		return nil, err
	}
	s, err := f.db.OpenSnapshot()
	if err != nil {
		return nil, err
	}
	return &fsmSnapshot{s: s}, nil
}

type fsmSnapshot struct{ s *storage.Snapshot }

func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	err := func() error {
		w := bufio.NewWriterSize(sink, 1<<20)
		var hdr [16]byte
		copy(hdr[:8], snapshotMagic[:])
		binary.BigEndian.PutUint64(hdr[8:], s.s.AppliedIndex())
		if _, err := w.Write(hdr[:]); err != nil {
			return err
		}
		if _, err := s.s.WriteTo(w); err != nil {
			return err
		}
		return w.Flush()
	}()
	if err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s *fsmSnapshot) Release() { s.s.Release() }

// readSnapshotHeader reads the header of a snapshot stream and returns the
// applied index it holds.
func readSnapshotHeader(r io.Reader) (uint64, error) {
	var hdr [16]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, fmt.Errorf("snapshot header: %w", err)
	}
	if [8]byte(hdr[:8]) != snapshotMagic {
		return 0, errors.New("snapshot header: not a Quire snapshot")
	}
	return binary.BigEndian.Uint64(hdr[8:]), nil
}

// Restore replaces the store by a snapshot (a leader's, when this node
// fell behind the leader's log, or the newest local one at start).
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	want, err := readSnapshotHeader(rc)
	if err != nil {
		return err
	}
	if err := f.db.ReplaceFrom(rc); err != nil {
		return fmt.Errorf("restore snapshot: %w", err)
	}
	got, err := f.db.AppliedIndex()
	if err != nil {
		return fmt.Errorf("restore snapshot: %w", err)
	}
	if got != want {
		return fmt.Errorf("restore snapshot: the store holds index %d, the snapshot says %d", got, want)
	}
	f.setApplied(got)
	f.restores.Add(1)
	f.log.Info("store replaced by a raft snapshot", "applied", got)
	if f.onRestore != nil {
		f.onRestore()
	}
	return nil
}
