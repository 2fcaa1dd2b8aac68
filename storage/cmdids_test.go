package storage

import (
	"errors"
	"testing"
	"time"
)

// A command with an id applies once within the window: the same command
// again answers the first result and writes nothing; after the window it
// is a new command; records older than the window are pruned by later
// commands; a command of another op under the id is applied as usual.
func TestCommandID_AppliesOnceAndIsPruned(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	var index uint64
	add := func(id, path string, at time.Time) (Result, error) {
		c := MustCommand(OpAddDocuments, "default", "joe", at, AddDocuments{Docs: []NewDocument{{Document: Document{DocumentID: "doc-" + path, Path: path}}}})
		c.ID = id
		index++
		return d.ApplyAt(c, index)
	}
	first, err := add("cmd-1", "a.txt", t0)
	if err != nil {
		t.Fatal(err)
	}
	again, err := add("cmd-1", "a.txt", t0.Add(time.Second))
	if err != nil || !again.Replayed {
		t.Fatalf("the same id again: %+v %v, want the first result replayed", again, err)
	}
	if a, b := first.Value.(*AddDocumentsResult), again.Value.(*AddDocumentsResult); a == nil || b == nil || a.Paths["doc-a.txt"] != "a.txt" || b.Paths["doc-a.txt"] != "a.txt" {
		t.Fatalf("replayed %+v, first %+v", again.Value, first.Value)
	}
	page, err := d.ListDocuments("default", ListOptions{Limit: 10})
	if err != nil || len(page.Documents) != 1 {
		t.Fatalf("documents after the same command twice: %v %v, want 1", page, err)
	}
	// After the window the id is free: a new write (here a path that
	// exists: renamed as any duplicate path is).
	later := t0.Add(CommandIDWindow + time.Minute)
	if r, err := add("cmd-2", "b.txt", later); err != nil || r.Replayed {
		t.Fatalf("another id: %+v %v", r, err)
	}
	var ok bool
	err = d.view(func(t *tx) error { var e error; ok, e = t.exists(commandKey("cmd-1")); return e })
	if err != nil || ok {
		t.Fatalf("cmd-1's record after the window: present %v (%v), want pruned", ok, err)
	}
	if r, err := add("cmd-1", "c.txt", later); err != nil || r.Replayed {
		t.Fatalf("cmd-1 after the window: %+v %v, want a new write", r, err)
	}
	bad := MustCommand(OpAddDocuments, "default", "joe", later, AddDocuments{Docs: []NewDocument{{Document: Document{Path: "d.txt"}}}})
	bad.ID = string(make([]byte, MaxCommandIDBytes+1))
	var ve *ValidationError
	if _, err := d.ApplyAt(bad, index+1); !errors.As(err, &ve) {
		t.Fatalf("an id too long: %v, want a validation error", err)
	}
}
