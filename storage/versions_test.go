package storage

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"
)

const vdoc = "77777777-7777-4777-8777-777777777777"

// commitBytes makes raw the content of doc in one OpCommitContent.
func commitBytes(t *testing.T, d *DB, doc string, raw []byte, at time.Time) Manifest {
	t.Helper()
	m, chunks, ok := SmallContent(raw)
	if !ok {
		t.Fatal("content too large for SmallContent")
	}
	mustApply(t, d, OpCommitContent, "default", at, CommitContent{DocumentID: doc, Content: m, Chunks: chunks, ContentType: "text/plain"})
	return m
}

func chunkCount(t *testing.T, d *DB) int {
	t.Helper()
	n := 0
	if err := d.view(func(t *tx) error { n = len(t.keys([]byte(pfxChunk))); return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

func readVersion(t *testing.T, d *DB, doc, key string) []byte {
	t.Helper()
	v, err := d.GetVersion("default", doc, key)
	if err != nil {
		t.Fatalf("get version %s: %v", key, err)
	}
	rd, err := d.OpenManifest(v.ContentSHA256)
	if err != nil {
		t.Fatalf("open %s: %v", key, err)
	}
	defer rd.Close()
	b, err := io.ReadAll(rd)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestVersions_KeepChunksUntilReleased(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	addDoc(t, d, "default", vdoc, "v.txt", t0)
	v1, v2 := []byte("version one"), []byte("version two")
	commitBytes(t, d, vdoc, v1, t0.Add(time.Second))
	commitBytes(t, d, vdoc, v2, t0.Add(2*time.Second))
	newPath := "moved.txt"
	mustApply(t, d, OpUpdateDocument, "default", t0.Add(3*time.Second), UpdateDocument{DocumentID: vdoc, Path: &newPath})
	// Only tags: no version.
	mustApply(t, d, OpUpdateDocument, "default", t0.Add(4*time.Second), UpdateDocument{DocumentID: vdoc, Tags: []Tag{{Key: "k", Value: "v"}}})

	page, err := d.ListVersions("default", vdoc, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	// current (moved, v2), v2 at v.txt, v1; the empty first state is
	// no version (its first content replaced it: firstContent).
	if len(page.Versions) != 3 {
		t.Fatalf("versions = %d, want 3: %+v", len(page.Versions), page.Versions)
	}
	for i := 1; i < len(page.Versions); i++ {
		if page.Versions[i-1].VersionKey <= page.Versions[i].VersionKey {
			t.Fatalf("not newest first: %s then %s", page.Versions[i-1].VersionKey, page.Versions[i].VersionKey)
		}
	}
	if page.Versions[0].Path != "moved.txt" || page.Versions[1].Path != "v.txt" {
		t.Fatalf("paths = %q, %q", page.Versions[0].Path, page.Versions[1].Path)
	}
	key1 := page.Versions[2].VersionKey
	if got := readVersion(t, d, vdoc, key1); !bytes.Equal(got, v1) {
		t.Fatalf("version 1 content = %q", got)
	}
	// The v1 chunk is referenced by the version only: a sweep keeps it.
	if shas, err := d.UnreferencedChunks(100); err != nil || len(shas) != 0 {
		t.Fatalf("unreferenced = %v (%v), want none while a version holds it", shas, err)
	}
	if n := chunkCount(t, d); n != 2 {
		t.Fatalf("chunks = %d, want 2", n)
	}

	// Paging: two per page, then the rest.
	p1, err := d.ListVersions("default", vdoc, "", 2)
	if err != nil || len(p1.Versions) != 2 || p1.Next == "" {
		t.Fatalf("page 1 = %+v (%v)", p1, err)
	}
	p2, err := d.ListVersions("default", vdoc, p1.Next, 2)
	if err != nil || len(p2.Versions) != 1 || p2.Versions[0].VersionKey != key1 || p2.Next != "" {
		t.Fatalf("page 2 = %+v (%v)", p2, err)
	}

	// Restore v1: content and path back, a new version of the replaced state.
	mustApply(t, d, OpSetVersion, "default", t0.Add(5*time.Second), VersionRef{DocumentID: vdoc, VersionKey: key1})
	doc, err := d.GetDocument("default", vdoc)
	if err != nil {
		t.Fatal(err)
	}
	rd, _, err := d.OpenContent("default", vdoc)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rd)
	rd.Close()
	if !bytes.Equal(got, v1) || doc.Path != "v.txt" || doc.VersionCount != 3 {
		t.Fatalf("after restore: content %q path %q versions %d", got, doc.Path, doc.VersionCount)
	}

	// Unknown and current keys.
	_, err = d.Apply(context.Background(), MustCommand(OpDeleteVersion, "default", "joe", t0, VersionRef{DocumentID: vdoc, VersionKey: "00000000000000000001"}))
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete unknown: %v, want not found", err)
	}
	_, err = d.Apply(context.Background(), MustCommand(OpDeleteVersion, "default", "joe", t0, VersionRef{DocumentID: vdoc, VersionKey: doc.VersionKey}))
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("delete current: %v, want a validation error", err)
	}

	// Delete every earlier version holding v2: its chunk is released.
	page, _ = d.ListVersions("default", vdoc, "", 10)
	for _, v := range page.Versions[1:] {
		if v.ContentSHA256 != doc.ContentSHA256 {
			mustApply(t, d, OpDeleteVersion, "default", t0, VersionRef{DocumentID: vdoc, VersionKey: v.VersionKey})
		}
	}
	if n := chunkCount(t, d); n != 1 {
		t.Fatalf("chunks = %d after deleting the versions of v2, want 1", n)
	}
	// The purge releases the rest.
	mustApply(t, d, OpDeleteDocument, "default", t0, DocumentRef{DocumentID: vdoc})
	if n := chunkCount(t, d); n != 0 {
		t.Fatalf("chunks = %d after purge, want 0", n)
	}
	if err := d.view(func(t *tx) error {
		if n := len(t.keys([]byte(pfxVersion))) + len(t.keys([]byte(pfxManifest))) + len(t.keys([]byte(pfxChunkRefs))); n != 0 {
			return errors.New("version, manifest or reference keys left")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func TestVersions_OldestDroppedAtLimit(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	addDoc(t, d, "default", vdoc, "v.txt", t0)
	// Contents 0 and 1 first, in order; the other 1,000 concurrently, in
	// groups (their order among themselves is not asserted).
	at := func(i int) time.Time { return t0.Add(time.Duration(i+1) * time.Millisecond) }
	commitBytes(t, d, vdoc, []byte{0, 0}, at(0))
	commitBytes(t, d, vdoc, []byte{1, 0}, at(1))
	applyConcurrently(t, d, MaxVersions, func(i int) *Command {
		i += 2
		m, chunks, _ := SmallContent([]byte{byte(i), byte(i >> 8)})
		return MustCommand(OpCommitContent, "default", "joe", at(i), CommitContent{DocumentID: vdoc, Content: m, Chunks: chunks, ContentType: "text/plain"})
	})
	doc, err := d.GetDocument("default", vdoc)
	if err != nil {
		t.Fatal(err)
	}
	if doc.VersionCount != MaxVersions {
		t.Fatalf("versionCount = %d, want %d", doc.VersionCount, MaxVersions)
	}
	var keys int
	d.view(func(t *tx) error { keys = len(t.keys(versionPrefix("default", vdoc))); return nil })
	if keys != MaxVersions {
		t.Fatalf("version records = %d, want %d", keys, MaxVersions)
	}
	// The oldest kept holds content 1 (the empty first state and content 0 went).
	page, err := d.ListVersions("default", vdoc, "", MaxVersions+1)
	if err != nil || len(page.Versions) != MaxVersions+1 {
		t.Fatalf("list = %d (%v)", len(page.Versions), err)
	}
	last := page.Versions[len(page.Versions)-1]
	if got := readVersion(t, d, vdoc, last.VersionKey); !bytes.Equal(got, []byte{1, 0}) {
		t.Fatalf("oldest kept = %v, want [1 0]", got)
	}
	if n := chunkCount(t, d); n != MaxVersions+1 {
		t.Fatalf("chunks = %d, want %d", n, MaxVersions+1)
	}
}

func TestVersions_SameInstantKeysIncrease(t *testing.T) {
	t.Parallel() // own store, no package or process state
	k := versionKeyOf(t0, 0)
	n := nextVersionKey(k, t0)
	if n <= k || !ValidVersionKey(n) || nextVersionKey(n, t0.Add(-time.Hour)) <= n {
		t.Fatalf("keys %s, %s do not increase", k, n)
	}
}

// TestVersions_PruneInTrash: OpPruneVersions drops the oldest versions of a
// soft-deleted document and releases their chunks; the purge then finds
// nothing left to release twice.
func TestVersions_PruneInTrash(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	addDoc(t, d, "default", vdoc, "p.txt", t0)
	for i := range 6 { // the first content makes no version (firstContent): five
		commitBytes(t, d, vdoc, []byte{'p', byte(i)}, t0.Add(time.Duration(i+1)*time.Second))
	}
	mustApply(t, d, OpSoftDelete, "default", t0.Add(time.Minute), DocumentRef{DocumentID: vdoc})
	if _, err := d.Apply(context.Background(), MustCommand(OpPruneVersions, "default", "joe", t0, PruneVersions{DocumentID: vdoc, Max: 0})); err == nil {
		t.Fatal("max 0 accepted")
	}
	res := mustApply(t, d, OpPruneVersions, "default", t0, PruneVersions{DocumentID: vdoc, Max: 3})
	if n, _ := res.Value.(int); n != 3 {
		t.Fatalf("pruned %v, want 3", res.Value)
	}
	doc, err := d.GetDocumentAny("default", vdoc)
	if err != nil || doc.VersionCount != 2 {
		t.Fatalf("after prune: %+v %v", doc, err)
	}
	// Left: the current content and two versions (contents 3 and 4).
	if n := chunkCount(t, d); n != 3 {
		t.Fatalf("chunks = %d, want 3", n)
	}
	mustApply(t, d, OpDeleteDocument, "default", t0, DocumentRef{DocumentID: vdoc})
	if n := chunkCount(t, d); n != 0 {
		t.Fatalf("chunks = %d after purge, want 0", n)
	}
}

// benchVersions makes a document with MaxVersions earlier versions of
// distinct 4 KiB contents.
func benchVersions(b *testing.B) (*DB, string, string) {
	d, err := Open(Config{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	ctx := context.Background()
	if _, err := d.Apply(ctx, MustCommand(OpAddDocuments, "default", "joe", t0, AddDocuments{Docs: []NewDocument{{Document: Document{DocumentID: vdoc, Path: "b.bin"}}}})); err != nil {
		b.Fatal(err)
	}
	raw := make([]byte, 4096)
	for i := 0; i <= MaxVersions; i++ {
		raw[0], raw[1] = byte(i), byte(i>>8)
		m, chunks, _ := SmallContent(raw)
		if _, err := d.Apply(ctx, MustCommand(OpCommitContent, "default", "joe", t0.Add(time.Duration(i+1)*time.Millisecond), CommitContent{DocumentID: vdoc, Content: m, Chunks: chunks})); err != nil {
			b.Fatal(err)
		}
	}
	page, err := d.ListVersions("default", vdoc, "", MaxVersions+1)
	if err != nil || len(page.Versions) != MaxVersions+1 {
		b.Fatalf("versions = %d (%v)", len(page.Versions), err)
	}
	return d, page.Versions[0].VersionKey, page.Versions[MaxVersions].VersionKey
}

func readAllVersion(b *testing.B, d *DB, key string) {
	v, err := d.GetVersion("default", vdoc, key)
	if err != nil {
		b.Fatal(err)
	}
	rd, err := d.OpenManifest(v.ContentSHA256)
	if err != nil {
		b.Fatal(err)
	}
	if n, err := io.Copy(io.Discard, rd); err != nil || n != 4096 {
		b.Fatalf("read %d (%v)", n, err)
	}
}

// BenchmarkVersions: listing 1,000 versions (pages of 1,000 and of 10),
// reading the oldest version's content and the current one's.
func BenchmarkVersions(b *testing.B) {
	d, cur, oldest := benchVersions(b)
	b.Run("list1000", func(b *testing.B) {
		for b.Loop() {
			if p, err := d.ListVersions("default", vdoc, "", MaxVersions+1); err != nil || len(p.Versions) != MaxVersions+1 {
				b.Fatal(err)
			}
		}
	})
	b.Run("list10", func(b *testing.B) {
		for b.Loop() {
			if p, err := d.ListVersions("default", vdoc, "", 10); err != nil || len(p.Versions) != 10 {
				b.Fatal(err)
			}
		}
	})
	b.Run("readOldest", func(b *testing.B) {
		for b.Loop() {
			readAllVersion(b, d, oldest)
		}
	})
	b.Run("readCurrent", func(b *testing.B) {
		for b.Loop() {
			readAllVersion(b, d, cur)
		}
	})
}
