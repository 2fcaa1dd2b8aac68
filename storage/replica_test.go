package storage

import (
	"time"

	"bytes"
	"errors"
	"fmt"
	"reflect"
	"syscall"
	"testing"
)

func addDocCmd(id, path string) *Command {
	return MustCommand(OpAddDocuments, "default", "joe", t0, AddDocuments{Docs: []NewDocument{{Document: Document{DocumentID: id, Path: path}}}})
}

// replicate sends c through the wire form, as the Raft log does.
func replicate(t *testing.T, c *Command) *Command {
	t.Helper()
	b, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	out, err := DecodeCommand(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mustApplied(t *testing.T, d *DB) uint64 {
	t.Helper()
	idx, err := d.AppliedIndex()
	if err != nil {
		t.Fatalf("applied index: %v", err)
	}
	return idx
}

func TestApplyAt_IndexTravelsWithTheCommand(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	if got := mustApplied(t, d); got != 0 {
		t.Fatalf("fresh store applied index = %d, want 0", got)
	}
	res, err := d.ApplyAt(replicate(t, addDocCmd("a1", "a.txt")), 5)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := res.Value.(*AddDocumentsResult); !ok || r.Paths["a1"] != "a.txt" {
		t.Fatalf("result = %#v, want the applier's result", res.Value)
	}
	if got := mustApplied(t, d); got != 5 {
		t.Fatalf("applied index = %d, want 5", got)
	}
	// A deterministic failure writes nothing but the index.
	before, _, _ := d.StateHash()
	_, err = d.ApplyAt(replicate(t, addDocCmd("a1", "b.txt")), 6)
	var ce *ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a conflict", err)
	}
	if got := mustApplied(t, d); got != 6 {
		t.Fatalf("applied index after a failed command = %d, want 6", got)
	}
	if _, err := d.DocumentIDByPath("default", "b.txt"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("failed command left its path: %v", err)
	}
	after, _, _ := d.StateHash()
	if before == after {
		t.Fatal("state hash did not change with the applied index")
	}
	// An unknown op is as deterministic.
	if _, err := d.ApplyAt(&Command{Op: "Nope", At: t0}, 7); err == nil || mustApplied(t, d) != 7 {
		t.Fatalf("unknown op: err %v, applied %d; want an error and index 7", err, mustApplied(t, d))
	}
}

func TestApplyAt_NodeFailureRecordsNothing(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	if _, err := d.ApplyAt(addDocCmd("a1", "a.txt"), 1); err != nil {
		t.Fatal(err)
	}
	d.SetCommitFault(func(*Command) error { return fmt.Errorf("write: %w", syscall.EIO) })
	_, err := d.ApplyAt(addDocCmd("a2", "b.txt"), 2)
	var ue *UnappliedError
	if !errors.As(err, &ue) || ue.Index != 2 {
		t.Fatalf("err = %v, want UnappliedError at 2", err)
	}
	if got := mustApplied(t, d); got != 1 {
		t.Fatalf("applied index after a disk fault = %d, want 1", got)
	}
	if _, err := d.GetDocument("default", "a2"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("document of a failed commit: %v", err)
	}
	d.SetCommitFault(nil)
	d.Close()
	if _, err := d.ApplyAt(addDocCmd("a3", "c.txt"), 3); !errors.As(err, &ue) {
		t.Fatalf("closed store: err = %v, want UnappliedError", err)
	}
}

func TestSnapshot_ReplaceFromGivesTheSameState(t *testing.T) {
	t.Parallel() // own store, no package or process state
	src := mustOpen(t)
	for i := 1; i <= 20; i++ {
		if _, err := src.ApplyAt(addDocCmd(fmt.Sprint("d", i), fmt.Sprint("p", i)), uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	want, keys, err := src.StateHash()
	if err != nil {
		t.Fatal(err)
	}
	snap, err := src.OpenSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	// Writes after the snapshot opened are not in it.
	if _, err := src.ApplyAt(addDocCmd("late", "late"), 21); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	n, err := snap.WriteTo(&buf)
	snap.Release()
	if err != nil || n != int64(buf.Len()) {
		t.Fatalf("write snapshot: n %d of %d, %v", n, buf.Len(), err)
	}
	if snap.AppliedIndex() != 20 {
		t.Fatalf("snapshot applied index %d, want 20", snap.AppliedIndex())
	}

	dst := mustOpen(t)
	if _, err := dst.ApplyAt(addDocCmd("other", "other"), 90); err != nil {
		t.Fatal(err)
	}
	raw := buf.Bytes()
	// A load cut short is visible until a load completes.
	if err := dst.ReplaceFrom(bytes.NewReader(raw[:len(raw)/2])); err == nil {
		t.Fatal("truncated snapshot loaded without an error")
	}
	if _, err := dst.AppliedIndex(); !errors.Is(err, ErrRestoreIncomplete) {
		t.Fatalf("after a cut load: %v, want ErrRestoreIncomplete", err)
	}
	if err := dst.ReplaceFrom(bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	got, gotKeys, err := dst.StateHash()
	if err != nil {
		t.Fatal(err)
	}
	if got != want || gotKeys != keys {
		t.Fatalf("restored state %s (%d keys), want %s (%d keys)", got, gotKeys, want, keys)
	}
	if idx := mustApplied(t, dst); idx != 20 {
		t.Fatalf("restored applied index %d, want 20", idx)
	}
	if _, err := dst.GetDocument("default", "other"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a document of the replaced state survived: %v", err)
	}
	// The restored store takes the next entries.
	if _, err := dst.ApplyAt(addDocCmd("late", "late"), 21); err != nil {
		t.Fatal(err)
	}
	a, _, _ := src.StateHash()
	b, _, _ := dst.StateHash()
	if a != b {
		t.Fatal("states differ after the same next entry")
	}
}

// TestBackup_LeavesOutReplicationState: a backup of a cluster member
// restores as a store that has applied no Raft entry, so the new
// cluster's log (counting from 1) is applied, not skipped.
func TestBackup_LeavesOutReplicationState(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	if _, err := d.ApplyAt(replicate(t, addDocCmd("a1", "a.txt")), 42); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, _, err := d.Backup(&buf); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := Restore(dir, &buf); err != nil {
		t.Fatal(err)
	}
	r, err := Open(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	if got := mustApplied(t, r); got != 0 {
		t.Fatalf("restored applied index = %d, want 0", got)
	}
	if _, err := r.DocumentIDByPath("default", "a.txt"); err != nil {
		t.Fatalf("restored store lacks the document: %v", err)
	}
}

// A batch of log entries is applied in one transaction and leaves exactly
// the state the same entries leave applied one by one; a command failing
// its pre-checks fails alone; an applier refusing its command makes the
// whole batch write nothing (the FSM then applies the entries one by one).
func TestApplyBatchAt_OneTransactionSameStateAsOneByOne(t *testing.T) {
	t.Parallel() // own store, no package or process state
	cmds := func() []IndexedCommand {
		return []IndexedCommand{
			{10, replicate(t, addDocCmd("b1", "x/1.txt"))},
			{11, replicate(t, MustCommand("NoSuchOp", "default", "joe", t0, nil))},
			{12, replicate(t, addDocCmd("b2", "x/1.txt"))}, // same path: renamed, sees b1 in the transaction
			{14, replicate(t, MustCommand(OpSetTags, "default", "joe", t0, SetTags{DocumentID: "b1", Mode: "add", Tags: []Tag{{Key: "k", Value: "v"}}}))},
		}
	}
	one, batched := mustOpen(t), mustOpen(t)
	var oneErrs []error
	for _, e := range cmds() {
		_, err := one.ApplyAt(e.Cmd, e.Index)
		oneErrs = append(oneErrs, err)
	}
	var hooked []Op
	batched.OnCommit(func(c *Command, _ Result) { hooked = append(hooked, c.Op) })
	res, errs, ok := batched.ApplyBatchAt(cmds())
	if !ok {
		t.Fatal("the batch was not applied")
	}
	for i := range errs {
		if (errs[i] == nil) != (oneErrs[i] == nil) {
			t.Fatalf("entry %d: batched error %v, one by one %v", i, errs[i], oneErrs[i])
		}
	}
	if errs[1] == nil {
		t.Fatal("an unknown op applied in a batch")
	}
	if r, ok := res[2].Value.(*AddDocumentsResult); !ok || r.Paths["b2"] == "x/1.txt" {
		t.Fatalf("second document's result %#v: want it renamed away from its neighbour's path", res[2].Value)
	}
	if want := []Op{OpAddDocuments, OpAddDocuments, OpSetTags}; !reflect.DeepEqual(hooked, want) {
		t.Fatalf("hooks ran for %v, want %v in log order", hooked, want)
	}
	h1, n1, _ := one.StateHash()
	h2, n2, _ := batched.StateHash()
	if h1 != h2 || n1 != n2 || mustApplied(t, batched) != 14 {
		t.Fatalf("batched state %s (%d keys, applied %d), one by one %s (%d keys)", h2, n2, mustApplied(t, batched), h1, n1)
	}

	// An applier's refusal (a duplicate id: ConflictError after reads)
	// discards the whole batch.
	before, _, _ := batched.StateHash()
	_, _, ok = batched.ApplyBatchAt([]IndexedCommand{
		{15, replicate(t, addDocCmd("b3", "y.txt"))},
		{16, replicate(t, addDocCmd("b1", "z.txt"))},
	})
	after, _, _ := batched.StateHash()
	if ok || before != after || mustApplied(t, batched) != 14 {
		t.Fatalf("a batch with a refused command: ok %v, state changed %v, applied %d", ok, before != after, mustApplied(t, batched))
	}
}

// TestSnapshot_ReplaceFromForgetsCachedSiteConfig: a member that loads a
// snapshot answers the site configuration the snapshot holds, not the one
// it had cached before the load.
func TestSnapshot_ReplaceFromForgetsCachedSiteConfig(t *testing.T) {
	t.Parallel() // own store, no package or process state
	src := mustOpen(t)
	if _, err := src.ApplyAt(MustCommand(OpSetSiteConfig, "default", "joe", time.Now(), SiteConfig{MaxDocuments: "7"}), 1); err != nil {
		t.Fatal(err)
	}
	snap, err := src.OpenSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	_, err = snap.WriteTo(&buf)
	snap.Release()
	if err != nil {
		t.Fatal(err)
	}
	dst := mustOpen(t)
	if _, err := dst.ApplyAt(MustCommand(OpSetSiteConfig, "default", "joe", time.Now(), SiteConfig{MaxDocuments: "99"}), 1); err != nil {
		t.Fatal(err)
	}
	if c, err := dst.SiteConfig("default"); err != nil || c.MaxDocuments != "99" { // cached now
		t.Fatalf("before the load: %+v, %v", c, err)
	}
	if err := dst.ReplaceFrom(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	if c, err := dst.SiteConfig("default"); err != nil || c.MaxDocuments != "7" {
		t.Fatalf("after loading the snapshot: maxDocuments %q (%v), want the snapshot's 7", c.MaxDocuments, err)
	}
}
