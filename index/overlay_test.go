package index

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"quire/storage"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// diskStore opens a store in dir (a real Badger on disk).
func diskStore(t *testing.T, dir string) *storage.DB {
	t.Helper()
	db, err := storage.Open(storage.Config{Dir: dir, MinFreeBytes: -1, MinFreePercent: -1, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// MustApply applies a command of op on site default, failing the test on
// an error (the external tests use it too).
func MustApply(t *testing.T, db *storage.DB, op storage.Op, payload any) {
	t.Helper()
	c, err := storage.NewCommand(op, "default", "u", time.Now(), payload)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Apply(context.Background(), c); err != nil {
		t.Fatalf("%s: %v", op, err)
	}
}

func addDoc(t *testing.T, db *storage.DB, id, path string) {
	t.Helper()
	MustApply(t, db, storage.OpAddDocuments, storage.AddDocuments{Docs: []storage.NewDocument{
		{Document: storage.Document{DocumentID: id, Path: path}}}})
}

func movePath(t *testing.T, db *storage.DB, id, path string) {
	t.Helper()
	MustApply(t, db, storage.OpUpdateDocument, storage.UpdateDocument{DocumentID: id, Path: &path})
}

// uid makes a document id from a small number.
func uid(n int) string { return fmt.Sprintf("%08d-1111-4111-8111-111111111111", n) }

// ids lists the ids of hits.
func ids(hits []Hit) []string {
	out := []string{}
	for _, h := range hits {
		out = append(out, h.ID)
	}
	return out
}

// behind returns an indexer that indexed docs (id: path) and then
// stopped applying: later writes reach only its overlay, as when Bleve is
// behind.
func behind(t *testing.T, docs map[int]string) (*storage.DB, *Index, *Indexer) {
	t.Helper()
	db := diskStore(t, t.TempDir())
	x, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	ix := NewIndexer(db, x, quiet())
	if err := ix.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	for n, p := range docs {
		addDoc(t, db, uid(n), p)
	}
	deadline := time.Now().Add(10 * time.Second)
	for ix.Queued() > 0 || len(ix.overlaySite("default")) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("not indexed after 10s: %d queued, overlay %v", ix.Queued(), ix.overlaySite("default"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(ix.stop)
	ix.wg.Wait()
	return db, x, ix
}

// TestOverlay_ReadYourWrites: a prefix search finds a document by its
// new name or folder as soon as the write returns, and no longer by its
// old one, while the index itself still has the old state.
func TestOverlay_ReadYourWrites(t *testing.T) {
	cases := []struct {
		name          string
		change        func(t *testing.T, db *storage.DB)
		field, prefix string
		want          []string // ids found through the overlay
		indexHas      []string // ids the index alone answers (stale)
	}{
		{"a new document by name", func(t *testing.T, db *storage.DB) { addDoc(t, db, uid(9), "reports/quarterly-new.txt") },
			"filename", "quarterly", []string{uid(9), uid(1)}, []string{uid(1)}}, // quarterly-new < quarterly.
		{"a new document by folder", func(t *testing.T, db *storage.DB) { addDoc(t, db, uid(9), "reports/quarterly-new.txt") },
			"folder", "reports", []string{uid(9), uid(1)}, []string{uid(1)}},
		{"renamed: not found by its old name", func(t *testing.T, db *storage.DB) { movePath(t, db, uid(1), "reports/annual.txt") },
			"filename", "quarterly", []string{}, []string{uid(1)}},
		{"renamed: found by its new name", func(t *testing.T, db *storage.DB) { movePath(t, db, uid(1), "reports/annual.txt") },
			"filename", "annual", []string{uid(1)}, []string{}},
		{"moved: found in its new folder", func(t *testing.T, db *storage.DB) { movePath(t, db, uid(1), "archive/quarterly.txt") },
			"folder", "archive", []string{uid(1)}, []string{}},
		{"moved: not in its old folder", func(t *testing.T, db *storage.DB) { movePath(t, db, uid(1), "archive/quarterly.txt") },
			"folder", "reports", []string{}, []string{uid(1)}},
		{"purged", func(t *testing.T, db *storage.DB) {
			MustApply(t, db, storage.OpDeleteDocument, storage.DocumentRef{DocumentID: uid(1)})
		}, "filename", "quarterly", []string{}, []string{uid(1)}},
		{"soft-deleted", func(t *testing.T, db *storage.DB) {
			MustApply(t, db, storage.OpSoftDelete, storage.DocumentRef{DocumentID: uid(1)})
		}, "filename", "quarterly", []string{}, []string{uid(1)}},
		{"another site's write is not this site's", func(t *testing.T, db *storage.DB) {
			c, err := storage.NewCommand(storage.OpAddDocuments, "other", "u", time.Now(), storage.AddDocuments{Docs: []storage.NewDocument{
				{Document: storage.Document{DocumentID: uid(9), Path: "reports/quarterly-other.txt"}}}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Apply(context.Background(), c); err != nil {
				t.Fatal(err)
			}
		}, "filename", "quarterly", []string{uid(1)}, []string{uid(1)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db, x, ix := behind(t, map[int]string{1: "reports/quarterly.txt", 2: "other/minutes.txt"})
			c.change(t, db)
			hits, _, more, err := ix.Prefix("default", c.field, c.prefix, nil, 10)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(hits); !slices.Equal(got, c.want) || more {
				t.Fatalf("Indexer.Prefix(%s %q) = %v more %v, want %v", c.field, c.prefix, got, more, c.want)
			}
			// The index itself is behind: what was found came from the overlay.
			raw, err := x.Prefix("default", c.field, c.prefix, nil, 10)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(raw); !slices.Equal(got, c.indexHas) {
				t.Fatalf("Index.Prefix(%s %q) = %v, want the stale %v", c.field, c.prefix, got, c.indexHas)
			}
		})
	}
}

// TestOverlay_Paging: pages merged from the index and the overlay are in
// name order, each document once, none lost between pages.
func TestOverlay_Paging(t *testing.T) {
	scenarios := []struct {
		name    string
		indexed map[int]string
		change  func(t *testing.T, db *storage.DB)
		want    []int
	}{
		{"new, moved on and moved out of the first page", map[int]string{1: "q1.txt", 3: "q3.txt", 5: "q5.txt", 7: "q7.txt"},
			func(t *testing.T, db *storage.DB) {
				addDoc(t, db, uid(2), "q2.txt")
				addDoc(t, db, uid(4), "q4.txt")
				movePath(t, db, uid(5), "q8.txt") // moves past q7
				movePath(t, db, uid(3), "q9.txt") // leaves the index's first page for the last
				addDoc(t, db, uid(6), "q6.txt")
			}, []int{1, 2, 4, 6, 7, 5, 3}},
		{"one moved past the index's page", map[int]string{1: "q1.txt", 3: "q3.txt", 5: "q5.txt"},
			func(t *testing.T, db *storage.DB) { movePath(t, db, uid(3), "q9.txt") }, []int{1, 5, 3}},
	}
	for _, sc := range scenarios {
		for _, limit := range []int{1, 2, 3, 10} {
			t.Run(fmt.Sprint(sc.name, " limit ", limit), func(t *testing.T) {
				db, _, ix := behind(t, sc.indexed)
				sc.change(t, db)
				var want []string
				for _, n := range sc.want {
					want = append(want, uid(n))
				}
				var got []string
				var after []string
				for page := 0; ; page++ {
					if page > len(want) {
						t.Fatalf("more pages than documents: %v", got)
					}
					hits, next, more, err := ix.Prefix("default", "filename", "q", after, limit)
					if err != nil {
						t.Fatal(err)
					}
					if len(hits) > limit {
						t.Fatalf("page of %d hits, limit %d", len(hits), limit)
					}
					got = append(got, ids(hits)...)
					if !more {
						break
					}
					after = next
				}
				if !slices.Equal(got, want) {
					t.Fatalf("pages of %d gave %v, want %v", limit, got, want)
				}
			})
		}
	}
}

// TestClose_KeepsLastCheckpoint: the version recorded right before Close
// is there when the index is opened again (Bleve's Close alone dropped
// what its persister had not written yet).
func TestClose_KeepsLastCheckpoint(t *testing.T) {
	dir := t.TempDir()
	for i := uint64(1); i <= 10; i++ {
		x, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := x.GetInternal(keyStorageVersion); got != i-1 {
			x.Close()
			t.Fatalf("open %d: recorded version %d, want %d as recorded before the last Close", i, got, i-1)
		}
		// A batch of documents, then the version that covers it.
		if err := x.Put([]Doc{{Site: "default", ID: uid(int(i)), Path: fmt.Sprintf("q%d.txt", i), Content: "quarterly", Inserted: time.Now()}}, nil); err != nil {
			t.Fatal(err)
		}
		if err := x.SetInternal(keyStorageVersion, i); err != nil {
			t.Fatal(err)
		}
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOverlay_LeavesOnlyWhenIndexed: a document leaves the overlay once
// its batch is in, unless it changed again meanwhile.
func TestOverlay_LeavesOnlyWhenIndexed(t *testing.T) {
	db, x, ix := behind(t, nil)
	a, b := storage.DocRef{Site: "default", ID: uid(1)}, storage.DocRef{Site: "default", ID: uid(2)}
	addDoc(t, db, a.ID, "a.txt")
	addDoc(t, db, b.ID, "b.txt")
	seqs := ix.overlaySeqs([]storage.DocRef{a, b}) // a worker takes both
	movePath(t, db, a.ID, "a2.txt")                // a changes while its batch runs
	ix.overlayDone(seqs)
	if got := ix.overlaySite("default"); !slices.Equal(got, []storage.DocRef{a}) {
		t.Fatalf("overlay after the batch: %v, want only the document changed again", got)
	}
	// The next batch takes it: the overlay empties and the index has
	// the latest state.
	seqs = ix.overlaySeqs([]storage.DocRef{a})
	if err := ix.index([]storage.DocRef{a}); err != nil {
		t.Fatal(err)
	}
	ix.overlayDone(seqs)
	if got := ix.overlaySite("default"); len(got) != 0 {
		t.Fatalf("overlay after the second batch: %v, want empty", got)
	}
	raw, err := x.Prefix("default", "filename", "a", nil, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) != 1 || raw[0].ID != a.ID || raw[0].Sort[0] != nameTerm(fNameKey, "default", "a2.txt", a.ID) {
		t.Fatalf("index has %v, want %s as a2.txt", raw, a.ID)
	}
}

// TestCatchUp_AfterRestart: what storage changed beyond the version the
// index recorded (while no indexer applied it) is replayed by Start, and
// only that; the recorded version then is storage's.
func TestCatchUp_AfterRestart(t *testing.T) {
	ctx := context.Background()
	db := diskStore(t, t.TempDir())
	dir := t.TempDir()
	x, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ix := NewIndexer(db, x, quiet())
	if err := ix.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for n, p := range map[int]string{1: "reports/quarterly.txt", 2: "reports/minutes.txt", 3: "reports/budget.txt"} {
		addDoc(t, db, uid(n), p)
	}
	if err := ix.Close(); err != nil { // the checkpoint
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	// While the server is down (or its index lost the last batches):
	addDoc(t, db, uid(4), "inbox/scan-0001.pdf")
	movePath(t, db, uid(1), "archive/quarterly-2026.txt")
	MustApply(t, db, storage.OpDeleteDocument, storage.DocumentRef{DocumentID: uid(3)})

	x, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	recorded := x.GetInternal(keyStorageVersion)
	if recorded == 0 || recorded >= db.MaxVersion() {
		t.Fatalf("recorded version %d, storage at %d: want a checkpoint behind storage", recorded, db.MaxVersion())
	}
	if got, err := x.Prefix("default", "folder", "inbox", nil, 10); err != nil || len(got) != 0 {
		t.Fatalf("the reopened index has %v %v in inbox before catching up", ids(got), err)
	}
	ix = NewIndexer(db, x, quiet())
	if err := ix.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	// Start returns caught up: the index alone answers, no overlay.
	for _, c := range []struct {
		field, prefix string
		want          []string
	}{
		{"folder", "inbox", []string{uid(4)}},
		{"folder", "archive", []string{uid(1)}},
		{"filename", "quarterly", []string{uid(1)}},
		{"folder", "reports", []string{uid(2)}}, // moved and purged ones left it
		{"filename", "budget", []string{}},
	} {
		got, err := x.Prefix("default", c.field, c.prefix, nil, 10)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids(got), c.want) {
			t.Errorf("after catch-up, %s %q: %v, want %v", c.field, c.prefix, ids(got), c.want)
		}
	}
	if got := x.GetInternal(keyStorageVersion); got != db.MaxVersion() {
		t.Fatalf("recorded version %d after catch-up, storage at %d", got, db.MaxVersion())
	}
	// Only what changed beyond the recorded version is replayed: the new
	// and the moved document, not the unchanged one.
	done := 0
	if err := ix.CatchUp(ctx, recorded, func(n int) { done = n }); err != nil {
		t.Fatal(err)
	}
	if done != 2 {
		t.Fatalf("catch-up from version %d replayed %d documents, want 2", recorded, done)
	}
}

func setTag(t *testing.T, db *storage.DB, id, key, value string) {
	t.Helper()
	MustApply(t, db, storage.OpSetTags, storage.SetTags{DocumentID: id, Mode: storage.TagsAdd,
		Tags: []storage.Tag{{Key: key, Value: value}}})
}

// indexNow runs one worker batch of refs by hand (the worker of behind
// is stopped).
func indexNow(t *testing.T, ix *Indexer, refs ...storage.DocRef) {
	t.Helper()
	seqs := ix.overlaySeqs(refs)
	if err := ix.index(refs); err != nil {
		t.Fatal(err)
	}
	ix.overlayDone(seqs)
}

// checkStale fails when the overlay's set of stale entries (what queries
// walk) is not exactly its entries marked indexed.
func checkStale(t *testing.T, ix *Indexer) {
	t.Helper()
	ix.ovMu.Lock()
	defer ix.ovMu.Unlock()
	n := 0
	for r, e := range ix.ov {
		if _, ok := ix.ovStale[r]; ok != e.indexed {
			t.Fatalf("%v: indexed %v, in the stale set %v", r, e.indexed, ok)
		}
		if e.indexed {
			n++
		}
	}
	if n != len(ix.ovStale) {
		t.Fatalf("stale set of %d, %d entries marked indexed", len(ix.ovStale), n)
	}
}

// TestOverlay_NewAndStale: a document never indexed is new in the
// overlay (queries leave it to the index, which finds it once indexed);
// one the index holds is stale until indexed again, and a stale entry
// that no longer matches storage (deleted, soft-deleted, moved to a
// hidden folder, retagged) is not returned. Totals count each match once.
func TestOverlay_NewAndStale(t *testing.T) {
	ref := func(n int) storage.DocRef { return storage.DocRef{Site: "default", ID: uid(n)} }
	docs := map[int]string{1: "a/quarterly-1.txt", 2: "a/quarterly-2.txt", 3: "a/quarterly-3.txt",
		4: "a/quarterly-4.txt", 5: "a/quarterly-5.txt", 6: "a/quarterly-6.txt"}
	db, _, ix := behind(t, docs)
	setTag(t, db, uid(5), "status", "draft")
	indexNow(t, ix, ref(5))
	// What the server's keep checks: the document exists, is not in the
	// trash, is outside the folder the caller may not read and matches
	// the tag filter when there is one.
	keeper := func(tag string) func(id string) (bool, error) {
		return func(id string) (bool, error) {
			d, err := db.GetDocument("default", id)
			if errors.Is(err, storage.ErrNotFound) {
				return false, nil
			}
			if err != nil || strings.HasPrefix(d.Path, "private/") {
				return false, err
			}
			if tag == "" {
				return true, nil
			}
			tg, err := db.GetTag("default", id, "status")
			if errors.Is(err, storage.ErrNotFound) {
				return false, nil
			}
			return err == nil && tg.Value == tag, err
		}
	}
	search := func(t *testing.T, tag string) ([]string, uint64) {
		t.Helper()
		// The caller may not read folder private (FolderHide).
		o := TextOptions{Size: 100, Hide: termQuery(fFolders, "/private")}
		if tag != "" {
			o.Filter = TagFilter("status", []string{tag})
		}
		hits, total, err := ix.SearchText("default", "quarterly", o, keeper(tag))
		if err != nil {
			t.Fatal(err)
		}
		got := ids(hits)
		slices.Sort(got)
		return got, total
	}
	want := func(ns ...int) []string {
		out := []string{}
		for _, n := range ns {
			out = append(out, uid(n))
		}
		slices.Sort(out)
		return out
	}

	addDoc(t, db, uid(7), "a/quarterly-7.txt")                                          // new
	addDoc(t, db, uid(8), "a/quarterly-8.txt")                                          // new, then deleted
	MustApply(t, db, storage.OpDeleteDocument, storage.DocumentRef{DocumentID: uid(8)}) // before its indexing
	MustApply(t, db, storage.OpDeleteDocument, storage.DocumentRef{DocumentID: uid(1)})
	MustApply(t, db, storage.OpSoftDelete, storage.DocumentRef{DocumentID: uid(2)})
	movePath(t, db, uid(3), "private/quarterly-3.txt")
	setTag(t, db, uid(5), "status", "final")
	setTag(t, db, uid(6), "status", "draft") // newly matches the filter, once indexed

	stale, all := ix.overlayOf("default", true), ix.overlayOf("default", false)
	slices.SortFunc(stale, func(a, b storage.DocRef) int { return strings.Compare(a.ID, b.ID) })
	if wantStale := []storage.DocRef{ref(1), ref(2), ref(3), ref(5), ref(6)}; !slices.Equal(stale, wantStale) {
		t.Fatalf("stale overlay entries %v, want %v", stale, wantStale)
	}
	if len(all) != 7 {
		t.Fatalf("overlay %v, want 7 entries (5 stale, 2 new)", all)
	}

	checkStale(t, ix)
	// Behind: the new documents are not found yet, the stale ones that
	// no longer match are not returned, the unchanged ones are.
	if got, total := search(t, ""); !slices.Equal(got, want(4, 5, 6)) || total != 3 {
		t.Fatalf("while behind: %v total %d, want %v total 3", got, total, want(4, 5, 6))
	}
	if got, total := search(t, "draft"); len(got) != 0 || total != 0 {
		t.Fatalf("tag draft while behind: %v total %d, want none (5 retagged, 6 not indexed with it)", got, total)
	}

	// A new document's batch is in: found, counted once, and gone from
	// the overlay.
	indexNow(t, ix, ref(7), ref(8))
	if got, total := search(t, ""); !slices.Equal(got, want(4, 5, 6, 7)) || total != 4 {
		t.Fatalf("after indexing the new ones: %v total %d, want %v total 4", got, total, want(4, 5, 6, 7))
	}
	if got := ix.overlayOf("default", false); len(got) != 5 {
		t.Fatalf("overlay %v after the new ones' batch, want the 5 stale", got)
	}

	checkStale(t, ix)
	// A new document changed while its batch runs: its index entry is
	// older than storage, so it is stale from then on.
	addDoc(t, db, uid(9), "a/quarterly-9.txt")
	seqs := ix.overlaySeqs([]storage.DocRef{ref(9)})
	if err := ix.index([]storage.DocRef{ref(9)}); err != nil {
		t.Fatal(err)
	}
	movePath(t, db, uid(9), "private/quarterly-9.txt")
	if got, _ := search(t, ""); slices.Contains(got, uid(9)) {
		t.Fatalf("moved while its batch ran: %v holds it", got)
	}
	ix.overlayDone(seqs)
	checkStale(t, ix)
	if got, _ := search(t, ""); slices.Contains(got, uid(9)) {
		t.Fatalf("after its (older) batch: %v holds it", got)
	}

	checkStale(t, ix)
	// Everything indexed: the overlay is empty and the index answers.
	indexNow(t, ix, ref(1), ref(2), ref(3), ref(5), ref(6), ref(9))
	if got := ix.overlayOf("default", false); len(got) != 0 {
		t.Fatalf("overlay %v once all is indexed", got)
	}
	checkStale(t, ix)
	if got, total := search(t, ""); !slices.Equal(got, want(4, 5, 6, 7)) || total != 4 {
		t.Fatalf("caught up: %v total %d, want %v total 4", got, total, want(4, 5, 6, 7))
	}
	if got, total := search(t, "draft"); !slices.Equal(got, want(6)) || total != 1 {
		t.Fatalf("tag draft caught up: %v total %d, want %v", got, total, want(6))
	}
}
