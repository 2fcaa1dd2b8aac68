package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/badger/v4"

	"quire/bench/internal/harness"
)

// The sustained-ingest and freshness benchmarks (go run ./bench
// -ingest-only runs them alone):
//
//   - sustained ingest: 64 clients create 30,000 documents of 4 KiB, long
//     enough for several memtable flushes and index merges, beside raw
//     Badger writing the same number of synced transactions; repeated
//     (-ingest-runs, default 3, each on a fresh server and a fresh Badger)
//     for the run-to-run spread;
//     Freshness is sampled during these runs too (as below), so the rows
//     say whether search keeps up at the rate the creates sustain;
//   - fulltext freshness: 64 clients create documents as fast as they can
//     for 60 s; every 250 ms one just-created document (its 201 received)
//     is polled by a word only it holds until /search finds it; when the
//     load stops, how long until the index queue is empty;
//   - burst (burstBench): 10 s of unthrottled creates from 64 clients on a
//     fresh server, beyond what the index takes: the peak index backlog
//     and lag, the drain after the last create against the rate indexed
//     during the burst, and every answer's status (does the index gate
//     refuse, or make creates wait?).
const (
	SustainedDocs      = 30000
	sustainedTarget    = 0.5                    // quire docs/s / badger txn/s
	sustainedP99Target = 250 * time.Millisecond // create p99 (issue 34)
	sustainedSpread    = 0.2                    // ±, of the median docs/s
	freshnessFor       = 60 * time.Second
	freshnessEvery     = 250 * time.Millisecond // one sampled document per period
	freshnessTarget    = time.Second            // sampled create-to-searchable p99
	lagZeroTarget      = time.Second            // load stopped → index queue empty
)

// ingestBench runs the sustained-ingest and freshness benchmarks.
// ingestBench runs the sustained-ingest and freshness benchmarks.
func (s *session) ingestBench(ctx context.Context) error {
	if err := s.sustainedBench(ctx); err != nil {
		return err
	}
	if err := s.freshnessBench(ctx); err != nil {
		return err
	}
	return s.burstBench(ctx)
}

// The sustained rows run without a site's default processing, with it, or
// both (-ingest-processing). Default processing (issue 46) must not slow
// the write path: OCR and FULLTEXT run in the pipeline after the create
// is acknowledged.
const (
	ProcBoth = "both"
	ProcOff  = "off"
	ProcOn   = "on"
)

// processingOn is the site's default processing of the "on" rows.
var processingOn = []string{"OCR", "FULLTEXT"}

// sustainedVariant is one server setup of the sustained rows and what
// its runs measured.
type sustainedVariant struct {
	label   string   // "" for the rows without default processing
	want    []string // processing.defaultActions set before the creates
	skip    string   // why the variant cannot be measured on this server
	applied []string // the actions a document created without any got
	qs      []harness.LoadResult
	fresh   []time.Duration // create to searchable, sampled in every run
	catchUp []time.Duration // index empty after the last create
	drain   []time.Duration // pipeline idle after the last create (on)
	cores   [][]float64
	peak    harness.ProcStatus
	idle    harness.ProcStatus
}

// sustainedBench alternates raw Badger and a fresh quire server per
// variant, each writing n documents, cfg.IngestRuns times.
func (s *session) sustainedBench(ctx context.Context) error {
	n, runs := SustainedDocs, max(s.Cfg.IngestRuns, 1)
	if s.Cfg.Quick {
		n = 6000
	}
	var vs []*sustainedVariant
	if s.Cfg.IngestProc != ProcOn {
		vs = append(vs, &sustainedVariant{want: []string{}})
	}
	if s.Cfg.IngestProc != ProcOff {
		vs = append(vs, &sustainedVariant{label: "default processing " + strings.Join(processingOn, ", "), want: processingOn})
	}
	var bs []harness.LoadResult
	for r := range runs {
		s.Logf("sustained ingest %d/%d: badger, %d goroutines, %d synced txns", r+1, runs, s.Cfg.Clients, n)
		dir := filepath.Join(s.Root, "badger-sustained")
		b, err := badgerCount(ctx, dir, s.Cfg, n)
		os.RemoveAll(dir)
		if err != nil {
			return fmt.Errorf("sustained baseline: %w", err)
		}
		bs = append(bs, b)
		// Every other run the variants go the other way round: the
		// machine's state after the baseline and the run before (page
		// cache, the disk's writeback) favours neither.
		order := slices.Clone(vs)
		if r%2 == 1 {
			slices.Reverse(order)
		}
		for _, v := range order {
			if v.skip != "" {
				continue
			}
			if err := s.sustainedRun(ctx, v, r, runs, n, b); err != nil {
				return err
			}
		}
	}
	var off *sustainedVariant
	for _, v := range vs {
		if v.skip != "" {
			s.Rep.NotMeasured(fmt.Sprintf("sustained create %d x %s docs, %s", n, harness.SizeName(int64(s.Cfg.DocSize)), v.label), v.skip)
			continue
		}
		s.addSustainedRows(v, bs, n, runs)
		if v.label == "" {
			off = v
			continue
		}
		if off != nil {
			on, was := median(rates(v.qs)), median(rates(off.qs))
			s.Rep.Rows = append(s.Rep.Rows, harness.Row{Name: "  sustained create, default processing on / off", Quire: fmt.Sprintf("%.0f docs/s", on),
				Baseline: fmt.Sprintf("%.0f docs/s", was), Ratio: fmt.Sprintf("%.2f", on/was), Target: "-", Status: "info"})
		}
	}
	s.Rep.Note("sustained baseline: Badger SyncWrites, default options, %d goroutines, %d txns of a 4 KiB value and a small key; spread = largest distance from the median", s.Cfg.Clients, n)
	return nil
}

// sustainedRun is run r of variant v: a fresh server, its site's default
// processing set as v asks (the first run checks that the server keeps
// and applies it, and marks v not measurable if not), n creates with
// freshness samples, then the index (and the pipeline) caught up.
func (s *session) sustainedRun(ctx context.Context, v *sustainedVariant, r, runs, n int, b harness.LoadResult) error {
	data := filepath.Join(s.Root, "sustained")
	srv, err := harness.StartServer(ctx, s.Cfg.Bin, data, filepath.Join(s.Root, "sustained.log"))
	if err != nil {
		return err
	}
	defer os.RemoveAll(data)
	defer srv.Stop()
	st, err := harness.SetProcessing(ctx, srv, "default", v.want, map[string]any{"contentType": "text/plain", "content": "default processing probe"})
	if err != nil {
		return srv.WithLog(err)
	}
	if ok, why := st.Measurable(); !ok {
		v.skip = why
		return nil
	}
	v.applied = st.Applied
	what := "quire"
	if v.label != "" {
		what += ", " + v.label
	}
	s.Logf("sustained ingest %d/%d: %s, %d clients, %d documents", r+1, runs, what, s.Cfg.Clients, n)
	v.idle = srv.RSS.Current()
	srv.RSS.ResetPeak()
	cpu := harness.StartCPU(srv.PID(), os.Getpid())
	fs := newFreshSampler(ctx, srv)
	q, err := quireCountSampled(ctx, srv, s.Cfg, n, fs)
	stopped := time.Now()
	v.cores = append(v.cores, cpu.Cores())
	if err == nil {
		var fr harness.LoadResult
		fr, err = fs.finish()
		v.fresh = append(v.fresh, fr.Lat...)
	}
	fs.cancel()
	if err == nil {
		var took time.Duration
		took, err = srv.WaitIndexed(ctx, 10*time.Minute)
		v.catchUp = append(v.catchUp, took)
	}
	if err == nil && len(v.applied) > 0 {
		_, err = harness.WaitPipelineIdle(ctx, srv, 30*time.Minute)
		v.drain = append(v.drain, time.Since(stopped))
	}
	v.peak = harness.MaxOf(v.peak, srv.RSS.ResetPeak())
	if err != nil {
		return srv.WithLog(fmt.Errorf("sustained quire: %w", err))
	}
	v.qs = append(v.qs, q)
	s.Logf("  quire %.0f docs/s p99 %s; badger %.0f txn/s; ratio %.2f", q.Rate(), harness.Millis(q.Percentile(0.99)), b.Rate(), q.Rate()/b.Rate())
	return nil
}

// addSustainedRows adds a variant's rows against the baselines bs.
func (s *session) addSustainedRows(v *sustainedVariant, bs []harness.LoadResult, n, runs int) {
	qs := v.qs
	with := ""
	if v.label != "" {
		with = ", " + v.label
	}
	qr, br := rates(qs), rates(bs)
	ratios := make([]float64, len(qr))
	for i := range qr {
		ratios[i] = qr[i] / br[i]
	}
	ratio := median(ratios)
	s.Rep.Rows = append(s.Rep.Rows, harness.Row{
		Name:     fmt.Sprintf("sustained create %d x %s docs, %d clients (median of %d)%s", n, harness.SizeName(int64(s.Cfg.DocSize)), s.Cfg.Clients, runs, with),
		Quire:    fmt.Sprintf("%.0f docs/s", median(qr)),
		Baseline: fmt.Sprintf("%.0f txn/s", median(br)),
		Ratio:    fmt.Sprintf("%.2f", ratio),
		Target:   fmt.Sprintf(">= %.1f", sustainedTarget),
		Status:   harness.Status(ratio >= sustainedTarget),
	})
	var qp99, bp99 time.Duration
	var qp50s, bp50s []float64
	for i := range qs {
		qp99, bp99 = max(qp99, qs[i].Percentile(0.99)), max(bp99, bs[i].Percentile(0.99))
		qp50s, bp50s = append(qp50s, qs[i].Percentile(0.5).Seconds()), append(bp50s, bs[i].Percentile(0.5).Seconds())
	}
	s.Rep.Rows = append(s.Rep.Rows, harness.Row{
		Name:     "  sustained create p50 (median run)" + with,
		Quire:    harness.Millis(time.Duration(median(qp50s) * float64(time.Second))),
		Baseline: harness.Millis(time.Duration(median(bp50s) * float64(time.Second))),
		Ratio:    fmt.Sprintf("%.2f", median(qp50s)/median(bp50s)),
		Target:   "-",
		Status:   "info",
	})
	s.Rep.Rows = append(s.Rep.Rows, harness.Row{
		Name:     "  sustained create p99 (worst run)" + with,
		Quire:    harness.Millis(qp99),
		Baseline: harness.Millis(bp99),
		Ratio:    fmt.Sprintf("%.2f", qp99.Seconds()/bp99.Seconds()),
		Target:   "< " + harness.Millis(sustainedP99Target),
		Status:   harness.Status(qp99 < sustainedP99Target),
	})
	sp := spread(qr)
	srow := harness.Row{Name: "  sustained run-to-run spread (docs/s)" + with, Quire: fmt.Sprintf("±%.0f%%", sp*100),
		Baseline: fmt.Sprintf("±%.0f%%", spread(br)*100), Ratio: "-", Target: fmt.Sprintf("±%.0f%%", sustainedSpread*100), Status: harness.Status(sp <= sustainedSpread)}
	if runs < 2 {
		srow.Quire, srow.Baseline, srow.Status = "n/a", "n/a", "info"
	}
	s.Rep.Rows = append(s.Rep.Rows, srow)
	fresh := slices.Sorted(slices.Values(v.fresh))
	fr := harness.LoadResult{Lat: fresh}
	s.Rep.Rows = append(s.Rep.Rows,
		harness.Row{Name: fmt.Sprintf("  sustained freshness p99 (%d sampled in all runs)%s", len(fresh), with), Quire: harness.Millis(fr.Percentile(0.99)), Baseline: "-", Ratio: "-",
			Target: "<= " + harness.Millis(freshnessTarget), Status: harness.Status(len(fresh) > 0 && fr.Percentile(0.99) <= freshnessTarget)},
		harness.Row{Name: "  sustained create to searchable p50" + with, Quire: harness.Millis(fr.Percentile(0.5)), Baseline: "-", Ratio: "-", Target: "-", Status: "info"},
	)
	if len(v.drain) > 0 {
		s.Rep.Rows = append(s.Rep.Rows, harness.Row{Name: "  pipeline idle after the last create (worst run)" + with, Quire: harness.Secs(slices.Max(v.drain)),
			Baseline: "-", Ratio: "-", Target: "-", Status: "info"})
	}
	s.Rep.AddAnon("server peak anonymous memory, sustained create"+with, v.idle, v.peak, harness.AnonTarget)
	for i := range qs {
		s.Rep.Note("sustained run %d%s: quire %.0f docs/s (p50 %s, p99 %s, %d errors, server %.2f cores, clients %.2f cores, index empty %.1fs after the last create); badger %.0f txn/s (p99 %s)",
			i+1, with, qr[i], harness.Millis(qs[i].Percentile(0.5)), harness.Millis(qs[i].Percentile(0.99)), qs[i].Errors, v.cores[i][0], v.cores[i][1], v.catchUp[i].Seconds(), br[i], harness.Millis(bs[i].Percentile(0.99)))
	}
	if v.label != "" {
		s.Rep.Note("sustained%s: the site's processing.defaultActions set to %s through PATCH /sites/default/configuration and read back; a document created without actions got %s; the creates name no actions, so each gets them (OCR skips text); the pipeline's drain is timed from the last create until /readyz shows no queued or running action",
			with, strings.Join(v.want, ", "), strings.Join(v.applied, ", "))
	}
}
func rates(rs []harness.LoadResult) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = r.Rate()
	}
	return out
}

// median returns the median of xs.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// spread returns the largest distance of xs from their median, as a
// fraction of it.
func spread(xs []float64) float64 {
	m := median(xs)
	if m == 0 {
		return 0
	}
	d := 0.0
	for _, x := range xs {
		d = max(d, math.Abs(x-m)/m)
	}
	return d
}

// badgerCount writes n baseline transactions into a new Badger in dir.
func badgerCount(ctx context.Context, dir string, cfg harness.Config, n int) (harness.LoadResult, error) {
	db, err := badger.Open(badger.DefaultOptions(dir).WithSyncWrites(true).WithLogger(nil))
	if err != nil {
		return harness.LoadResult{}, err
	}
	defer db.Close()
	res := harness.RunCount(ctx, cfg.Clients, n, harness.BadgerOp(db, cfg))
	if err := ctx.Err(); err != nil {
		return res, err
	}
	return res, res.Err()
}

// quireCountSampled is harness.QuireCount with freshness samples taken by fs.
func quireCountSampled(ctx context.Context, srv *harness.Server, cfg harness.Config, n int, fs *freshSampler) (harness.LoadResult, error) {
	res := harness.RunCount(ctx, cfg.Clients, n, harness.CreateOp(srv, cfg, "s", fs.word, fs.created))
	if err := ctx.Err(); err != nil {
		return res, err
	}
	return res, res.Err()
}

// freshnessBench loads a fresh server with creates for freshnessFor and
// samples how long created documents take to become searchable by text.
func (s *session) freshnessBench(ctx context.Context) error {
	dur := freshnessFor
	if s.Cfg.Quick {
		dur = 15 * time.Second
	}
	data := filepath.Join(s.Root, "freshness")
	defer os.RemoveAll(data)
	srv, err := harness.StartServer(ctx, s.Cfg.Bin, data, filepath.Join(s.Root, "freshness.log"))
	if err != nil {
		return err
	}
	defer srv.Stop()
	idle := srv.RSS.Current()
	srv.RSS.ResetPeak()
	s.Logf("fulltext freshness: %d clients creating for %s, a sample every %s", s.Cfg.Clients, dur, freshnessEvery)

	fs := newFreshSampler(ctx, srv)
	defer fs.cancel()
	cpu := harness.StartCPU(srv.PID(), os.Getpid())
	q := harness.RunLoad(ctx, s.Cfg.Clients, 0, dur, harness.CreateOp(srv, s.Cfg, "f", fs.word, fs.created))
	stopped := time.Now()
	c := cpu.Cores()
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := q.Err(); err != nil {
		return srv.WithLog(fmt.Errorf("freshness load: %w", err))
	}
	lagLeft, lagAtStop, err := waitLagZero(ctx, srv, stopped, 10*time.Minute)
	if err != nil {
		return srv.WithLog(err)
	}
	pr, err := fs.finish()
	if err != nil {
		return srv.WithLog(err)
	}
	p99 := pr.Percentile(0.99)
	s.Rep.Rows = append(s.Rep.Rows,
		harness.Row{Name: fmt.Sprintf("fulltext freshness p99, %s of creates (%d sampled)", dur, len(pr.Lat)), Quire: harness.Millis(p99), Baseline: "-", Ratio: "-",
			Target: "<= " + harness.Millis(freshnessTarget), Status: harness.Status(p99 <= freshnessTarget)},
		harness.Row{Name: "  create to searchable p50", Quire: harness.Millis(pr.Percentile(0.5)), Baseline: "-", Ratio: "-", Target: "-", Status: "info"},
		harness.Row{Name: "  index lag to 0 after the load stops", Quire: harness.Millis(lagLeft), Baseline: "-", Ratio: "-",
			Target: "<= " + harness.Millis(lagZeroTarget), Status: harness.Status(lagLeft <= lagZeroTarget)},
	)
	s.Rep.AddAnon("server peak anonymous memory, freshness", idle, srv.RSS.ResetPeak(), harness.AnonTarget)
	s.Rep.Note("freshness: %d documents created in %s (%.0f docs/s, p99 %s), server %.2f cores, clients %.2f cores; index lag %.1fs when the load stopped",
		q.Ops, dur, q.Rate(), harness.Millis(q.Percentile(0.99)), c[0], c[1], lagAtStop.Seconds())
	s.Rep.Note("freshness: create to searchable counts from the 201 of POST /documents until POST /search for a word only that document holds finds it (polled every 20 ms for 2 s, then every 200 ms); lag to 0 counts from the last create's answer until /readyz reports an empty index queue")
	return nil
}

// pollSearchable polls a text search for word until it finds a document;
// the latency counts from created.
func pollSearchable(ctx context.Context, srv *harness.Server, word string, created time.Time) (time.Duration, error) {
	deadline := created.Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		var out struct {
			Documents []json.RawMessage `json:"documents"`
		}
		if err := srv.DoJSON(ctx, http.MethodPost, "/search", map[string]any{"query": map[string]any{"text": word}}, http.StatusOK, &out); err != nil {
			return 0, err
		}
		if len(out.Documents) > 0 {
			return time.Since(created), nil
		}
		wait := 20 * time.Millisecond
		if time.Since(created) > 2*time.Second {
			wait = 200 * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(wait):
		}
	}
	return 0, fmt.Errorf("%s not searchable after 5 minutes", word)
}

// waitLagZero polls /readyz until the index queue is empty and returns
// how long after stopped that was, and the lag /readyz first reported.
func waitLagZero(ctx context.Context, srv *harness.Server, stopped time.Time, limit time.Duration) (took, lagAtStop time.Duration, err error) {
	first := true
	for time.Since(stopped) < limit {
		if err := srv.CheckAlive(); err != nil {
			return 0, 0, err
		}
		var body struct {
			Index struct {
				Queued     uint64  `json:"queued"`
				LagSeconds float64 `json:"lagSeconds"`
			} `json:"index"`
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.Base+"/readyz", nil)
		if resp, err := srv.Client.Do(req); err == nil {
			err := harness.JSONDecode(resp, &body)
			if err == nil {
				if first {
					first = false
					lagAtStop = time.Duration(body.Index.LagSeconds * float64(time.Second))
				}
				if body.Index.Queued == 0 {
					return time.Since(stopped), lagAtStop, nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return 0, 0, fmt.Errorf("index queue not empty %s after the load", limit)
}

// freshSampler samples create-to-searchable latency under a creation
// load: harness.CreateOp puts word() in front of each document's text, and every
// freshnessEvery one just-created document (its 201 received) is polled
// by that word until /search finds it.
type freshSampler struct {
	srv        *harness.Server
	ctx        context.Context
	cancel     context.CancelFunc
	seq        atomic.Int64
	lastSample atomic.Int64 // unix nanos of the last sampled create
	probes     sync.WaitGroup
	errc       chan error
	mu         sync.Mutex
	lat        []time.Duration
}

func newFreshSampler(ctx context.Context, srv *harness.Server) *freshSampler {
	f := &freshSampler{srv: srv, errc: make(chan error, 1)}
	f.ctx, f.cancel = context.WithCancel(ctx)
	return f
}

// word returns the next word only one document holds.
func (f *freshSampler) word() string { return fmt.Sprintf("qfr%09dz", f.seq.Add(1)) }

// created is harness.CreateOp's hook: it starts a probe at most every
// freshnessEvery.
func (f *freshSampler) created(w string) {
	now := time.Now()
	last := f.lastSample.Load()
	if now.UnixNano()-last < int64(freshnessEvery) || !f.lastSample.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	f.probes.Go(func() {
		d, err := pollSearchable(f.ctx, f.srv, w, now)
		if err != nil {
			select {
			case f.errc <- err:
			default:
			}
			return
		}
		f.mu.Lock()
		f.lat = append(f.lat, d)
		f.mu.Unlock()
	})
}

// finish waits for the probes and returns their latencies, sorted.
func (f *freshSampler) finish() (harness.LoadResult, error) {
	f.probes.Wait()
	select {
	case err := <-f.errc:
		return harness.LoadResult{}, fmt.Errorf("freshness probe: %w", err)
	default:
	}
	slices.Sort(f.lat)
	return harness.LoadResult{Lat: f.lat}, nil
}

// The burst benchmark: 64 clients create as fast as they can for
// burstFor on a fresh server, well beyond what the index takes (the
// sustained rows' creates are held to it by the index gate,
// server/indexgate.go). /readyz is sampled every burstSample for the
// index queue (changes not indexed, the batch in flight included) and the
// age of the oldest; after the burst, how long the queue takes to empty.
// Every answer's status is counted: the bound under test is that the gate
// holds the backlog to about its threshold by making creates wait, never
// by refusing them, and lets a create through after gateMaxWait (5 s).
const (
	burstFor        = 10 * time.Second
	burstSample     = 50 * time.Millisecond
	burstLagTarget  = 2 * time.Second // peak age of the oldest change not indexed
	burstWaitTarget = 5 * time.Second // longest create: the gate's gateMaxWait
)

// burstBench runs the burst benchmark.
func (s *session) burstBench(ctx context.Context) error {
	dur := burstFor
	if s.Cfg.Quick {
		dur = 5 * time.Second
	}
	data := filepath.Join(s.Root, "burst")
	defer os.RemoveAll(data)
	srv, err := harness.StartServer(ctx, s.Cfg.Bin, data, filepath.Join(s.Root, "burst.log"))
	if err != nil {
		return err
	}
	defer srv.Stop()
	s.Logf("burst: %d clients creating unthrottled for %s", s.Cfg.Clients, dur)

	type sample struct {
		at     time.Duration
		queued uint64
		lag    time.Duration
	}
	var samples []sample
	start := time.Now()
	mctx, mcancel := context.WithCancel(ctx)
	var mon sync.WaitGroup
	mon.Go(func() {
		for mctx.Err() == nil {
			q, lag, err := srv.IndexState(mctx)
			if err == nil {
				samples = append(samples, sample{time.Since(start), q, lag})
			}
			select {
			case <-mctx.Done():
			case <-time.After(burstSample):
			}
		}
	})
	var codeMu sync.Mutex
	codes := map[int]int{}
	retryAfter := 0
	gens := harness.NewTextGens(s.Cfg.Clients)
	op := func(ctx context.Context, w, i int) error {
		code, ra, err := createStatus(ctx, srv, gens[w].Text(s.Cfg.DocSize), w, i)
		if err != nil {
			return err
		}
		codeMu.Lock()
		codes[code]++
		if ra {
			retryAfter++
		}
		codeMu.Unlock()
		if code != http.StatusCreated {
			return fmt.Errorf("create answered %d", code)
		}
		return nil
	}
	cpu := harness.StartCPU(srv.PID(), os.Getpid())
	q := harness.RunLoad(ctx, s.Cfg.Clients, 0, dur, op)
	stopped := time.Now()
	c := cpu.Cores()
	if err := ctx.Err(); err != nil {
		mcancel()
		return err
	}
	queuedAtStop, lagAtStop, _ := srv.IndexState(ctx)
	drain, _, err := waitLagZero(ctx, srv, stopped, 10*time.Minute)
	mcancel()
	mon.Wait()
	if err != nil {
		return srv.WithLog(err)
	}
	var peakQ uint64
	var peakLag time.Duration
	for _, x := range samples {
		peakQ, peakLag = max(peakQ, x.queued), max(peakLag, x.lag)
	}
	created := 0
	for code, n := range codes {
		if code == http.StatusCreated {
			created += n
		}
	}
	// Index rate while the burst ran: what was created and not queued
	// at the end; drain rate: the queue at the end over the time to empty.
	indexRate := float64(created-int(min(queuedAtStop, uint64(created)))) / dur.Seconds()
	drainRate := math.NaN()
	if drain > 0 {
		drainRate = float64(queuedAtStop) / drain.Seconds()
	}
	maxLat := time.Duration(0)
	if len(q.Lat) > 0 {
		maxLat = q.Lat[len(q.Lat)-1]
	}
	codeList := ""
	for _, code := range slices.Sorted(maps.Keys(codes)) {
		codeList += fmt.Sprintf(" %d x%d", code, codes[code])
	}
	s.Rep.Rows = append(s.Rep.Rows,
		harness.Row{Name: fmt.Sprintf("burst: %d clients creating for %s, peak index lag", s.Cfg.Clients, dur), Quire: harness.Millis(peakLag), Baseline: "-", Ratio: "-",
			Target: "<= " + harness.Millis(burstLagTarget), Status: harness.Status(peakLag <= burstLagTarget)},
		harness.Row{Name: "  burst create p99 / longest", Quire: harness.Millis(q.Percentile(0.99)) + " / " + harness.Millis(maxLat), Baseline: "-", Ratio: "-",
			Target: "< " + harness.Millis(burstWaitTarget), Status: harness.Status(maxLat < burstWaitTarget)},
		harness.Row{Name: "  burst drain after the last create", Quire: harness.Millis(drain), Baseline: "-", Ratio: "-", Target: "-", Status: "info"},
		harness.Row{Name: "  burst answers other than 201", Quire: fmt.Sprint(q.Errors), Baseline: "-", Ratio: "-", Target: "0", Status: harness.Status(q.Errors == 0)},
	)
	s.Rep.Note("burst: %d documents created in %s (%.0f docs/s, p50 %s, p99 %s, longest %s), server %.2f cores, clients %.2f cores; answers:%s (%d with Retry-After)",
		created, dur, q.Rate(), harness.Millis(q.Percentile(0.5)), harness.Millis(q.Percentile(0.99)), harness.Millis(maxLat), c[0], c[1], codeList, retryAfter)
	s.Rep.Note("burst: peak index queue %d changes, peak lag %s (sampled every %s); at the last create %d queued, lag %s; drained in %s: %.0f docs/s against %.0f docs/s indexed while the burst ran",
		peakQ, harness.Millis(peakLag), burstSample, queuedAtStop, harness.Millis(lagAtStop), harness.Millis(drain), drainRate, indexRate)
	return nil
}

// createStatus is harness.CreateOp returning the answer's status and whether it
// carried Retry-After, instead of failing on a status other than 201.
func createStatus(ctx context.Context, srv *harness.Server, text []byte, w, i int) (int, bool, error) {
	body, err := json.Marshal(harness.CreateRequest{
		Path:        fmt.Sprintf("bench/b%02d/doc-%07d.txt", w, i),
		ContentType: "text/plain",
		Content:     string(text),
	})
	if err != nil {
		return 0, false, err
	}
	resp, err := srv.Request(ctx, http.MethodPost, "/documents", bytes.NewReader(body), int64(len(body)), "application/json")
	if err != nil {
		return 0, false, err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After") != "", nil
}
