package storage

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/pb"
	"google.golang.org/protobuf/proto"
)

// The replica side of the store, for the cluster package (cluster/DESIGN.md):
// commands taken from the Raft log are applied with their log index
// (ApplyAt), which is stored in the same transaction as the command, so a
// restarted node knows exactly which entries it holds (AppliedIndex).
// Snapshots are one read transaction (OpenSnapshot) and are loaded in
// place (ReplaceFrom).

var (
	appliedKey   = []byte(pfxRaft + "applied")
	restoringKey = []byte(pfxRaft + "restoring")
)

// ErrRestoreIncomplete is returned by AppliedIndex while the store holds a
// snapshot that was not loaded to its end (a crash in ReplaceFrom): its
// content is not a state of the log and must be replaced again.
var ErrRestoreIncomplete = errors.New("storage: a snapshot restore did not finish")

// UnappliedError is returned by ApplyAt when the node could neither apply
// the command nor record it as failed: the store is closed, the disk
// failed, the write gate is latched. The command's outcome on this node is
// unknown to the log, so the node must stop applying (and never skip the
// entry): after a restart it is applied again from the log.
type UnappliedError struct {
	Index uint64
	Err   error
}

func (e *UnappliedError) Error() string {
	return fmt.Sprintf("storage: raft entry %d not applied: %v", e.Index, e.Err)
}
func (e *UnappliedError) Unwrap() error { return e.Err }

func setAppliedIndex(txn *badger.Txn, index uint64) error {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], index)
	return txn.Set(appliedKey, b[:])
}

// AppliedIndex is the Raft index of the last entry applied with ApplyAt or
// MarkApplied, 0 when there is none. It returns ErrRestoreIncomplete while
// a snapshot load is unfinished.
func (d *DB) AppliedIndex() (uint64, error) {
	var idx uint64
	err := d.badgerView(func(txn *badger.Txn) error {
		if _, err := txn.Get(restoringKey); err == nil {
			return ErrRestoreIncomplete
		} else if !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		var err error
		idx, err = readApplied(txn)
		return err
	})
	return idx, err
}

func readApplied(txn *badger.Txn) (uint64, error) {
	item, err := txn.Get(appliedKey)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var idx uint64
	err = item.Value(func(v []byte) error {
		if len(v) != 8 {
			return fmt.Errorf("storage: applied index of %d bytes", len(v))
		}
		idx = binary.BigEndian.Uint64(v)
		return nil
	})
	return idx, err
}

// Admit checks c as Apply does before its transaction (op, definition,
// site, store open) and asks the write gate for room; release gives the
// room back once the command is applied. The cluster's leader calls it
// before it proposes c: a committed entry is applied on every node
// whatever their gates say (ApplyAt does not ask them).
func (d *DB) Admit(c *Command) (release func(), err error) {
	if _, err := d.precheck(c); err != nil {
		return nil, err
	}
	size := writeSize(c)
	if err := d.admit(c, size); err != nil {
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { d.release(c, size) }) }, nil
}

// ApplyAt applies c, the Raft log entry at index, and stores index as the
// applied index in the same transaction. It does not ask the write gate,
// never gives up because of a context, and runs the OnCommit hooks as
// Apply does. A command that fails deterministically (validation, not
// found, conflict, too big: the same on every node) leaves nothing written
// but the applied index, and its error is returned as is. A failure of
// this node (closed store, disk, latched gate) is an *UnappliedError:
// nothing is written, not even the index.
func (d *DB) ApplyAt(c *Command, index uint64) (Result, error) {
	if index == 0 {
		return Result{}, errors.New("storage: ApplyAt needs a raft index above 0")
	}
	fn, err := d.precheck(c)
	if errors.Is(err, ErrClosed) {
		return Result{}, &UnappliedError{Index: index, Err: err}
	}
	if err != nil {
		return Result{}, d.failedAt(index, err)
	}
	res, err := d.applyTxn(context.Background(), c, fn, index)
	if err == nil {
		return res, nil
	}
	if nodeLocal(err) {
		return Result{}, &UnappliedError{Index: index, Err: err}
	}
	return Result{}, d.failedAt(index, err)
}

// IndexedCommand is a command taken from the Raft log with its index.
type IndexedCommand struct {
	Index uint64
	Cmd   *Command
}

// ApplyBatchAt applies the commands of consecutive Raft log entries in
// one transaction, the applied index of the last one with them: one
// commit and one fsync for the whole batch instead of one per entry
// (cluster/DESIGN.md, "Batched apply"). A command that fails its
// pre-checks (deterministic: unknown op, bad definition, bad site) writes
// nothing and gets its error in errs. If anything else goes wrong (an
// applier refuses its command after writing part of it, the transaction
// is too big, the commit fails, the store is closed) the transaction is
// discarded, nothing is written, and ok is false: the caller applies the
// entries one by one with ApplyAt, so one failed command never undoes its
// neighbours. OnCommit hooks run after the commit, in log order.
func (d *DB) ApplyBatchAt(batch []IndexedCommand) (res []Result, errs []error, ok bool) {
	if len(batch) == 0 {
		return nil, nil, true
	}
	fns := make([]applyFunc, len(batch))
	errs = make([]error, len(batch))
	for i, e := range batch {
		if e.Index == 0 || (i > 0 && e.Index <= batch[i-1].Index) {
			return nil, nil, false
		}
		fn, err := d.precheck(e.Cmd)
		if errors.Is(err, ErrClosed) {
			return nil, nil, false
		}
		fns[i], errs[i] = fn, err
	}
	d.writeMu.RLock()
	defer d.writeMu.RUnlock()
	if d.bdb.IsClosed() {
		return nil, nil, false
	}
	txs := make([]*tx, len(batch))
	vals := make([]any, len(batch))
	txn := d.bdb.NewTransaction(true)
	defer txn.Discard()
	scans := map[string][]kv{} // shared as a group commit's are (runGroup)
	for i, e := range batch {
		if errs[i] != nil {
			continue
		}
		t := &tx{txn: txn, scans: scans}
		v, err := runApplier(t, e.Cmd, fns[i])
		if err == nil {
			err = d.commitFault(e.Cmd)
		}
		if err != nil {
			return nil, nil, false
		}
		txs[i], vals[i] = t, v
	}
	if err := setAppliedIndex(txn, batch[len(batch)-1].Index); err != nil {
		return nil, nil, false
	}
	if err := txn.Commit(); err != nil {
		return nil, nil, false
	}
	res = make([]Result, len(batch))
	for i, e := range batch {
		t := txs[i]
		if t == nil {
			continue
		}
		full := Result{Value: vals[i], Replayed: t.replayed, Events: t.events}
		for r := range t.touched {
			full.Touched = append(full.Touched, r)
		}
		for r, at := range t.queued {
			full.Queued = append(full.Queued, QueuedDoc{r, at})
		}
		if e.Cmd.Op == OpSetSiteConfig {
			d.siteCfg.clear()
		}
		d.runHooks(e.Cmd, full)
		res[i] = Result{Value: vals[i], Replayed: t.replayed}
		if p, ok := e.Cmd.local.(PutChunks); ok {
			n := 0
			for _, ch := range p.Chunks {
				n += len(ch.Value)
			}
			d.touched(n)
		}
	}
	return res, errs, true
}

// failedAt records index for a command that failed with the deterministic
// error err, and returns err (or an UnappliedError when even that fails).
func (d *DB) failedAt(index uint64, err error) error {
	if merr := d.MarkApplied(index); merr != nil {
		return &UnappliedError{Index: index, Err: merr}
	}
	return err
}

// nodeLocal tells the errors of this node from the command's own.
func nodeLocal(err error) bool {
	var re *WriteRefusedError
	return errors.As(err, &re) || IsIOError(err) || errors.Is(err, ErrClosed) ||
		errors.Is(err, badger.ErrDBClosed) || errors.Is(err, badger.ErrConflict) ||
		errors.Is(err, badger.ErrReadOnlyTxn) || errors.Is(err, context.Canceled) ||
		errors.Is(err, context.DeadlineExceeded)
}

// MarkApplied records index as applied without a command: for log entries
// that change nothing here (an entry that does not decode, a command that
// failed) so that a restart does not take them again.
func (d *DB) MarkApplied(index uint64) error {
	d.writeMu.RLock()
	defer d.writeMu.RUnlock()
	if d.bdb.IsClosed() {
		return ErrClosed
	}
	err := d.bdb.Update(func(txn *badger.Txn) error { return setAppliedIndex(txn, index) })
	if IsIOError(err) {
		return d.failedWrite(err)
	}
	return err
}

// Snapshot is a consistent view of the whole store, for a Raft snapshot.
// It holds a read transaction (and keeps the store from being swapped or
// closed) until Release.
type Snapshot struct {
	d       *DB
	txn     *badger.Txn
	applied uint64
	once    sync.Once
}

// OpenSnapshot opens a snapshot of the store as it is now. The caller
// must Release it.
func (d *DB) OpenSnapshot() (*Snapshot, error) {
	d.rlock()
	txn := d.bdb.NewTransaction(false)
	idx, err := readApplied(txn)
	if err != nil {
		txn.Discard()
		d.bmu.RUnlock()
		return nil, err
	}
	return &Snapshot{d: d, txn: txn, applied: idx}, nil
}

// AppliedIndex is the applied index the snapshot holds.
func (s *Snapshot) AppliedIndex() uint64 { return s.applied }

// WriteTo writes the snapshot in Backup's format (ReplaceFrom and Restore
// read it), one value at a time.
func (s *Snapshot) WriteTo(w io.Writer) (int64, error) {
	cw := &countWriter{w: w}
	_, err := s.d.writeKVs(s.txn, cw, func(k []byte) bool { return string(k) == string(restoringKey) })
	return cw.n, err
}

// Release ends the snapshot's read transaction.
func (s *Snapshot) Release() {
	s.once.Do(func() {
		s.txn.Discard()
		s.d.bmu.RUnlock()
	})
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// replaceWait bounds how long ReplaceFrom waits for reads to finish.
const replaceWait = 30 * time.Second

// ReplaceFrom replaces the whole content of the store by a snapshot in
// Backup's format, in place: no command is applied and no read is served
// meanwhile. A marker key makes an interrupted load visible
// (AppliedIndex returns ErrRestoreIncomplete) until a later ReplaceFrom
// completes. Values get new Badger versions, so the index's version
// watermark sees every restored document as changed; OnCommit hooks do not
// run (the caller tells the index to catch up).
func (d *DB) ReplaceFrom(r io.Reader) error {
	d.gcMu.Lock()
	defer d.gcMu.Unlock()
	d.writeMu.Lock()
	defer d.writeMu.Unlock()
	if err := d.lockOut(replaceWait); err != nil {
		return err
	}
	defer d.bmu.Unlock()
	d.mu.RLock()
	closed := d.closed
	d.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	if d.readOnly.Load() {
		return &WriteRefusedError{Kind: readOnlyOpenKind, Reason: "storage is read-only: cannot load a snapshot"}
	}
	// What was cached of the old state is not the snapshot's: forgotten
	// whatever the load's outcome (a cut load leaves a state in between).
	defer d.siteCfg.clear()
	if err := d.bdb.DropAll(); err != nil {
		return fmt.Errorf("replace: drop: %w", err)
	}
	if err := d.bdb.Update(func(txn *badger.Txn) error { return txn.Set(restoringKey, nil) }); err != nil {
		return fmt.Errorf("replace: mark: %w", err)
	}
	if err := d.loadKVs(r); err != nil {
		return fmt.Errorf("replace: load: %w", err)
	}
	if err := d.bdb.Update(func(txn *badger.Txn) error { return txn.Delete(restoringKey) }); err != nil {
		return fmt.Errorf("replace: unmark: %w", err)
	}
	return d.bdb.Sync()
}

// loadKVs writes the KVLists of r through one write batch.
func (d *DB) loadKVs(r io.Reader) error {
	br := bufio.NewReaderSize(r, 1<<20)
	wb := d.bdb.NewWriteBatch()
	defer wb.Cancel()
	var hdr [8]byte
	var buf []byte
	for {
		if _, err := io.ReadFull(br, hdr[:]); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return err
		}
		n := binary.LittleEndian.Uint64(hdr[:])
		if n > 1<<30 {
			return fmt.Errorf("list of %d bytes", n)
		}
		if uint64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(br, buf); err != nil {
			return err
		}
		var list pb.KVList
		if err := proto.Unmarshal(buf, &list); err != nil {
			return err
		}
		for _, kv := range list.Kv {
			if string(kv.Key) == string(restoringKey) {
				continue
			}
			e := badger.NewEntry(kv.Key, kv.Value)
			if len(kv.UserMeta) > 0 {
				e = e.WithMeta(kv.UserMeta[0])
			}
			if err := wb.SetEntry(e); err != nil {
				return err
			}
		}
	}
	return wb.Flush()
}

// StateHash is a SHA-256 over every key and value of the store (but the
// restore marker), in key order, and the number of keys. Two replicas that
// applied the same log prefix have the same hash: the applied index is
// part of it.
func (d *DB) StateHash() (string, int, error) {
	h := sha256.New()
	n := 0
	err := d.badgerView(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.DefaultIteratorOptions)
		defer it.Close()
		var lb [8]byte
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			if string(item.Key()) == string(restoringKey) {
				continue
			}
			binary.BigEndian.PutUint64(lb[:], uint64(len(item.Key())))
			h.Write(lb[:])
			h.Write(item.Key())
			if err := item.Value(func(v []byte) error {
				binary.BigEndian.PutUint64(lb[:], uint64(len(v)))
				h.Write(lb[:])
				h.Write(v)
				return nil
			}); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return hex.EncodeToString(h.Sum(nil)), n, err
}
