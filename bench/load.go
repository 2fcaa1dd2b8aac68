package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/badger/v4"
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

// runCount runs op on workers goroutines until n operations have
// succeeded (or failed past maxLoadErrors); its window is the whole run.
func runCount(ctx context.Context, workers, n int, op loadOp) loadResult {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var next, errs atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	var firstErr error
	start := time.Now()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			var mine []time.Duration
			for j := 0; ctx.Err() == nil; j++ {
				if next.Add(1) > int64(n) {
					break
				}
				t0 := time.Now()
				if err := op(ctx, w, j); err != nil {
					next.Add(-1) // retried by someone
					mu.Lock()
					if firstErr == nil && ctx.Err() == nil {
						firstErr = err
					}
					mu.Unlock()
					if errs.Add(1) >= maxLoadErrors {
						cancel()
					}
					continue
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(lat)
	return loadResult{ops: len(lat), errors: int(errs.Load()), firstErr: firstErr, window: time.Since(start), lat: lat}
}

// badgerOp returns the baseline's operation on db: one synced transaction
// of a 4 KiB value and a small key.
func badgerOp(db *badger.DB, cfg config) loadOp {
	gens := newTextGens(cfg.clients)
	return func(_ context.Context, w, i int) error {
		key := fmt.Appendf(nil, "d/%02d/%08d", w, i)
		val := gens[w].text(cfg.docSize)
		return db.Update(func(txn *badger.Txn) error {
			if err := txn.Set(key, val); err != nil {
				return err
			}
			return txn.Set(fmt.Appendf(nil, "p/%02d/%08d", w, i), key)
		})
	}
}

// createOp returns the operation of the creation benchmarks: POST
// /documents with cfg.docSize bytes of text; word, when it returns one,
// is put in front of the text.
func createOp(srv *server, cfg config, prefix string, word func() string, created func(word string)) loadOp {
	gens := newTextGens(cfg.clients)
	return func(ctx context.Context, w, i int) error {
		text := gens[w].text(cfg.docSize)
		var wd string
		if word != nil {
			wd = word()
			text = append([]byte(wd+" "), text[:len(text)-len(wd)-1]...)
		}
		body, err := json.Marshal(createRequest{
			Path:        fmt.Sprintf("bench/%s%02d/doc-%07d.txt", prefix, w, i),
			ContentType: "text/plain",
			Content:     string(text),
		})
		if err != nil {
			return err
		}
		resp, err := srv.request(ctx, http.MethodPost, "/documents", bytes.NewReader(body), int64(len(body)), "application/json")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if err := checkStatus(resp, http.StatusCreated); err != nil {
			return err
		}
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return err
		}
		if created != nil {
			created(wd)
		}
		return nil
	}
}

// quireCount creates n documents from cfg.clients clients.
func quireCount(ctx context.Context, srv *server, cfg config, n int) (loadResult, error) {
	res := runCount(ctx, cfg.clients, n, createOp(srv, cfg, "s", nil, nil))
	if err := ctx.Err(); err != nil {
		return res, err
	}
	return res, res.err()
}

// parallel runs fn(0..n-1) on workers goroutines and returns the first
// error (the others stop taking work).
func parallel(ctx context.Context, n, workers int, fn func(i int) error) error {
	var next atomic.Int64
	var once sync.Once
	var first error
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := fn(i); err != nil {
					once.Do(func() { first = err })
					next.Store(int64(n))
					return
				}
			}
		}()
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}

// createRequest is the body of POST /documents.
type createRequest struct {
	Path        string `json:"path"`
	ContentType string `json:"contentType"`
	Content     string `json:"content"`
}
