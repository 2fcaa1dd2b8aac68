package storage

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// TestGroupCommit: concurrent creates are committed in groups, each with
// its own result and hook; a command its applier refuses fails alone
// while its group's others are applied; everything acknowledged is there
// after a reopen.
func TestGroupCommit(t *testing.T) {
	t.Parallel() // own store, no package or process state
	dir := t.TempDir()
	d, err := Open(Config{Dir: dir})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	var hooked atomic.Int64
	d.OnCommit(func(c *Command, r Result) {
		if c.Op == OpAddDocuments && len(r.Touched) > 0 {
			hooked.Add(1)
		}
	})
	id := func(round, i int) string { return fmt.Sprintf("%08d-%04d-4000-8000-000000000000", i, round) }
	create := func(docID string) error {
		_, err := d.Apply(context.Background(), MustCommand(OpAddDocuments, "default", "joe", t0,
			AddDocuments{Docs: []NewDocument{{Document: Document{DocumentID: docID, Path: "g/" + docID + ".txt"}}}}))
		return err
	}
	const n = 48
	var ok []string
	tests := []struct {
		name  string
		round int
		dup   func(i int) bool // these reuse a documentId of round 0
	}{
		{"all valid", 0, func(int) bool { return false }},
		{"every fourth a duplicate", 1, func(i int) bool { return i%4 == 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := hooked.Load()
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					docID := id(tt.round, i)
					if tt.dup(i) {
						docID = id(0, i)
					}
					errs[i] = create(docID)
				})
			}
			wg.Wait()
			want := 0
			for i, err := range errs {
				var ce *ConflictError
				switch {
				case tt.dup(i) && !errors.As(err, &ce):
					t.Errorf("duplicate %d: err = %v, want a ConflictError", i, err)
				case !tt.dup(i) && err != nil:
					t.Errorf("create %d: %v", i, err)
				case !tt.dup(i):
					want++
					ok = append(ok, id(tt.round, i))
				}
			}
			if got := hooked.Load() - before; got != int64(want) {
				t.Errorf("hooks ran for %d creates, want %d", got, want)
			}
		})
	}
	if d.group.largest.Load() < 2 {
		t.Errorf("no two creates were committed in one group")
	}
	if err := d.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	d, err = Open(Config{Dir: dir})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer d.Close()
	for _, docID := range ok {
		if _, err := d.GetDocument("default", docID); err != nil {
			t.Errorf("acknowledged %s after reopen: %v", docID, err)
		}
	}
}

// TestCommitGroup_RefusedCommandGoesAlone: in a group whose third command
// its applier refuses, that command is handed back to be applied alone
// and the others are committed together.
func TestCommitGroup_RefusedCommandGoesAlone(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	addDoc(t, d, "default", "00000000-0000-4000-8000-0000000000aa", "taken.txt", t0)
	ids := []string{
		"00000000-0000-4000-8000-000000000001",
		"00000000-0000-4000-8000-000000000002",
		"00000000-0000-4000-8000-0000000000aa", // exists: refused
		"00000000-0000-4000-8000-000000000004",
		"00000000-0000-4000-8000-000000000005",
	}
	var batch []*pendingApply
	for _, id := range ids {
		c := MustCommand(OpAddDocuments, "default", "joe", t0, AddDocuments{Docs: []NewDocument{{Document: Document{DocumentID: id, Path: id + ".txt"}}}})
		fn, err := d.precheck(c)
		if err != nil {
			t.Fatalf("precheck: %v", err)
		}
		batch = append(batch, &pendingApply{ctx: context.Background(), c: c, fn: fn, size: writeSize(c), done: make(chan groupAnswer, 1)})
	}
	d.commitGroup(batch)
	for i, p := range batch {
		a := <-p.done
		switch {
		case i == 2 && !a.fallback:
			t.Errorf("refused command: answer %+v, want to be applied alone", a)
		case i != 2 && (a.fallback || a.err != nil || a.hooks == nil):
			t.Errorf("command %d: answer %+v, want committed in the group", i, a)
		}
		if a.hooks != nil {
			a.hooks.Done()
		}
	}
	for i, id := range ids {
		if i == 2 {
			continue
		}
		if _, err := d.GetDocument("default", id); err != nil {
			t.Errorf("document %d after the group: %v", i, err)
		}
	}
}

// BenchmarkConcurrentCreates: 64 goroutines creating documents with 4 KiB
// of inline content, committed in groups (Apply) or each alone (the path
// Apply took before group commit), in one process on one disk; "defaults"
// is grouped with a tag and the site's default processing (a FULLTEXT
// recorded COMPLETE, an OCR dropped), as the console's and most doors'
// creates are; "processing" is grouped with the default processing alone,
// the A/B of the bench's sustained rows (processing on against grouped):
//
//	go test -run XXX -bench ConcurrentCreates -benchtime 3000x ./storage/
func BenchmarkConcurrentCreates(b *testing.B) {
	content := make([]byte, 4<<10)
	for i := range content {
		content[i] = 'a' + byte(i%26)
	}
	for _, mode := range []string{"alone", "grouped", "defaults", "processing"} {
		b.Run(mode, func(b *testing.B) {
			d, err := Open(Config{Dir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for w := range 64 {
				wg.Go(func() {
					for {
						i := next.Add(1)
						if i > int64(b.N) {
							return
						}
						m, chunks, _ := SmallContent(content)
						id := fmt.Sprintf("%08d-0000-4000-8000-%012d", w, i)
						nd := NewDocument{
							Document: Document{DocumentID: id, Path: fmt.Sprintf("b/%02d/%s.txt", w, id), ContentType: "text/plain"},
							Content:  &m, Chunks: chunks}
						if mode == "processing" {
							nd.DefaultActions = true
						}
						if mode == "defaults" {
							nd.DefaultActions, nd.Tags = true, []Tag{{Key: "source", Value: "scanner"}}
						}
						c := MustCommand(OpAddDocuments, "default", "joe", t0, AddDocuments{Docs: []NewDocument{nd}})
						var err error
						if mode != "alone" {
							_, err = d.Apply(context.Background(), c)
						} else {
							fn, perr := d.precheck(c)
							if perr != nil {
								b.Error(perr)
								return
							}
							_, err = d.applyTxn(context.Background(), c, fn, 0)
						}
						if err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "docs/s")
			b.ReportMetric(float64(d.group.largest.Load()), "largest-group")
		})
	}
}
