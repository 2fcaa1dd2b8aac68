package index

import (
	"runtime/debug"
	"testing"
	"time"
)

// TestWithHeadroom_RaisesThenRestores: the soft memory limit is raised
// while a batch is built, stays raised between batches that follow each
// other closely, and is back at its base once batches stop.
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
	var during int64
	for i := range 3 {
		if err := withHeadroom(func() error {
			during = debug.SetMemoryLimit(-1)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if during != base+batchHeadroom {
			t.Fatalf("batch %d: limit %d while building, want %d", i, during, int64(base+batchHeadroom))
		}
		if got := debug.SetMemoryLimit(-1); got != base+batchHeadroom {
			t.Fatalf("batch %d: limit %d right after the batch, want it still raised (%d)", i, got, int64(base+batchHeadroom))
		}
	}
	deadline := time.Now().Add(headroomLinger + 5*time.Second)
	for debug.SetMemoryLimit(-1) != base {
		if time.Now().After(deadline) {
			t.Fatalf("limit %d %v after the last batch, want the base %d", debug.SetMemoryLimit(-1), headroomLinger+5*time.Second, int64(base))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
