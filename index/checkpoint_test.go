package index

import (
	"context"
	"testing"
	"time"

	"quire/storage"
)

// TestIndexer_FailedBatchHoldsTheCheckpoint: a batch that could not be
// indexed must not be covered by a checkpoint, or the next start would
// never index its documents (nor drop them, when they were deletions).
func TestIndexer_FailedBatchHoldsTheCheckpoint(t *testing.T) {
	db, err := storage.Open(storage.Config{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	x, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer x.text.Close() // names is closed by the test
	ix := NewIndexer(db, x, nil)
	if err := ix.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	add := func(id, path string) {
		t.Helper()
		c, err := storage.NewCommand(storage.OpAddDocuments, "default", "u", time.Now(), storage.AddDocuments{Docs: []storage.NewDocument{
			{Document: storage.Document{DocumentID: id, Path: path}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Apply(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	drained := func() {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for ix.Queued() > 0 {
			if time.Now().After(deadline) {
				t.Fatal("queue not drained in time")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	add("11111111-1111-4111-8111-111111111111", "a.txt")
	drained()
	if err := ix.checkpoint(); err != nil {
		t.Fatal(err)
	}
	before := x.GetInternal(keyStorageVersion)
	if before == 0 {
		t.Fatal("no checkpoint recorded")
	}
	// The names index fails from here on: the next batch cannot go in.
	if err := x.names.Close(); err != nil {
		t.Fatal(err)
	}
	add("22222222-2222-4222-8222-222222222222", "b.txt")
	drained()
	if err := ix.checkpoint(); err != nil {
		t.Fatal(err)
	}
	if got := x.GetInternal(keyStorageVersion); got != before {
		t.Fatalf("checkpoint moved from %d to %d past a batch that failed", before, got)
	}
	close(ix.stop)
	ix.wg.Wait()
}
