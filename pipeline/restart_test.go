package pipeline

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"quire/storage"
)

// TestStopStart_RunningActionRunsAgainAndStoppedCommitsWait: the
// pipeline of a cluster node stops when the node stops leading and starts
// again when it leads. Stop cancels a running engine at once; the action
// stays RUNNING and, at the next Start, runs again (its outcome recorded
// once, attempt counted). Documents added while stopped do not run until
// Start, which reads them from the store.
func TestStopStart_RunningActionRunsAgainAndStoppedCommitsWait(t *testing.T) {
	var runs atomic.Int32
	block := make(chan struct{})
	engines["TEST_SLOW"] = func(ctx context.Context, _ *Job) (*Outcome, error) {
		if runs.Add(1) == 1 {
			select { // the first run blocks until cancelled
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-block:
			}
		}
		return nil, nil
	}
	t.Cleanup(func() { delete(engines, "TEST_SLOW") })
	db := memDB(t)
	p := startPipeline(t, db, db, Config{Workers: 2})
	action := func(id string) storage.Action {
		acts, err := db.GetActions("default", id)
		if err != nil || len(acts) != 1 {
			t.Fatalf("actions of %s: %v %v", id, acts, err)
		}
		return acts[0]
	}
	poll := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	addWithAction(t, db, "d1", storage.Action{Type: "TEST_SLOW"})
	poll("d1 to run", func() bool { return runs.Load() == 1 && action("d1").Status == storage.ActionRunning })

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // cancel running engines at once
	if err := p.Stop(ctx); err == nil {
		t.Fatal("Stop with a running engine and a done context reported no cancellation")
	}
	if running, _, _ := p.Status(); running {
		t.Fatal("stopped pipeline reports running")
	}
	if a := action("d1"); a.Status != storage.ActionRunning || a.RetryCount != 1 {
		t.Fatalf("d1 after Stop: %s, attempt %d; want RUNNING, 1", a.Status, a.RetryCount)
	}
	// Added while stopped: nothing runs it.
	addWithAction(t, db, "d2", storage.Action{Type: "TEST_SLOW"})
	if _, busy, _ := p.Status(); busy != 0 {
		t.Fatalf("stopped pipeline queued %d documents", busy)
	}
	if a := action("d2"); a.Status != storage.ActionPending {
		t.Fatalf("d2 while stopped: %s", a.Status)
	}

	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	poll("both actions to complete", func() bool {
		return action("d1").Status == storage.ActionComplete && action("d2").Status == storage.ActionComplete
	})
	if a := action("d1"); a.RetryCount != 2 {
		t.Fatalf("d1 ran again with attempt %d, want 2", a.RetryCount)
	}
	if got := runs.Load(); got != 3 {
		t.Fatalf("engine runs %d, want 3 (d1 cancelled, d1 again, d2)", got)
	}
	if running, _, _ := p.Status(); !running {
		t.Fatal("restarted pipeline reports not running")
	}
	// After Close, Start does nothing.
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	if running, _, _ := p.Status(); running {
		t.Fatal("Start after Close started the pipeline")
	}
}
