package memlimit

import (
	"runtime/debug"
	"testing"
	"time"
)

// TestWithHeadroom_RaisesThenRestores: the soft memory limit is raised
// while a batch is built; after it, it stays raised while changes wait
// for the next batch, and is back at its base at once when none wait, or
// within headroomLinger once batches stop.
func TestWithHeadroom_RaisesThenRestores(t *testing.T) {
	const base = 1 << 40
	old := debug.SetMemoryLimit(base)
	t.Cleanup(func() {
		deadline := time.Now().Add(3 * headroomLinger)
		for debug.SetMemoryLimit(-1) != base && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		debug.SetMemoryLimit(old)
	})
	limit := func() int64 { return debug.SetMemoryLimit(-1) }
	batch := func(t *testing.T, more func() bool) {
		t.Helper()
		var during int64
		if err := WithHeadroom(func() error {
			during = limit()
			return nil
		}, more); err != nil {
			t.Fatal(err)
		}
		if during != base+batchHeadroom {
			t.Fatalf("limit %d while building, want %d", during, int64(base+batchHeadroom))
		}
	}
	waiting := func() bool { return true }
	for _, c := range []struct {
		name  string
		more  func() bool
		after int64 // the limit right after the batch
	}{
		{"changes wait", waiting, base + batchHeadroom},
		{"none wait", func() bool { return false }, base},
		{"changes wait again", waiting, base + batchHeadroom},
		{"no queue", nil, base},
	} {
		t.Run(c.name, func(t *testing.T) {
			batch(t, c.more)
			if got := limit(); got != c.after {
				t.Fatalf("limit %d right after the batch, want %d", got, c.after)
			}
		})
	}
	batch(t, waiting)
	deadline := time.Now().Add(headroomLinger + 5*time.Second)
	for limit() != base {
		if time.Now().After(deadline) {
			t.Fatalf("limit %d %v after the last batch, want the base %d", limit(), headroomLinger+5*time.Second, int64(base))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
