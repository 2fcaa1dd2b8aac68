package segments

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
)

// TestWaitPersisted_EndsWhenThePersisterFails: a persister that cannot
// write (its directory is gone, as writes fail on a full disk) ends the
// wait for the latest snapshot as soon as it fails, not at the timeout:
// it fails at every attempt, and a clean stop on a full disk waited 10 s
// for each index. Without the failure the wait ends with the snapshot on
// disk.
func TestWaitPersisted_EndsWhenThePersisterFails(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "text")
	// As the index package opens its indexes: a batch returns once it is
	// searchable, before its segment is persisted.
	b, err := bleve.NewUsing(dir, bleve.NewIndexMapping(), scorch.Name, scorch.Name, map[string]any{"unsafe_batch": true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	put := func(id string) {
		t.Helper()
		if err := b.Index(id, map[string]any{"content": "words " + id}); err != nil {
			t.Fatal(err)
		}
	}
	put("written")
	if got := WaitPersisted(b, time.Minute); got != Persisted {
		t.Fatalf("the wait on a writable index ended with %d, want %d (persisted)", got, Persisted)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	put("unwritable")
	if got := WaitPersisted(b, time.Minute); got != PersistFailed {
		t.Fatalf("the wait on a persister that cannot write ended with %d, want %d (failed)", got, PersistFailed)
	}
}
