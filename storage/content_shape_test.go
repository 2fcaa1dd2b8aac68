package storage

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// recordingApplier is a replicating applier as WriteContent sees one (not
// the *DB): it encodes every command as for the Raft log, records it and
// applies the decoded copy to the store.
type recordingApplier struct {
	d    *DB
	mu   sync.Mutex
	puts []int // encoded size of each OpPutChunks
	n    []int // chunks of each
}

func (a *recordingApplier) Apply(ctx context.Context, c *Command) (Result, error) {
	b, err := c.Encode()
	if err != nil {
		return Result{}, err
	}
	dc, err := DecodeCommand(b)
	if err != nil {
		return Result{}, err
	}
	if c.Op == OpPutChunks {
		p, err := decode[PutChunks](dc)
		if err != nil {
			return Result{}, err
		}
		a.mu.Lock()
		a.puts = append(a.puts, len(b))
		a.n = append(a.n, len(p.Chunks))
		a.mu.Unlock()
	}
	return a.d.Apply(ctx, dc)
}

// Through a replicating applier every chunk command carries one chunk (at
// most 1 MiB of content), the last chunk rides in the commit command, and
// nothing is visible before that commit.
func TestWriteContent_ReplicatedAppliersGetOneChunkPerCommand(t *testing.T) {
	t.Parallel() // own store, no package or process state
	for _, size := range []int{ChunkSize / 2, ChunkSize, ChunkSize + 1, 5*ChunkSize + 77} {
		d := mustOpen(t)
		a := &recordingApplier{d: d}
		data := make([]byte, size)
		rand.New(rand.NewSource(int64(size))).Read(data)
		m, tail, err := WriteContent(context.Background(), a, bytes.NewReader(data), 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		chunks := (size + ChunkSize - 1) / ChunkSize
		if len(tail) != 1 || len(a.puts) != chunks-1 {
			t.Fatalf("size %d: %d chunk commands and a tail of %d, want %d and 1", size, len(a.puts), len(tail), chunks-1)
		}
		for i, n := range a.n {
			// One incompressible 1 MiB chunk in the binary wire form: its
			// bytes plus a small header, no base64 (wire.go).
			if n != 1 || a.puts[i] > ChunkSize+1024 {
				t.Fatalf("size %d: chunk command %d carries %d chunks in %d encoded bytes", size, i, n, a.puts[i])
			}
		}
		if _, err := d.GetManifest(m.SHA256); err == nil {
			t.Fatalf("size %d: the manifest exists before the commit", size)
		}
		id := "33333333-3333-4333-8333-333333333333"
		cmd := MustCommand(OpAddDocuments, "default", "", t0, AddDocuments{Docs: []NewDocument{{Document: Document{DocumentID: id, Path: id}, Content: &m, Chunks: tail}}})
		if _, err := a.Apply(context.Background(), cmd); err != nil {
			t.Fatal(err)
		}
		rd, _, err := d.OpenContent("default", id)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		if _, err := io.Copy(h, rd); err != nil || hex.EncodeToString(h.Sum(nil)) != m.SHA256 {
			t.Fatalf("size %d: read back %x (%v), want %s", size, h.Sum(nil), err, m.SHA256)
		}
	}
}

// The single server keeps its batches: up to 8 chunks per command, two in
// flight; anything else gets one chunk per command.
func TestWriteContent_PutShape(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	if c, b, f := putShape(d); c != 8 || b != 4*ChunkSize || f != 2 {
		t.Fatalf("the store: %d chunks, %d bytes, %d in flight", c, b, f)
	}
	if c, b, f := putShape(&recordingApplier{d: d}); c != 1 || b > ChunkSize+1 || f < 2 {
		t.Fatalf("a replicating applier: %d chunks, %d bytes, %d in flight", c, b, f)
	}
}

// flakyApplier answers every second chunk command with an error whose
// outcome is unknown, half of the time after applying it (the entry
// committed, the answer was lost), or with err when set.
type flakyApplier struct {
	d     *DB
	err   error
	mu    sync.Mutex
	calls int
}

func (a *flakyApplier) Apply(ctx context.Context, c *Command) (Result, error) {
	if c.Op != OpPutChunks {
		return a.d.Apply(ctx, c)
	}
	a.mu.Lock()
	a.calls++
	n := a.calls
	a.mu.Unlock()
	if a.err != nil {
		return Result{}, a.err
	}
	if n%2 == 0 {
		if n%4 == 0 {
			if _, err := a.d.Apply(ctx, c); err != nil {
				return Result{}, err
			}
		}
		return Result{}, errors.New("cluster: at the leader: leadership lost while committing log")
	}
	return a.d.Apply(ctx, c)
}

// A chunk command whose outcome is unknown is sent again (it is
// idempotent); a refusal fails the upload at once.
func TestWriteContent_RetriesChunkCommandsOfUnknownOutcome(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	data := make([]byte, 6*ChunkSize+5)
	rand.New(rand.NewSource(6)).Read(data)
	a := &flakyApplier{d: d}
	m, tail, err := WriteContent(context.Background(), a, bytes.NewReader(data), 0, nil)
	if err != nil {
		t.Fatalf("an upload with lost answers failed: %v", err)
	}
	if a.calls < 9 {
		t.Fatalf("%d chunk commands for 6 chunks and lost answers: nothing was retried", a.calls)
	}
	id := "44444444-4444-4444-8444-444444444444"
	mustApply(t, d, OpAddDocuments, "default", t0, AddDocuments{Docs: []NewDocument{{Document: Document{DocumentID: id, Path: id}, Content: &m, Chunks: tail}}})
	rd, _, err := d.OpenContent("default", id)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rd)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes (%v), want %d identical", len(got), err, len(data))
	}

	refused := &flakyApplier{d: d, err: &WriteRefusedError{Kind: KindIOError, Reason: "No cluster leader"}}
	t1 := time.Now()
	_, _, err = WriteContent(context.Background(), refused, bytes.NewReader(data), 0, nil)
	var wr *WriteRefusedError
	if !errors.As(err, &wr) || refused.calls > replicatedPutsInFlight+1 || time.Since(t1) > 5*time.Second {
		t.Fatalf("a refused chunk command: err %v after %d calls in %s, want the refusal at once", err, refused.calls, time.Since(t1))
	}
}

// detachedApplier is a replicating applier whose chunk commands outlive
// the caller: like a leader still committing a forwarded command after
// the follower gave up on it, each put is applied in its own goroutine,
// released only after the caller's context ended, while Apply returns
// as soon as the context ends.
type detachedApplier struct {
	d       *DB
	release chan struct{}
	pending atomic.Int64
}

func (a *detachedApplier) Apply(ctx context.Context, c *Command) (Result, error) {
	if c.Op != OpPutChunks {
		return a.d.Apply(ctx, c)
	}
	a.pending.Add(1)
	done := make(chan error, 1)
	go func() {
		<-a.release
		_, err := a.d.Apply(context.Background(), c)
		// Count the put finished before its result is seen: a deferred
		// decrement ran after the send, so the caller could return
		// before it and the test failed though WriteContent had waited.
		a.pending.Add(-1)
		done <- err
	}()
	select {
	case err := <-done:
		return Result{}, err
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
}

// failingReader yields r's bytes, then fails and starts the
// release of the applier's puts a little later.
type failingReader struct {
	r       io.Reader
	release chan struct{}
	once    sync.Once
}

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		f.once.Do(func() { time.AfterFunc(100*time.Millisecond, func() { close(f.release) }) })
		return n, errors.New("client went away")
	}
	return n, err
}

// A failed upload returns only after every chunk command it sent has
// finished: the caller's sweep of its chunks comes after them in the
// log. Were a put cut off instead, it could be applied after the sweep
// and leave its chunk behind (a flaky cluster test found this).
func TestWriteContent_FailureWaitsForChunkCommandsInFlight(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	data := make([]byte, 4*ChunkSize+99)
	rand.New(rand.NewSource(7)).Read(data)
	a := &detachedApplier{d: d, release: make(chan struct{})}
	var shas []string
	_, _, err := WriteContent(context.Background(), a, &failingReader{r: bytes.NewReader(data), release: a.release}, 0, func(sha string) { shas = append(shas, sha) })
	if err == nil {
		t.Fatal("an upload whose body failed succeeded")
	}
	if n := a.pending.Load(); n != 0 {
		t.Fatalf("WriteContent returned with %d chunk commands still being applied", n)
	}
	mustApply(t, d, OpSweepChunks, "", t0, SweepChunks{SHAs: shas})
	if left, err := d.UnreferencedChunks(10); err != nil || len(left) != 0 {
		t.Fatalf("%d chunks left after the sweep of a failed upload (%v)", len(left), err)
	}
}
