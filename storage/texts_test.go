package storage

import (
	"testing"
)

// TestReindexDocument_RestoresLostEntries: a tag and an attribute index
// entry removed behind the applier's back come back with
// OpReindexDocument, and nothing else is written.
func TestReindexDocument_RestoresLostEntries(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	mustApply(t, d, OpAddAttribute, "s", t0, AddAttribute{Def: AttributeDef{Key: "invoice", DataType: "STRING", Type: "STANDARD"}})
	v := "INV-1"
	mustApply(t, d, OpAddDocuments, "s", t0, AddDocuments{Docs: []NewDocument{{
		Document:   Document{DocumentID: "d1", Path: "a.txt"},
		Tags:       []Tag{{Key: "dept", Value: "hr"}},
		Attributes: []AttributeInput{{Key: "invoice", StringValue: &v}},
	}}})
	lost := [][]byte{tagIndexKey("s", "dept", "hr", "d1"), attrIndexKey("s", "invoice", "INV-1", "d1")}
	exists := func(k []byte) bool {
		var ok bool
		if err := d.view(func(t *tx) error { var err error; ok, err = t.exists(k); return err }); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	txn := d.bdb.NewTransaction(true)
	for _, k := range lost {
		if !exists(k) {
			t.Fatalf("entry %q missing before the test removes it", k)
		}
		if err := txn.Delete(k); err != nil {
			t.Fatal(err)
		}
	}
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	res := mustApply(t, d, OpReindexDocument, "s", t0, ReindexDocument{DocumentID: "d1"})
	for _, k := range lost {
		if !exists(k) {
			t.Errorf("entry %q not restored", k)
		}
	}
	if n, _ := res.Value.(int); n != 2 {
		t.Errorf("entries written = %v, want 2", res.Value)
	}
	if _, err := d.Apply(t.Context(), MustCommand(OpReindexDocument, "s", "joe", t0, ReindexDocument{DocumentID: "nope"})); err == nil {
		t.Error("a missing document was reindexed")
	}
}
