package index_test

import (
	"context"
	"testing"
	"time"

	"quire/index"
	"quire/storage"
)

// found reports whether a fulltext and a filename search find doc.
func found(t *testing.T, x *index.Index, doc string) (text, name bool) {
	t.Helper()
	hits, _, err := x.Text("default", "quarterly", index.TextOptions{Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		text = text || h.ID == doc
	}
	names, err := x.Prefix("default", "filename", "quarterly", nil, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range names {
		name = name || h.ID == doc
	}
	return text, name
}

// TestIndexer_DeletionsWhileBehindAreDropped: a document indexed, then
// purged (and another soft-deleted) while the indexer was not applying
// (crashed, or stopped after its last checkpoint) is gone from the index
// once it starts again. The catch-up walk of records written since the
// checkpoint cannot see a purge: no record is left.
func TestIndexer_DeletionsWhileBehindAreDropped(t *testing.T) {
	for _, tt := range []struct {
		name string
		op   storage.Op
	}{
		{"purged", storage.OpDeleteDocument},
		{"soft-deleted", storage.OpSoftDelete},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db, err := storage.Open(storage.Config{InMemory: true})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			dir := t.TempDir()
			x, err := index.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			ix := index.NewIndexer(db, x, nil)
			if err := ix.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			const gone, kept = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
			index.MustApply(t, db, storage.OpAddDocuments, storage.AddDocuments{Docs: []storage.NewDocument{
				{Document: storage.Document{DocumentID: gone, Path: "quarterly-report.txt"}},
			}})
			index.MustApply(t, db, storage.OpAddDocuments, storage.AddDocuments{Docs: []storage.NewDocument{
				{Document: storage.Document{DocumentID: kept, Path: "quarterly-plan.txt"}},
			}})
			deadline := time.Now().Add(10 * time.Second)
			for {
				text, name := found(t, x, gone)
				if text && name {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("not indexed in time: text %v, filename %v", text, name)
				}
				time.Sleep(20 * time.Millisecond)
			}
			// The checkpoint is written; from here the indexer applies nothing.
			if err := ix.Close(); err != nil {
				t.Fatal(err)
			}
			index.MustApply(t, db, tt.op, storage.DocumentRef{DocumentID: gone})

			ix2 := index.NewIndexer(db, x, nil)
			if err := ix2.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			defer ix2.Close()
			if text, name := found(t, x, gone); text || name {
				t.Fatalf("deleted document still in the index after restart: fulltext %v, filename %v", text, name)
			}
			if text, name := found(t, x, kept); !text || !name {
				t.Fatalf("the other document left the index: fulltext %v, filename %v", text, name)
			}
		})
	}
}
