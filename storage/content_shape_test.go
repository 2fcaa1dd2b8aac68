package storage

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"math/rand"
	"sync"
	"testing"
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
			// One incompressible 1 MiB chunk is about 1.4 MB as base64 JSON.
			if n != 1 || a.puts[i] > ChunkSize*3/2 {
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
	d := mustOpen(t)
	if c, b, f := putShape(d); c != 8 || b != 4*ChunkSize || f != 2 {
		t.Fatalf("the store: %d chunks, %d bytes, %d in flight", c, b, f)
	}
	if c, b, f := putShape(&recordingApplier{d: d}); c != 1 || b > ChunkSize+1 || f < 2 {
		t.Fatalf("a replicating applier: %d chunks, %d bytes, %d in flight", c, b, f)
	}
}
