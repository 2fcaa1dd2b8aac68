package ingest

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/badger/v4"

	"quire/bench/internal/harness"
)

// pipelineDocs is how many documents the pipeline benchmark creates, each
// with a CHECKSUM and a FULLTEXT action.
const (
	pipelineDocs    = 2000
	pipelineClients = 16  // concurrent creators
	latencySample   = 100 // every 100th document is timed until searchable
)

// pipelineTarget is the lowest acceptable quire actions/s / badger
// actions/s (issue 14).
const pipelineTarget = 0.5

// badgerCreateN is the baseline of the creation rate while the pipeline
// runs: n synced transactions of one 4 KiB document record and a small
// index key, from as many goroutines as the benchmark has creators.
func badgerCreateN(ctx context.Context, dir string, clients, n, size int) (float64, error) {
	db, err := badger.Open(badger.DefaultOptions(dir).WithSyncWrites(true).WithLogger(nil))
	if err != nil {
		return 0, err
	}
	defer db.Close()
	gens := harness.NewTextGens(clients)
	var next atomic.Int64
	var wg sync.WaitGroup
	var firstErr atomic.Value
	start := time.Now()
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				key := fmt.Appendf(nil, "d/%08d", i)
				val := gens[c].Text(size)
				if err := db.Update(func(txn *badger.Txn) error {
					if err := txn.Set(key, val); err != nil {
						return err
					}
					return txn.Set(fmt.Appendf(nil, "p/%08d", i), key)
				}); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
			}
		}(c)
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		return 0, err
	}
	return float64(n) / time.Since(start).Seconds(), ctx.Err()
}

// badgerActions is the pipeline's baseline: the durable minimum of running
// one action with the same parallelism as quire's workers — read the
// document, hash it, and commit two synced transactions (start, finish).
func badgerActions(ctx context.Context, dir string, n int) (float64, error) {
	db, err := badger.Open(badger.DefaultOptions(dir).WithSyncWrites(true).WithLogger(nil))
	if err != nil {
		return 0, err
	}
	defer db.Close()
	gen := harness.NewTextGens(1)[0]
	for i := 0; i < n; i++ {
		if err := db.Update(func(txn *badger.Txn) error { return txn.Set(fmt.Appendf(nil, "d/%06d", i), gen.Text(4<<10)) }); err != nil {
			return 0, err
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var firstErr atomic.Value
	start := time.Now()
	for w := 0; w < harness.PipelineWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				key := fmt.Appendf(nil, "d/%06d", i)
				for step := 0; step < 2; step++ {
					err := db.Update(func(txn *badger.Txn) error {
						item, err := txn.Get(key)
						if err != nil {
							return err
						}
						v, err := item.ValueCopy(nil)
						if err != nil {
							return err
						}
						sum := sha256.Sum256(v)
						return txn.Set(fmt.Appendf(nil, "a/%06d", i), sum[:])
					})
					if err != nil {
						firstErr.CompareAndSwap(nil, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		return 0, err
	}
	return float64(n) / time.Since(start).Seconds(), ctx.Err()
}

// pipelineBench creates documents with CHECKSUM and FULLTEXT actions,
// measures actions/s until the pipeline is idle, and times sampled
// documents from their creation until a search for a word only they hold
// finds them.
func (s *session) pipelineBench(ctx context.Context) error {
	n := pipelineDocs
	if s.Cfg.Quick {
		n = 400
	}
	s.Logf("pipeline baseline: badger, %d workers, %d actions", harness.PipelineWorkers, 2*n)
	bdir := filepath.Join(s.Root, "badger-actions")
	base, err := badgerActions(ctx, bdir, 2*n)
	os.RemoveAll(bdir)
	if err != nil {
		return fmt.Errorf("pipeline baseline: %w", err)
	}
	s.Logf("create baseline: badger, %d goroutines, %d transactions", pipelineClients, n)
	cdir := filepath.Join(s.Root, "badger-creates")
	createBase, err := badgerCreateN(ctx, cdir, pipelineClients, n, 4<<10)
	os.RemoveAll(cdir)
	if err != nil {
		return fmt.Errorf("create baseline: %w", err)
	}
	srv, err := harness.StartServer(ctx, s.Cfg.Bin, filepath.Join(s.Root, "pipeline"), filepath.Join(s.Root, "pipeline.log"))
	if err != nil {
		return err
	}
	defer srv.Stop()
	idle := srv.RSS.Current()
	srv.RSS.ResetPeak()
	s.Logf("quire pipeline: %d documents with CHECKSUM and FULLTEXT", n)
	gen := harness.NewTextGens(pipelineClients)
	var next atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	var wg, probes sync.WaitGroup
	errc := make(chan error, pipelineClients+n/latencySample+1)
	ids := make([]string, n)
	start := time.Now()
	for c := 0; c < pipelineClients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				word := fmt.Sprintf("qtok%06dz", i)
				body := map[string]any{"path": fmt.Sprintf("pipeline/doc-%06d.txt", i), "contentType": "text/plain",
					"content": word + " " + string(gen[c].Text(4<<10)),
					"actions": []map[string]any{{"type": "CHECKSUM", "parameters": map[string]any{"checksumType": "SHA256"}}, {"type": "FULLTEXT"}}}
				created := time.Now()
				var resp struct {
					DocumentID string `json:"documentId"`
				}
				if err := srv.DoJSON(ctx, http.MethodPost, "/documents", body, http.StatusCreated, &resp); err != nil {
					errc <- err
					return
				}
				ids[i] = resp.DocumentID
				if i%latencySample == 0 {
					probes.Add(1)
					go func() {
						defer probes.Done()
						d, err := waitSearchable(ctx, srv, word, created)
						if err != nil {
							errc <- err
							return
						}
						mu.Lock()
						lat = append(lat, d)
						mu.Unlock()
					}()
				}
			}
		}(c)
	}
	wg.Wait()
	createdIn := time.Since(start)
	_, err = harness.WaitPipelineIdle(ctx, srv, 10*time.Minute)
	if err != nil {
		return srv.WithLog(err)
	}
	took := time.Since(start)
	probes.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return srv.WithLog(err)
	}
	rate := float64(2*n) / took.Seconds()
	s.Rep.Rows = append(s.Rep.Rows, harness.Row{
		Name:     fmt.Sprintf("pipeline CHECKSUM+FULLTEXT, %d docs", n),
		Quire:    fmt.Sprintf("%.0f actions/s", rate),
		Baseline: fmt.Sprintf("%.0f actions/s", base),
		Ratio:    fmt.Sprintf("%.2f", rate/base),
		Target:   fmt.Sprintf(">= %.1f", pipelineTarget),
		Status:   harness.Status(rate/base >= pipelineTarget),
	})
	createRate := float64(n) / createdIn.Seconds()
	s.Rep.Rows = append(s.Rep.Rows, harness.Row{
		Name:     fmt.Sprintf("  create while the pipeline runs, %d clients", pipelineClients),
		Quire:    fmt.Sprintf("%.0f docs/s", createRate),
		Baseline: fmt.Sprintf("%.0f txn/s", createBase),
		Ratio:    fmt.Sprintf("%.2f", createRate/createBase),
		Target:   fmt.Sprintf(">= %.1f", harness.CreateTarget),
		Status:   harness.Status(createRate/createBase >= harness.CreateTarget),
	})
	// The same actions once more on the same documents, added by the same
	// clients: adding actions costs the server a small commit and no
	// indexing, so this is the pipeline's own rate, apart from ingest.
	s.Logf("quire pipeline alone: CHECKSUM and FULLTEXT added to %d existing documents", n)
	next.Store(0)
	errc2 := make(chan error, pipelineClients)
	again := time.Now()
	for c := 0; c < pipelineClients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				body := map[string]any{"actions": []map[string]any{{"type": "CHECKSUM", "parameters": map[string]any{"checksumType": "SHA256"}}, {"type": "FULLTEXT"}}}
				if err := srv.DoJSON(ctx, http.MethodPost, "/documents/"+ids[i]+"/actions", body, http.StatusOK, nil); err != nil {
					errc2 <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	addedIn := time.Since(again)
	close(errc2)
	if err := <-errc2; err != nil {
		return srv.WithLog(err)
	}
	if _, err := harness.WaitPipelineIdle(ctx, srv, 10*time.Minute); err != nil {
		return srv.WithLog(err)
	}
	alone := float64(2*n) / time.Since(again).Seconds()
	s.Rep.Rows = append(s.Rep.Rows, harness.Row{
		Name:     "  pipeline alone (actions added to those documents)",
		Quire:    fmt.Sprintf("%.0f actions/s", alone),
		Baseline: fmt.Sprintf("%.0f actions/s", base),
		Ratio:    fmt.Sprintf("%.2f", alone/base),
		Target:   "-",
		Status:   "info",
	})
	s.Rep.Note("pipeline alone: the same two actions added to each of the %d documents by %d clients in %.1fs (one small commit each, nothing to index); actions/s until the pipeline was idle again", n, pipelineClients, addedIn.Seconds())
	sort.Slice(lat, func(a, b int) bool { return lat[a] < lat[b] })
	pct := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(p*float64(len(lat))))]
	}
	for _, p := range []float64{0.5, 0.99} {
		s.Rep.Rows = append(s.Rep.Rows, harness.Row{
			Name:     fmt.Sprintf("create to searchable p%.0f (%d sampled)", p*100, len(lat)),
			Quire:    harness.Millis(pct(p)),
			Baseline: "-", Ratio: "-", Target: "-", Status: "info",
		})
	}
	s.Rep.AddAnon("server peak anonymous memory, pipeline", idle, srv.RSS.ResetPeak(), harness.AnonTarget)
	s.Rep.Note("pipeline: %d documents created in %.1fs by %d clients; all %d actions done %.1fs after the first create", n, createdIn.Seconds(), pipelineClients, 2*n, took.Seconds())
	s.Rep.Note("pipeline baseline: Badger with SyncWrites, %d goroutines, per action: read a 4 KiB value, hash it, two synced transactions (the durable minimum of recording an action's start and its outcome apart)", harness.PipelineWorkers)
	s.Rep.Note("create while the pipeline runs: the %d documents with actions over the time their creation took (%d clients, the pipeline working meanwhile); baseline: Badger with SyncWrites writing %d transactions of a 4 KiB value and a small key from %d goroutines", n, pipelineClients, n, pipelineClients)
	s.Rep.Note("create to searchable: from the 201 of POST /documents until POST /search with a word only that document holds finds it (polled every 50 ms)")
	return nil
}

// waitSearchable polls a fulltext search for word until it finds a
// document; the latency counts from created.
func waitSearchable(ctx context.Context, srv *harness.Server, word string, created time.Time) (time.Duration, error) {
	deadline := created.Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		var out struct {
			Documents []map[string]any `json:"documents"`
		}
		if err := srv.DoJSON(ctx, http.MethodPost, "/search", map[string]any{"query": map[string]any{"text": word}}, http.StatusOK, &out); err != nil {
			return 0, err
		}
		if len(out.Documents) > 0 {
			return time.Since(created), nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return 0, fmt.Errorf("%s not searchable after 5 minutes", word)
}
