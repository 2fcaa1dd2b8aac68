package harness

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

// LoadOp is one operation of a load: worker w's i-th.
type LoadOp func(ctx context.Context, w, i int) error

// LoadResult is what a timed closed-loop load measured.
type LoadResult struct {
	Ops      int             // operations completed inside the window
	Errors   int             // failed operations over the whole run
	FirstErr error           // the first failure, for the report
	Window   time.Duration   // length of the measured window
	Lat      []time.Duration // latencies of the counted operations, sorted
}

// Rate returns operations per second inside the window.
func (r LoadResult) Rate() float64 { return float64(r.Ops) / r.Window.Seconds() }

// Percentile returns the p-th (0..1) latency percentile, nearest rank.
func (r LoadResult) Percentile(p float64) time.Duration {
	if len(r.Lat) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(r.Lat)))) - 1
	return r.Lat[min(max(i, 0), len(r.Lat)-1)]
}

// Err returns an error if the load failed often enough to be meaningless.
func (r LoadResult) Err() error {
	switch {
	case r.Errors >= maxLoadErrors:
		return fmt.Errorf("aborted after %d errors, first: %w", r.Errors, r.FirstErr)
	case r.Ops == 0 && r.FirstErr != nil:
		return fmt.Errorf("no operation succeeded: %w", r.FirstErr)
	case r.Ops == 0:
		return fmt.Errorf("no operation completed in %s", r.Window)
	}
	return nil
}

// RunLoad runs op in a closed loop on workers goroutines for warmup+window
// and counts the operations that complete inside the window (the last
// warmup-free stretch). Workers start no operation after the window ends;
// operations in flight then finish but do not count.
func RunLoad(ctx context.Context, workers int, warmup, window time.Duration, op LoadOp) LoadResult {
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
	return LoadResult{Ops: len(w.lat), Errors: int(w.errors.Load()), FirstErr: w.firstErr, Window: window, Lat: w.lat}
}

// loadWindow is the state the workers of one RunLoad share.
type loadWindow struct {
	from, until time.Time
	cancel      context.CancelFunc // ends the load after maxLoadErrors
	errors      atomic.Int64

	mu       sync.Mutex
	lat      []time.Duration
	firstErr error
}

// work is one worker's loop, bounded by the window's end.
func (w *loadWindow) work(ctx context.Context, id int, op LoadOp) {
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

// RunCount runs op on workers goroutines until n operations have
// succeeded (or failed past maxLoadErrors); its window is the whole run.
func RunCount(ctx context.Context, workers, n int, op LoadOp) LoadResult {
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
	return LoadResult{Ops: len(lat), Errors: int(errs.Load()), FirstErr: firstErr, Window: time.Since(start), Lat: lat}
}

// BadgerOp returns the baseline's operation on db: one synced transaction
// of a 4 KiB value and a small key.
func BadgerOp(db *badger.DB, cfg Config) LoadOp {
	gens := NewTextGens(cfg.Clients)
	return func(_ context.Context, w, i int) error {
		key := fmt.Appendf(nil, "d/%02d/%08d", w, i)
		val := gens[w].Text(cfg.DocSize)
		return db.Update(func(txn *badger.Txn) error {
			if err := txn.Set(key, val); err != nil {
				return err
			}
			return txn.Set(fmt.Appendf(nil, "p/%02d/%08d", w, i), key)
		})
	}
}

// CreateOp returns the operation of the creation benchmarks: POST
// /documents with cfg.DocSize bytes of text; word, when it returns one,
// is put in front of the text.
func CreateOp(srv *Server, cfg Config, prefix string, word func() string, created func(word string)) LoadOp {
	gens := NewTextGens(cfg.Clients)
	return func(ctx context.Context, w, i int) error {
		text := gens[w].Text(cfg.DocSize)
		var wd string
		if word != nil {
			wd = word()
			text = append([]byte(wd+" "), text[:len(text)-len(wd)-1]...)
		}
		body, err := json.Marshal(CreateRequest{
			Path:        fmt.Sprintf("bench/%s%02d/doc-%07d.txt", prefix, w, i),
			ContentType: "text/plain",
			Content:     string(text),
		})
		if err != nil {
			return err
		}
		resp, err := srv.Request(ctx, http.MethodPost, "/documents", bytes.NewReader(body), int64(len(body)), "application/json")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if err := CheckStatus(resp, http.StatusCreated); err != nil {
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

// QuireCount creates n documents from cfg.clients clients.
func QuireCount(ctx context.Context, srv *Server, cfg Config, n int) (LoadResult, error) {
	res := RunCount(ctx, cfg.Clients, n, CreateOp(srv, cfg, "s", nil, nil))
	if err := ctx.Err(); err != nil {
		return res, err
	}
	return res, res.Err()
}

// Parallel runs fn(0..n-1) on workers goroutines and returns the first
// error (the others stop taking work).
func Parallel(ctx context.Context, n, workers int, fn func(i int) error) error {
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

// CreateRequest is the body of POST /documents.
type CreateRequest struct {
	Path        string `json:"path"`
	ContentType string `json:"contentType"`
	Content     string `json:"content"`
}
