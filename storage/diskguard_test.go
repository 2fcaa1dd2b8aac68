package storage

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// fakeDisk is a file system whose free space the test sets.
type fakeDisk struct{ free atomic.Uint64 }

const fakeTotal = 1 << 30

func (f *fakeDisk) diskFree(string) (uint64, uint64, error) { return f.free.Load(), fakeTotal, nil }

func openGated(t *testing.T, disk *fakeDisk) *DB {
	t.Helper()
	d, err := Open(Config{Dir: t.TempDir(), MinFreeBytes: 100 << 20, MinFreePercent: -1,
		DiskCheckEvery: 5 * time.Millisecond, diskFree: disk.diskFree})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// waitState waits (bounded) until the gate's state satisfies ok.
func waitState(t *testing.T, d *DB, what string, ok func(WriteState) bool) WriteState {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		st := d.WriteState()
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: state %+v", what, st)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func applyDoc(d *DB, id string) error {
	_, err := d.Apply(context.Background(), MustCommand(OpAddDocuments, "default", "joe", t0,
		AddDocuments{Docs: []NewDocument{{Document: Document{DocumentID: id, Path: id + ".txt"}}}}))
	return err
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func docID(i int) string { return fmt.Sprintf("%08d-0000-4000-8000-000000000000", i) }

// TestWriteGate_LowSpace: under the reserve every write is refused before
// its transaction opens (nothing stored), deletes still go through, the
// gate does not reopen inside the hysteresis band, and it reopens by
// itself above it.
func TestWriteGate_LowSpace(t *testing.T) {
	disk := &fakeDisk{}
	disk.free.Store(500 << 20)
	d := openGated(t, disk)
	if err := applyDoc(d, docID(1)); err != nil {
		t.Fatalf("write with space: %v", err)
	}
	// A write that does not fit in what is left above the reserve is
	// refused and closes the gate.
	disk.free.Store(101 << 20)
	d.checkDisk() // a look, as the watcher's
	_, err := d.Apply(context.Background(), MustCommand(OpPutChunks, "", "", t0, PutChunks{Chunks: []Chunk{EncodeChunk(randomBytes(2 << 20))}}))
	var wr *WriteRefusedError
	if !errors.As(err, &wr) || wr.Kind != KindLowSpace {
		t.Fatalf("2 MiB chunk with 1 MiB above the reserve: err %v, want a low-space refusal", err)
	}
	if st := d.WriteState(); st.Writable || st.Kind != KindLowSpace {
		t.Fatalf("state after a refused write: %+v", st)
	}
	mustApply(t, d, OpDeleteDocument, "default", t0, DocumentRef{DocumentID: docID(1)})
	disk.free.Store(200 << 20)
	waitState(t, d, "gate reopened", func(s WriteState) bool { return s.Writable })
	if err := applyDoc(d, docID(1)); err != nil {
		t.Fatalf("write after space returned: %v", err)
	}

	// The watcher closes the gate under the reserve.
	disk.free.Store(50 << 20)
	st := waitState(t, d, "gate closed", func(s WriteState) bool { return !s.Writable })
	if st.Kind != KindLowSpace || st.Reserve != 100<<20 || st.Free != 50<<20 {
		t.Fatalf("state %+v", st)
	}
	err = applyDoc(d, docID(2))
	if !errors.As(err, &wr) || wr.Kind != KindLowSpace || wr.Reason != st.Reason {
		t.Fatalf("write under the reserve: err %v", err)
	}
	if _, err := d.GetDocument("default", docID(2)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("refused document stored: %v", err)
	}
	// Reads work, and deletes (which free space) go through.
	if _, err := d.GetDocument("default", docID(1)); err != nil {
		t.Fatalf("read while refused: %v", err)
	}
	mustApply(t, d, OpDeleteDocument, "default", t0, DocumentRef{DocumentID: docID(1)})

	// Above the reserve but inside the band: still closed.
	disk.free.Store(110 << 20)
	waitState(t, d, "a look at 110 MiB", func(s WriteState) bool { return s.Free == 110<<20 })
	d.checkDisk()
	if d.WriteState().Writable {
		t.Fatal("gate reopened inside the hysteresis band")
	}
	disk.free.Store(200 << 20)
	waitState(t, d, "gate reopened", func(s WriteState) bool { return s.Writable })
	if err := applyDoc(d, docID(3)); err != nil {
		t.Fatalf("write after space returned: %v", err)
	}
}

// TestWriteGate_IOErrorLatches: a commit that fails with EIO fails its
// command with an io-error refusal, stores nothing, and closes the gate
// for good: later writes are refused even with plenty of space, reads go on.
func TestWriteGate_IOErrorLatches(t *testing.T) {
	disk := &fakeDisk{}
	disk.free.Store(500 << 20)
	d := openGated(t, disk)
	var commits atomic.Int32
	d.SetCommitFault(func(c *Command) error {
		if commits.Add(1) == 2 {
			return &badgerSyncErr{syscall.EIO}
		}
		return nil
	})
	if err := applyDoc(d, docID(1)); err != nil {
		t.Fatal(err)
	}
	err := applyDoc(d, docID(2))
	var wr *WriteRefusedError
	if !errors.As(err, &wr) || wr.Kind != KindIOError || !errors.Is(err, syscall.EIO) {
		t.Fatalf("failed commit: err %v, want an io-error refusal wrapping EIO", err)
	}
	if _, err := d.GetDocument("default", docID(2)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("document of the failed commit visible: %v", err)
	}
	d.checkDisk() // a look with plenty of space
	if st := d.WriteState(); st.Writable || st.Kind != KindIOError {
		t.Fatalf("state after EIO: %+v", st)
	}
	if err := applyDoc(d, docID(3)); !errors.As(err, &wr) || wr.Kind != KindIOError {
		t.Fatalf("write after EIO: %v", err)
	}
	if _, err := d.GetDocument("default", docID(1)); err != nil {
		t.Fatalf("read after EIO: %v", err)
	}
	// A milder kind never replaces io-error; only a restart clears it.
	d.refuseWrites(KindLowSpace, "x")
	d.allowWrites(KindLowSpace)
	if st := d.WriteState(); st.Kind != KindIOError {
		t.Fatalf("io-error replaced: %+v", st)
	}
}

// badgerSyncErr is an I/O error wrapped the way Badger wraps file errors.
type badgerSyncErr struct{ err error }

func (e *badgerSyncErr) Error() string { return "while syncing value log: " + e.err.Error() }
func (e *badgerSyncErr) Unwrap() error { return e.err }

func TestIsIOError(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"EIO", fmt.Errorf("write: %w", syscall.EIO), true},
		{"ENOSPC", fmt.Errorf("write: %w", syscall.ENOSPC), true},
		{"EROFS", syscall.EROFS, true},
		{"sync text", errors.New("Unable to sync value log file"), true},
		{"validation", Invalid("path", "bad"), false},
		{"conflict", badger.ErrConflict, false},
		{"not found", ErrNotFound, false},
		{"closed", ErrClosed, false},
		{"already refused", &WriteRefusedError{Kind: KindIOError, Err: syscall.EIO}, false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsIOError(tt.err); got != tt.want {
				t.Fatalf("IsIOError(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

// TestWriteGate_ReadOnlyOpenHook: a gate closed by the read-only open is
// not cleared by the watcher itself; the watcher runs the onWritable
// hooks once space is there, and the hook (the reopen) clears it.
func TestWriteGate_ReadOnlyOpenHook(t *testing.T) {
	disk := &fakeDisk{}
	disk.free.Store(50 << 20)
	d := openGated(t, disk)
	var calls atomic.Int32
	d.OnWritable(func() {
		calls.Add(1)
		d.allowWrites(KindReadOnlyOpen)
	})
	d.refuseWrites(KindReadOnlyOpen, "opened read-only: the disk is full")
	waitState(t, d, "a look at 50 MiB", func(s WriteState) bool { return s.Free == 50<<20 })
	d.checkDisk()
	if st := d.WriteState(); st.Writable || st.Kind != KindReadOnlyOpen || calls.Load() != 0 {
		t.Fatalf("under the reserve: state %+v, %d hook calls", st, calls.Load())
	}
	var wr *WriteRefusedError
	if err := applyDoc(d, docID(1)); !errors.As(err, &wr) || wr.Kind != KindReadOnlyOpen {
		t.Fatalf("write while read-only: %v", err)
	}
	disk.free.Store(500 << 20)
	waitState(t, d, "reopened by the hook", func(s WriteState) bool { return s.Writable })
	if calls.Load() == 0 {
		t.Fatal("hook not run")
	}
	if err := applyDoc(d, docID(1)); err != nil {
		t.Fatalf("write after reopen: %v", err)
	}
}

// closingReader serves random bytes; after closeAt bytes it takes the
// disk's free space under the reserve and waits for the gate to close.
type closingReader struct {
	d       *DB
	disk    *fakeDisk
	n       int64
	closeAt int64
	max     int64
}

func (r *closingReader) Read(p []byte) (int, error) {
	if r.n >= r.max {
		return 0, io.EOF
	}
	if r.n >= r.closeAt && r.d.WriteState().Writable {
		r.disk.free.Store(50 << 20)
		for deadline := time.Now().Add(5 * time.Second); r.d.WriteState().Writable && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
	}
	p = p[:min(int64(len(p)), r.max-r.n)]
	rand.Read(p)
	r.n += int64(len(p))
	return len(p), nil
}

// TestWriteGate_UploadStopsEarly: an upload stops reading soon after the
// gate closes, returns the refusal, and its chunks can be swept while the
// gate is closed (a sweep frees space).
func TestWriteGate_UploadStopsEarly(t *testing.T) {
	disk := &fakeDisk{}
	disk.free.Store(500 << 20)
	d := openGated(t, disk)
	r := &closingReader{d: d, disk: disk, closeAt: 3 << 20, max: 64 << 20}
	var shas []string
	_, _, err := WriteContent(context.Background(), d, r, 0, func(sha string) { shas = append(shas, sha) })
	var wr *WriteRefusedError
	if !errors.As(err, &wr) || wr.Kind != KindLowSpace {
		t.Fatalf("upload across the gate closing: %v", err)
	}
	if r.n > r.closeAt+2<<20 {
		t.Fatalf("read %d MiB of the body, the gate closed at %d MiB", r.n>>20, r.closeAt>>20)
	}
	t.Logf("read %d KiB of the body, the gate closed at %d KiB", r.n>>10, r.closeAt>>10)
	mustApply(t, d, OpSweepChunks, "", t0, SweepChunks{SHAs: shas})
	if left, err := d.UnreferencedChunks(100); err != nil || len(left) != 0 {
		t.Fatalf("chunks left after the sweep: %v %v", left, err)
	}
}
