package storage

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func mustOpen(t *testing.T) *DB {
	t.Helper()
	d, err := Open(Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func mustApply(t *testing.T, d *DB, op Op, site string, at time.Time, payload any) Result {
	t.Helper()
	res, err := d.Apply(context.Background(), MustCommand(op, site, "joe", at, payload))
	if err != nil {
		t.Fatalf("apply %s: %v", op, err)
	}
	return res
}

// applyConcurrently applies cmd(0) … cmd(n-1) from setupWriters goroutines,
// so that group commit syncs each round of them once instead of each
// command (group.go). Only for setup whose order nothing asserts; it fails
// t with the first command refused.
func applyConcurrently(t *testing.T, d *DB, n int, cmd func(i int) *Command) {
	t.Helper()
	const setupWriters = 16
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range setupWriters {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				_, errs[i] = d.Apply(context.Background(), cmd(i))
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("command %d: %v", i, err)
		}
	}
}

func addDoc(t *testing.T, d *DB, site, id, path string, at time.Time) string {
	t.Helper()
	res := mustApply(t, d, OpAddDocuments, site, at, AddDocuments{Docs: []NewDocument{{Document: Document{DocumentID: id, Path: path}}}})
	return res.Value.(*AddDocumentsResult).Paths[id]
}

func TestAddDocuments_PathRules(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	tests := []struct {
		name, site, id, path, want string
	}{
		{"first", "default", "11111111-1111-4111-8111-111111111111", "a/b/test.pdf", "a/b/test.pdf"},
		{"duplicate renamed", "default", "22222222-2222-4222-8222-222222222222", "a/b/test.pdf", "a/b/test (22222222-2222-4222-8222-222222222222).pdf"},
		{"no extension", "default", "33333333-3333-4333-8333-333333333333", "a/b", "a/b"},
		{"same path other site", "finance", "44444444-4444-4444-8444-444444444444", "a/b/test.pdf", "a/b/test.pdf"},
		{"root duplicate no ext", "default", "55555555-5555-4555-8555-555555555555", "a/b", "a/b (55555555-5555-4555-8555-555555555555)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := addDoc(t, d, tt.site, tt.id, tt.path, t0); got != tt.want {
				t.Fatalf("path = %q, want %q", got, tt.want)
			}
			id, err := d.DocumentIDByPath(tt.site, tt.want)
			if err != nil || id != tt.id {
				t.Fatalf("path index %q = %q, %v; want %s", tt.want, id, err, tt.id)
			}
		})
	}
	items, err := d.ListFolder("default", "a")
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 3 || !items[0].Entry.Folder || items[0].Name != "b" || items[1].Name != "b" || items[1].Entry.Folder {
		t.Fatalf("folder a = %+v, want folder b, then documents b and its renamed twin", items)
	}
}

func TestAddDocuments_ConflictWritesNothing(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	id := "11111111-1111-4111-8111-111111111111"
	addDoc(t, d, "default", id, "x.txt", t0)
	payload := AddDocuments{Docs: []NewDocument{
		{Document: Document{DocumentID: "66666666-6666-4666-8666-666666666666", Path: "new.txt"}, Tags: []Tag{{Key: "k", Value: "v"}}},
		{Document: Document{DocumentID: id, Path: "y.txt"}},
	}}
	_, err := d.Apply(context.Background(), MustCommand(OpAddDocuments, "default", "joe", t0, payload))
	var ce *ConflictError
	if !errors.As(err, &ce) || ce.Msg != "documentId '"+id+"' already exists" {
		t.Fatalf("err = %v, want conflict", err)
	}
	if _, err := d.GetDocument("default", "66666666-6666-4666-8666-666666666666"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("first document of a failed command exists: %v", err)
	}
	if _, err := d.DocumentIDByPath("default", "new.txt"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("path of a failed command was claimed: %v", err)
	}
}

func TestConcurrentSamePath(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	const n = 20
	var wg sync.WaitGroup
	paths := make([]string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			id := fmt.Sprintf("%08d-0000-4000-8000-000000000000", i)
			res, err := d.Apply(context.Background(), MustCommand(OpAddDocuments, "default", "joe", t0, AddDocuments{Docs: []NewDocument{{Document: Document{DocumentID: id, Path: "same.txt"}}}}))
			if err != nil {
				t.Errorf("apply: %v", err)
				return
			}
			paths[i] = res.Value.(*AddDocumentsResult).Paths[id]
		}(i)
	}
	wg.Wait()
	seen := map[string]bool{}
	plain := 0
	for _, p := range paths {
		if seen[p] {
			t.Fatalf("path %q given twice", p)
		}
		seen[p] = true
		if p == "same.txt" {
			plain++
		}
	}
	if plain != 1 {
		t.Fatalf("%d documents got the plain path, want 1", plain)
	}
}

func TestContent_RoundTripAndDedup(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	rnd := rand.New(rand.NewSource(1))
	sizes := []int{0, 1, 100, ChunkSize - 1, ChunkSize, ChunkSize + 1, 3*ChunkSize + 12345, 9 * ChunkSize}
	for i, size := range sizes {
		data := make([]byte, size)
		if i%2 == 0 {
			rnd.Read(data)
		} else {
			for j := range data {
				data[j] = byte('a' + j%7)
			}
		}
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			t.Parallel() // distinct contents and document ids: independent
			m, tail, err := WriteContent(context.Background(), d, bytes.NewReader(data), 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(data)
			if m.SHA256 != hex.EncodeToString(sum[:]) || m.Size != int64(size) {
				t.Fatalf("manifest %s/%d, want %x/%d", m.SHA256, m.Size, sum, size)
			}
			for n, id := range []string{fmt.Sprintf("%08d-0000-4000-8000-00000000000a", i), fmt.Sprintf("%08d-0000-4000-8000-00000000000b", i)} {
				mustApply(t, d, OpAddDocuments, "default", t0, AddDocuments{Docs: []NewDocument{{Document: Document{DocumentID: id, Path: id}, Content: &m, Chunks: tail}}})
				rd, _, err := d.OpenContent("default", id)
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(rd)
				if err != nil || !bytes.Equal(got, data) {
					t.Fatalf("copy %d: read %d bytes (%v), want identical %d", n, len(got), err, size)
				}
				if size > 10 {
					if _, err := rd.Seek(int64(size/2), io.SeekStart); err != nil {
						t.Fatal(err)
					}
					half, _ := io.ReadAll(rd)
					if !bytes.Equal(half, data[size/2:]) {
						t.Fatalf("read after seek differs")
					}
				}
			}
			man, err := d.GetManifest(m.SHA256)
			if err != nil || man.Refs != 2 {
				t.Fatalf("manifest refs = %d (%v), want 2 (shared)", man.Refs, err)
			}
		})
	}
}

func TestDelete_ReleasesContent(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	data := bytes.Repeat([]byte("quire"), ChunkSize/2)
	m, tail, err := WriteContent(context.Background(), d, bytes.NewReader(data), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"}
	for _, id := range ids {
		mustApply(t, d, OpAddDocuments, "default", t0, AddDocuments{Docs: []NewDocument{{Document: Document{DocumentID: id, Path: id}, Content: &m, Chunks: tail}}})
	}
	mustApply(t, d, OpDeleteDocument, "default", t0, DocumentRef{DocumentID: ids[0]})
	if _, _, err := d.OpenContent("default", ids[1]); err != nil {
		t.Fatalf("content of the second document went with the first: %v", err)
	}
	mustApply(t, d, OpDeleteDocument, "default", t0, DocumentRef{DocumentID: ids[1]})
	if _, err := d.GetManifest(m.SHA256); !errors.Is(err, ErrNotFound) {
		t.Fatalf("manifest still there after last delete: %v", err)
	}
	n := 0
	d.view(func(t *tx) error { n = len(t.keys([]byte(pfxChunk))); return nil })
	if n != 0 {
		t.Fatalf("%d chunks left after deleting every document", n)
	}
}

func TestSweep_UnreferencedChunks(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	data := bytes.Repeat([]byte{7}, 3*ChunkSize)
	rnd := rand.New(rand.NewSource(2))
	rnd.Read(data)
	_, tail, err := WriteContent(context.Background(), d, bytes.NewReader(data), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	shas, err := d.UnreferencedChunks(100)
	if err != nil || len(shas)+len(tail) != 3 || len(shas) == 0 {
		t.Fatalf("unreferenced = %d + tail %d (%v), want 3 in all (never committed)", len(shas), len(tail), err)
	}
	mustApply(t, d, OpSweepChunks, "", t0, SweepChunks{SHAs: shas})
	if shas, _ := d.UnreferencedChunks(100); len(shas) != 0 {
		t.Fatalf("%d chunks left after sweep", len(shas))
	}
}

func TestWriteContent_Limit(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	_, _, err := WriteContent(context.Background(), d, bytes.NewReader(make([]byte, 2*ChunkSize+1)), 2*ChunkSize, nil)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
}

func TestListDocuments_PagingAcrossDays(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	var ids []string
	for i := 0; i < 25; i++ {
		id := fmt.Sprintf("%08d-0000-4000-8000-000000000000", i)
		ids = append(ids, id)
		// Five documents a day over five days.
		addDoc(t, d, "default", id, id, t0.Add(time.Duration(i)*5*time.Hour))
	}
	var got []string
	next := ""
	for pages := 0; pages < 10; pages++ {
		p, err := d.ListDocuments("default", ListOptions{Limit: 7, Next: next})
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range p.Documents {
			got = append(got, doc.DocumentID)
		}
		if p.Next == "" {
			break
		}
		next = p.Next
	}
	if len(got) != 25 {
		t.Fatalf("listed %d documents over all pages, want 25", len(got))
	}
	for i, id := range got {
		if id != ids[24-i] {
			t.Fatalf("position %d = %s, want %s (newest first)", i, id, ids[24-i])
		}
	}
	// A previous token leads back to the first page.
	p1, _ := d.ListDocuments("default", ListOptions{Limit: 7})
	p2, _ := d.ListDocuments("default", ListOptions{Limit: 7, Next: p1.Next})
	back, err := d.ListDocuments("default", ListOptions{Limit: 7, Previous: p2.Previous})
	if err != nil || len(back.Documents) != 7 || back.Documents[0].DocumentID != p1.Documents[0].DocumentID {
		t.Fatalf("previous page = %v (%v), want the first page", back, err)
	}
	if _, err := d.ListDocuments("default", ListOptions{Next: "bogus"}); !errors.Is(err, ErrBadToken) {
		t.Fatalf("bad token err = %v", err)
	}
}

func TestSoftDelete_HardDeleteLeavesOthers(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	a, b := "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
	addDoc(t, d, "default", a, "a.txt", t0)
	addDoc(t, d, "default", b, "b.txt", t0.Add(time.Second))
	mustApply(t, d, OpSoftDelete, "default", t0.Add(time.Minute), DocumentRef{DocumentID: a})
	mustApply(t, d, OpSoftDelete, "default", t0.Add(2*time.Minute), DocumentRef{DocumentID: b})
	mustApply(t, d, OpDeleteDocument, "default", t0.Add(3*time.Minute), DocumentRef{DocumentID: a})
	p, err := d.ListDocuments("default", ListOptions{SoftDeleted: true})
	if err != nil || len(p.Documents) != 1 || p.Documents[0].DocumentID != b {
		t.Fatalf("soft-deleted listing = %+v (%v), want only %s", p, err, b)
	}
	// The path of a soft-deleted document is free; restoring it back onto a
	// taken path renames it instead of hiding either document.
	c := "33333333-3333-4333-8333-333333333333"
	addDoc(t, d, "default", c, "b.txt", t0.Add(4*time.Minute))
	mustApply(t, d, OpRestore, "default", t0.Add(5*time.Minute), DocumentRef{DocumentID: b})
	doc, err := d.GetDocument("default", b)
	if err != nil || doc.Path != "b ("+b+").txt" {
		t.Fatalf("restored path = %v (%v)", doc, err)
	}
}

func TestCommand_EncodeDecode(t *testing.T) {
	t.Parallel() // own store, no package or process state
	c := MustCommand(OpSetTags, "default", "joe", t0, SetTags{DocumentID: "x", Mode: "add", Tags: []Tag{{Key: "k", Value: "v"}}})
	b, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeCommand(b)
	if err != nil || got.Op != c.Op || !got.At.Equal(c.At) || string(got.Data) != string(c.Data) {
		t.Fatalf("round trip = %+v (%v)", got, err)
	}
	if _, err := DecodeCommand([]byte("{}")); err == nil {
		t.Fatal("decoding a command without version byte succeeded")
	}
}

// A command whose payload skipped JSON locally must still replicate: its
// encoded form applied on another store gives the same content.
func TestCommand_InMemoryPayloadReplicates(t *testing.T) {
	t.Parallel() // own store, no package or process state
	src, dst := mustOpen(t), mustOpen(t)
	text := bytes.Repeat([]byte("quire replicates chunks "), 50000) // compressible, > 1 chunk
	noise := make([]byte, ChunkSize)
	rand.New(rand.NewSource(2)).Read(noise)
	chunks := []Chunk{EncodeChunk(text[:ChunkSize]), EncodeChunk(noise)}
	if chunks[0].Value[0] != codecZstd || chunks[1].Value[0] != codecRaw {
		t.Fatalf("codecs = %d, %d; want zstd for text and raw for noise", chunks[0].Value[0], chunks[1].Value[0])
	}
	c := MustCommand(OpPutChunks, "", "", t0, PutChunks{Chunks: chunks})
	if _, err := src.Apply(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	b, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	wire, err := DecodeCommand(b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dst.Apply(context.Background(), wire); err != nil {
		t.Fatal(err)
	}
	for _, d := range []*DB{src, dst} {
		m := Manifest{Size: 2 * ChunkSize, Chunks: []ChunkRef{{SHA: chunks[0].SHA, Size: ChunkSize}, {SHA: chunks[1].SHA, Size: ChunkSize}}}
		h := sha256.New()
		h.Write(text[:ChunkSize])
		h.Write(noise)
		m.SHA256 = hex.EncodeToString(h.Sum(nil))
		id := "00000000-0000-4000-8000-0000000000c1"
		mustApply(t, d, OpAddDocuments, "default", t0, AddDocuments{Docs: []NewDocument{{Document: Document{DocumentID: id, Path: "r.bin"}, Content: &m}}})
		rd, _, err := d.OpenContent("default", id)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(rd)
		if !bytes.Equal(got, append(append([]byte(nil), text[:ChunkSize]...), noise...)) {
			t.Fatalf("content read back differs (%d bytes)", len(got))
		}
	}
}

// SmallContent must describe content exactly as WriteContent does, so the
// inline and the streamed paths share manifests.
func TestSmallContent_MatchesWriteContent(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	for _, size := range []int{0, 1, 4096, ChunkSize} {
		data := bytes.Repeat([]byte{'q'}, size)
		m1, c1, ok := SmallContent(data)
		if !ok {
			t.Fatalf("%d: SmallContent refused", size)
		}
		m2, c2, err := WriteContent(context.Background(), d, bytes.NewReader(data), 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(m1) != fmt.Sprint(m2) || len(c1) != len(c2) {
			t.Fatalf("%d: SmallContent %v/%d chunks, WriteContent %v/%d", size, m1, len(c1), m2, len(c2))
		}
	}
	if _, _, ok := SmallContent(make([]byte, ChunkSize+1)); ok {
		t.Fatal("SmallContent accepted more than one chunk")
	}
}

// TestSweep_UnreferencedAmongReferenced: chunks of committed documents and
// of uploads never committed interleave in sha order; exactly the second
// are listed, and limit caps the list.
func TestSweep_UnreferencedAmongReferenced(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	rnd := rand.New(rand.NewSource(3))
	want := map[string]bool{}
	for i := 0; i < 8; i++ {
		data := make([]byte, 2*ChunkSize+100)
		rnd.Read(data)
		m, tail, err := WriteContent(context.Background(), d, bytes.NewReader(data), 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			for _, c := range m.Chunks[:len(m.Chunks)-len(tail)] {
				want[c.SHA] = true
			}
			continue
		}
		id := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		mustApply(t, d, OpAddDocuments, "default", t0, AddDocuments{Docs: []NewDocument{{
			Document: Document{DocumentID: id, Path: id + ".bin", ContentType: "application/octet-stream"},
			Content:  &m, Chunks: tail,
		}}})
	}
	if len(want) < 8 {
		t.Fatalf("%d chunks of uncommitted uploads, want at least 8", len(want))
	}
	got, err := d.UnreferencedChunks(100)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("unreferenced = %d chunks, want %d", len(got), len(want))
	}
	for _, s := range got {
		if !want[s] {
			t.Errorf("chunk %s listed, but a document references it", s)
		}
	}
	if got, err := d.UnreferencedChunks(3); err != nil || len(got) != 3 {
		t.Errorf("limit 3: %d chunks (%v)", len(got), err)
	}
}
