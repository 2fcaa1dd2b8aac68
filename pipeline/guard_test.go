package pipeline

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"quire/guard"
	"quire/storage"
)

// panicOnce panics in the first command of op it applies: a bug in the
// pipeline's own code after an engine ran.
type panicOnce struct {
	storage.Applier
	op   storage.Op
	done atomic.Bool
}

func (a *panicOnce) Apply(ctx context.Context, c *storage.Command) (storage.Result, error) {
	if c.Op == a.op && a.done.CompareAndSwap(false, true) {
		panic("pipeline bug for test")
	}
	return a.Applier.Apply(ctx, c)
}

// TestPanic_ActionFailsAndNextRuns: a panic in an engine or in the
// pipeline around it fails that action with a message, is counted, and
// the worker goes on to the next document's action.
func TestPanic_ActionFailsAndNextRuns(t *testing.T) {
	engines["TEST_PANIC"] = func(context.Context, *Job) (*Outcome, error) { panic("engine bug for test") }
	engines["TEST_OK"] = func(context.Context, *Job) (*Outcome, error) { return nil, nil }
	t.Cleanup(func() { delete(engines, "TEST_PANIC"); delete(engines, "TEST_OK") })
	cases := []struct {
		name, first, msg string
		panicOp          storage.Op // the applier panics in the first such command
	}{
		{"engine panics", "TEST_PANIC", "internal error in TEST_PANIC engine", ""},
		{"finishing panics", "TEST_OK", "internal error running TEST_OK", storage.OpFinishAction},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db := memDB(t)
			var apply storage.Applier = db
			if c.panicOp != "" {
				apply = &panicOnce{Applier: db, op: c.panicOp}
			}
			before := guard.Count(guard.Pipeline)
			startPipeline(t, db, apply, Config{Workers: 1})
			// d1's action panics; d2 is added after it, for the same
			// single worker.
			for _, d := range []struct{ id, action string }{{"d1", c.first}, {"d2", "TEST_OK"}} {
				addWithAction(t, db, d.id, storage.Action{Type: d.action})
			}
			status := func(id string) storage.Action {
				acts, err := db.GetActions("default", id)
				if err != nil || len(acts) != 1 {
					t.Fatalf("actions of %s: %v %v", id, acts, err)
				}
				return acts[0]
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				a1, a2 := status("d1"), status("d2")
				if a1.Status == storage.ActionFailed && a2.Status == storage.ActionComplete {
					if a1.Message != c.msg {
						t.Fatalf("message %q, want %q", a1.Message, c.msg)
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("after 10s: d1 %s %q, d2 %s; want FAILED, COMPLETE", a1.Status, a1.Message, a2.Status)
				}
				time.Sleep(10 * time.Millisecond)
			}
			if got := guard.Count(guard.Pipeline); got != before+1 {
				t.Fatalf("quire_panics_total{where=pipeline} went from %v to %v, want one more", before, got)
			}
		})
	}
}

// memDB opens an in-memory store for the test.
func memDB(t *testing.T) *storage.DB {
	t.Helper()
	db, err := storage.Open(storage.Config{InMemory: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// startPipeline starts a quiet pipeline on db until the test ends.
func startPipeline(t *testing.T, db *storage.DB, apply storage.Applier, cfg Config) *Pipeline {
	t.Helper()
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	p := New(db, apply, cfg)
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	return p
}

// addWithAction adds document id with content (actions wait for it) and
// action a.
func addWithAction(t *testing.T, db *storage.DB, id string, a storage.Action) {
	t.Helper()
	m, tail, err := storage.WriteContent(context.Background(), db, strings.NewReader("x"), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Apply(context.Background(), storage.MustCommand(storage.OpAddDocuments, "default", "joe", time.Now(), storage.AddDocuments{
		Docs: []storage.NewDocument{{Document: storage.Document{DocumentID: id, Path: id}, Content: &m, Chunks: tail, Actions: []storage.Action{a}}},
	})); err != nil {
		t.Fatal(err)
	}
}
