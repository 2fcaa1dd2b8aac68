package api

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// fakeLag is a lag source whose lag and batches the test sets.
type fakeLag struct {
	mu       sync.Mutex
	lag      time.Duration
	backlog  time.Duration
	progress chan struct{}
	reads    int
	hurried  int
}

func (f *fakeLag) Hurry() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hurried++
}

func newFakeLag(lag time.Duration) *fakeLag {
	return &fakeLag{lag: lag, progress: make(chan struct{})}
}

func (f *fakeLag) TextLag() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	return f.lag
}

func (f *fakeLag) TextBacklog() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.backlog
}

func (f *fakeLag) TextProgress() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.progress
}

// batch ends a batch leaving the lag and the backlog at lag.
func (f *fakeLag) batch(lag time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lag, f.backlog = lag, lag
	close(f.progress)
	f.progress = make(chan struct{})
}

func (f *fakeLag) readCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads
}

// waitAsync runs g.wait in a goroutine; the channel gets its result.
func waitAsync(g *indexGate, ctx context.Context) <-chan error {
	done := make(chan error, 1)
	go func() { done <- g.Wait(ctx) }()
	return done
}

// pollWaiting waits until n writes wait at the gate.
func pollWaiting(t *testing.T, g *indexGate, n int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for g.waiting.Load() != n {
		if time.Now().After(deadline) {
			t.Fatalf("waiting = %d, want %d", g.waiting.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestIndexGate_UnderThresholdPassesAtOnce(t *testing.T) {
	for _, lag := range []time.Duration{0, 100 * time.Millisecond, 500 * time.Millisecond} {
		src := newFakeLag(lag)
		g := NewIndexGate(src, 500*time.Millisecond, time.Hour)
		if err := g.Wait(context.Background()); err != nil {
			t.Fatalf("lag %v: %v", lag, err)
		}
		if g.waits.Load() != 0 || g.waitedNS.Load() != 0 || src.hurried != 0 {
			t.Errorf("lag %v: counted a wait (%d, %d ns)", lag, g.waits.Load(), g.waitedNS.Load())
		}
	}
	var nilGate *indexGate
	if err := nilGate.Wait(context.Background()); err != nil {
		t.Errorf("nil gate: %v", err)
	}
}

func TestIndexGate_WaitsUntilABatchBringsTheLagDown(t *testing.T) {
	src := newFakeLag(2 * time.Second)
	g := NewIndexGate(src, 500*time.Millisecond, time.Hour)
	done := waitAsync(g, context.Background())
	pollWaiting(t, g, 1)
	// A batch that leaves the lag above the threshold releases nobody.
	src.batch(time.Second)
	deadline := time.Now().Add(5 * time.Second)
	for src.readCount() < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the gate did not read the lag again after a batch")
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case err := <-done:
		t.Fatalf("released with the lag still 1 s: %v", err)
	default:
	}
	src.batch(200 * time.Millisecond)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("not released after the lag fell")
	}
	if src.hurried < 2 {
		t.Errorf("indexer hurried %d times, want one per wait and one per batch that left it behind", src.hurried)
	}
	if g.waits.Load() != 1 || g.waitedNS.Load() <= 0 || g.waiting.Load() != 0 || g.timeouts.Load() != 0 {
		t.Errorf("waits %d, waited %d ns, waiting %d, timeouts %d", g.waits.Load(), g.waitedNS.Load(), g.waiting.Load(), g.timeouts.Load())
	}
}

func TestIndexGate_ManyWaitersReleasedByOneBatch(t *testing.T) {
	src := newFakeLag(3 * time.Second)
	g := NewIndexGate(src, 500*time.Millisecond, time.Hour)
	var dones []<-chan error
	for range 16 {
		dones = append(dones, waitAsync(g, context.Background()))
	}
	pollWaiting(t, g, 16)
	src.batch(0)
	for i, d := range dones {
		select {
		case err := <-d:
			if err != nil {
				t.Fatalf("waiter %d: %v", i, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("waiter %d not released", i)
		}
	}
	if g.waits.Load() != 16 || g.waiting.Load() != 0 {
		t.Errorf("waits %d, waiting %d", g.waits.Load(), g.waiting.Load())
	}
}

func TestIndexGate_BacklogHoldsWritesBeforeTheLagShows(t *testing.T) {
	// A burst queued seconds of work a moment ago: the oldest change is
	// young, but a write now would wait behind all of it.
	src := newFakeLag(10 * time.Millisecond)
	src.backlog = 3 * time.Second
	g := NewIndexGate(src, 500*time.Millisecond, time.Hour)
	done := waitAsync(g, context.Background())
	pollWaiting(t, g, 1)
	src.batch(100 * time.Millisecond)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("not released after the backlog fell")
	}
}

func TestIndexGate_RequestContextEndsTheWait(t *testing.T) {
	g := NewIndexGate(newFakeLag(time.Minute), 500*time.Millisecond, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	done := waitAsync(g, ctx)
	pollWaiting(t, g, 1)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancelled wait did not return")
	}
	if g.waiting.Load() != 0 || g.timeouts.Load() != 0 {
		t.Errorf("waiting %d, timeouts %d", g.waiting.Load(), g.timeouts.Load())
	}
}

func TestIndexGate_StuckIndexerLetsWritesThroughAfterMaxWait(t *testing.T) {
	g := NewIndexGate(newFakeLag(time.Minute), 500*time.Millisecond, 50*time.Millisecond)
	start := time.Now()
	if err := g.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 50*time.Millisecond {
		t.Errorf("returned after %v, before maxWait", took)
	}
	if g.timeouts.Load() != 1 || g.waits.Load() != 1 || g.waiting.Load() != 0 {
		t.Errorf("timeouts %d, waits %d, waiting %d", g.timeouts.Load(), g.waits.Load(), g.waiting.Load())
	}
}

func TestIndexGate_OnlyIndexFedOpsWait(t *testing.T) {
	// The commands that create documents or change what the index holds
	// of them wait; deletions and the rest never do.
	for op, want := range map[string]bool{
		"AddDocuments": true, "UpdateDocument": true, "CommitContent": true, "SetTags": true,
		"SetDocAttributes": true, "SetText": true,
		"SoftDelete": false, "DeleteDocument": false, "AddActions": false, "AddFolder": false,
		"PutChunks": false, "FinishAction": false,
	} {
		got := false
		for o := range indexFed {
			if string(o) == op {
				got = true
			}
		}
		if got != want {
			t.Errorf("%s gated = %v, want %v", op, got, want)
		}
	}
}
