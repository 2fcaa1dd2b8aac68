package storage

import (
	"fmt"
	"path/filepath"
	"testing"

	"quire/mapadvice"
)

// The store advises random access on its tables exactly when the data
// disk reads ahead more than mapadvice.RandomAboveKiB around a fault
// (storage/DESIGN.md, "Read-around"). Which branch runs depends on the
// machine's disk; each asserts its own outcome.
func TestOpen_AdvisesTablesOnLargeReadahead(t *testing.T) {
	dir := t.TempDir()
	d, err := Open(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		mustApply(t, d, OpAddDocuments, "default", t0, AddDocuments{Docs: []NewDocument{{Document: Document{DocumentID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), Path: fmt.Sprintf("00000000-0000-4000-8000-%012d", i)}}}})
	}
	if err := d.Close(); err != nil { // the memtable becomes a table
		t.Fatal(err)
	}
	d, err = Open(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	if len(tables) == 0 {
		t.Fatal("no table after a reopen")
	}
	ra, _, ok := mapadvice.Readahead(dir)
	want := ok && ra > mapadvice.RandomAboveKiB
	checked := 0
	for _, p := range tables {
		random, mapped, err := mapadvice.Advised(p)
		if err != nil {
			t.Fatal(err)
		}
		if !mapped {
			continue
		}
		checked++
		if random != want {
			t.Errorf("%s advised random: %v, want %v (disk readahead %d KiB, known %v)", filepath.Base(p), random, want, ra, ok)
		}
	}
	if checked == 0 {
		t.Fatalf("none of %d tables is mapped", len(tables))
	}
	t.Logf("disk readahead %d KiB (known %v): %d tables advised random %v", ra, ok, checked, want)
}
