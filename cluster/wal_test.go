package cluster

import (
	"fmt"
	"testing"

	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
)

// TestWAL_TailTruncationThenReopen is what Raft does to a node that led
// with entries nobody received and rejoined under a new leader
// ("clearing log suffix": DeleteRange of the log's tail), then a
// restart. raft-wal v0.4.0 marked the tail segment sealed without
// writing its index block, and the reopened log could not read it
// ("sealed segment has no index block"; Raft panicked at every start);
// v0.4.1 force-seals it (issue 28).
func TestWAL_TailTruncationThenReopen(t *testing.T) {
	dir := t.TempDir()
	open := func() (*wal.WAL, *metadb.BoltMetaDB) {
		t.Helper()
		meta := &metadb.BoltMetaDB{}
		w, err := wal.Open(dir, wal.WithMetaStore(meta))
		if err != nil {
			t.Fatalf("open the log: %v", err)
		}
		return w, meta
	}
	entry := func(i, term uint64) *raft.Log {
		return &raft.Log{Index: i, Term: term, Type: raft.LogCommand, Data: []byte(fmt.Sprintf("e%d-t%d", i, term))}
	}
	w, meta := open()
	for i := uint64(1); i <= 20; i++ {
		if err := w.StoreLog(entry(i, 1)); err != nil {
			t.Fatal(err)
		}
	}
	// The suffix 15..20 conflicts with a new leader's log: cleared, then
	// the new leader's entries of term 2 appended.
	if err := w.DeleteRange(15, 20); err != nil {
		t.Fatalf("truncate the tail: %v", err)
	}
	for i := uint64(15); i <= 17; i++ {
		if err := w.StoreLog(entry(i, 2)); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	meta.Close()

	w, meta = open()
	defer func() { w.Close(); meta.Close() }()
	last, err := w.LastIndex()
	if err != nil || last != 17 {
		t.Fatalf("last index after the reopen: %d, %v; want 17", last, err)
	}
	for i := uint64(1); i <= 17; i++ {
		var l raft.Log
		if err := w.GetLog(i, &l); err != nil {
			t.Fatalf("entry %d after the reopen: %v", i, err)
		}
		want := uint64(1)
		if i >= 15 {
			want = 2
		}
		if l.Term != want || string(l.Data) != string(entry(i, want).Data) {
			t.Fatalf("entry %d after the reopen: term %d %q, want term %d", i, l.Term, l.Data, want)
		}
	}
}
