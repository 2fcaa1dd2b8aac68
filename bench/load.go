package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// maxLoadErrors ends a load early: past it the figures mean nothing.
const maxLoadErrors = 100

// loadOp is one operation of a load: worker w's i-th.
type loadOp func(ctx context.Context, w, i int) error

// loadResult is what a timed closed-loop load measured.
type loadResult struct {
	ops      int             // operations completed inside the window
	errors   int             // failed operations over the whole run
	firstErr error           // the first failure, for the report
	window   time.Duration   // length of the measured window
	lat      []time.Duration // latencies of the counted operations, sorted
}

// rate returns operations per second inside the window.
func (r loadResult) rate() float64 { return float64(r.ops) / r.window.Seconds() }

// percentile returns the p-th (0..1) latency percentile, nearest rank.
func (r loadResult) percentile(p float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(r.lat)))) - 1
	return r.lat[min(max(i, 0), len(r.lat)-1)]
}

// err returns an error if the load failed often enough to be meaningless.
func (r loadResult) err() error {
	switch {
	case r.errors >= maxLoadErrors:
		return fmt.Errorf("aborted after %d errors, first: %w", r.errors, r.firstErr)
	case r.ops == 0 && r.firstErr != nil:
		return fmt.Errorf("no operation succeeded: %w", r.firstErr)
	case r.ops == 0:
		return fmt.Errorf("no operation completed in %s", r.window)
	}
	return nil
}

// runLoad runs op in a closed loop on workers goroutines for warmup+window
// and counts the operations that complete inside the window (the last
// warmup-free stretch). Workers start no operation after the window ends;
// operations in flight then finish but do not count.
func runLoad(ctx context.Context, workers int, warmup, window time.Duration, op loadOp) loadResult {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	w := &loadWindow{from: start.Add(warmup), until: start.Add(warmup + window), cancel: cancel}
	var wg sync.WaitGroup
	for id := range workers {
		wg.Go(func() { w.work(ctx, id, op) })
	}
	wg.Wait()
	slices.Sort(w.lat)
	return loadResult{ops: len(w.lat), errors: int(w.errors.Load()), firstErr: w.firstErr, window: window, lat: w.lat}
}

// loadWindow is the state the workers of one runLoad share.
type loadWindow struct {
	from, until time.Time
	cancel      context.CancelFunc // ends the load after maxLoadErrors
	errors      atomic.Int64

	mu       sync.Mutex
	lat      []time.Duration
	firstErr error
}

// work is one worker's loop, bounded by the window's end.
func (w *loadWindow) work(ctx context.Context, id int, op loadOp) {
	var lat []time.Duration
	var first error
	for i := 0; ctx.Err() == nil; i++ {
		t0 := time.Now()
		if !t0.Before(w.until) {
			break
		}
		err := op(ctx, id, i)
		t1 := time.Now()
		if err != nil {
			if first == nil && ctx.Err() == nil {
				first = err
			}
			if w.errors.Add(1) >= maxLoadErrors {
				w.cancel()
			}
			continue
		}
		if t1.After(w.from) && !t1.After(w.until) {
			lat = append(lat, t1.Sub(t0))
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lat = append(w.lat, lat...)
	if w.firstErr == nil {
		w.firstErr = first
	}
}
