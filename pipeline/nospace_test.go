package pipeline

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"quire/storage"
)

// TestNoSpace_ActionWaitsAndRunsAgain: an engine stopped by a full disk
// (ENOSPC from a file operation, or a program saying so) leaves its action
// waiting for a retry that does not use up its attempts, however often it
// happens; once space is back the action completes.
func TestNoSpace_ActionWaitsAndRunsAgain(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
	}{
		{"ENOSPC", &os.PathError{Op: "write", Path: "/tmp/page-1.png", Err: syscall.ENOSPC}},
		{"program output", fmt.Errorf("tesseract: exit status 1: Error writing output: No space left on device")},
	} {
		t.Run(c.name, func(t *testing.T) {
			var calls atomic.Int32
			engines["TEST_NOSPACE"] = func(context.Context, *Job) (*Outcome, error) {
				if calls.Add(1) <= 3 {
					return nil, c.err
				}
				return nil, nil
			}
			t.Cleanup(func() { delete(engines, "TEST_NOSPACE") })
			db := memDB(t)
			startPipeline(t, db, db, Config{Workers: 1, RetryBase: time.Millisecond})
			addWithAction(t, db, "d1", storage.Action{Type: "TEST_NOSPACE", MaxRetries: 1})
			deadline := time.Now().Add(10 * time.Second)
			for {
				acts, err := db.GetActions("default", "d1")
				if err != nil || len(acts) != 1 {
					t.Fatalf("actions: %v %v", acts, err)
				}
				a := acts[0]
				if a.Status == storage.ActionComplete {
					if n := calls.Load(); n != 4 {
						t.Fatalf("engine ran %d times, want 4", n)
					}
					return
				}
				if !storage.ActionRunnable(a.Status) {
					t.Fatalf("action ended %s %q after %d runs; a full disk must not end it", a.Status, a.Message, calls.Load())
				}
				if time.Now().After(deadline) {
					t.Fatalf("after 10s: %s %q", a.Status, a.Message)
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
}
