package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestFullOpen_ReadOnlyThenWritable opens a store while the file system
// (played by diskFree) has less than MinReserve free: it opens read-only,
// serves reads, refuses writes with a WriteRefusedError and says why in
// WriteState. When space returns it turns read-write without a restart,
// while readers keep reading without an error.
func TestFullOpen_ReadOnlyThenWritable(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Badger has no read-only mode on Windows")
	}
	dir := t.TempDir()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	d, err := Open(Config{Dir: dir, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		mustApply(t, d, OpAddDocuments, "default", time.Now(), AddDocuments{Docs: []NewDocument{{Document: Document{DocumentID: fmt.Sprint("d", i), Path: fmt.Sprint("d", i)}}}})
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	var free atomic.Uint64 // what the file system reports
	free.Store(1 << 20)
	real := diskFree
	t.Cleanup(func() { diskFree = real })
	diskFree = func(string) (uint64, uint64, error) { return free.Load(), 1 << 40, nil }

	d, err = Open(Config{Dir: dir, Logger: quiet})
	if err != nil {
		t.Fatalf("open on a full disk: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	if st := d.WriteState(); st.Writable || st.Kind != readOnlyOpenKind || st.Reason == "" {
		t.Fatalf("write state on a full disk: %+v", st)
	}
	_, err = d.Apply(context.Background(), MustCommand(OpAddDocuments, "default", "joe", time.Now(), AddDocuments{Docs: []NewDocument{{Document: Document{DocumentID: "new", Path: "new"}}}}))
	var refused *WriteRefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("write on a full disk: %v, want a WriteRefusedError", err)
	}

	// Readers run across the reopen.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var readErr atomic.Value
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := d.GetDocument("default", fmt.Sprint("d", (r+i)%20)); err != nil {
					readErr.Store(err)
					return
				}
			}
		}(r)
	}
	free.Store(MinReserve() + 1<<30)
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := d.Apply(context.Background(), MustCommand(OpAddDocuments, "default", "joe", time.Now(), AddDocuments{Docs: []NewDocument{{Document: Document{DocumentID: "new", Path: "new"}}}}))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("writes still refused 10 s after space returned: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if err, _ := readErr.Load().(error); err != nil {
		t.Fatalf("a read failed across the reopen: %v", err)
	}
	if st := d.WriteState(); !st.Writable {
		t.Fatalf("write state after space returned: %+v", st)
	}
	if _, err := d.GetDocument("default", "new"); err != nil {
		t.Fatal(err)
	}
}

// TestFullOpen_NewStoreOnFullDisk: a store that does not exist yet cannot
// be created on a full disk; Open says so instead of crashing.
func TestFullOpen_NewStoreOnFullDisk(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Badger has no read-only mode on Windows")
	}
	real := diskFree
	t.Cleanup(func() { diskFree = real })
	diskFree = func(string) (uint64, uint64, error) { return 0, 1 << 30, nil }
	d, err := Open(Config{Dir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err == nil {
		d.Close()
		t.Fatal("a new store opened on a full disk")
	}
	t.Log(err)
}
