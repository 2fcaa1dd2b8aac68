package search

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"quire/bench/internal/harness"
)

// The scale benchmark (go run ./bench -scale-only, issue 34): the search
// corpus at a million documents (-scale-docs), kept between runs in
// -scale-data, served by a server inside a memory cgroup, one row per
// limit (-scale-limits, MiB, 0 for none: the unlimited row every other
// row is compared with). A row:
//
//  1. drops the corpus from the page cache (a page already cached is
//     charged to whoever read it first, not to the row's cgroup), starts
//     the server in a fresh cgroup with the limit, runs the rare-word
//     queries once on the cold cache (firstPass, reported apart), then
//     every query type of the search benchmark for the search window,
//     8 clients: p50/p99, and the cgroup's major page faults per query;
//  2. with -scale-reindex, copies the corpus's Badger directory aside and
//     times quire reindex of it inside the limit;
//  3. starts a server on an empty data directory inside the limit and
//     creates -scale-ingest documents (64 clients, 4 KiB each) through the
//     API, until the index has caught up: the ingest rate;
//
// and reports the cgroup's OOM kills over all three (must be 0) and its
// peak charged memory, split into anonymous pages (the server's own:
// heap, stacks) and page cache (mapped and read files, reclaimable).
const (
	scaleQueryTarget = 50 * time.Millisecond
	scaleIngestRatio = 0.8
	scaleReindexMax  = 10 * time.Minute
	scaleGoalLimit   = 512 // MiB: the row the goals apply to
)

// scaleRow is what one limit measured.
type scaleRow struct {
	limit    int64 // MiB, 0 for none
	err      error // why the row is incomplete
	p50, p99 map[string]time.Duration
	faults   map[string]float64 // major page faults per query
	qps      map[string]float64
	ingest   float64 // docs/s
	ingestP  time.Duration
	reindex  time.Duration
	ooms     uint64
	peak     harness.CgroupStat // over the whole row
	queryPk  harness.CgroupStat // over the queries
	ingestPk harness.CgroupStat
	reindxPk harness.CgroupStat
	// segments is the index's state when the queries began, after
	// mergeWait waiting for the idle merge.
	segments  segmentState
	mergeWait time.Duration
}

// scaleBench runs the scale rows.
func (s *session) scaleBench(ctx context.Context) error {
	n := s.Cfg.ScaleDocs
	window := 5 * time.Second
	if s.Cfg.Quick {
		window = 2 * time.Second
	}
	c := newCorpus()
	base := s.Cfg.ScaleData
	if base == "" {
		base = filepath.Join(s.Root, "scale")
	}
	dataDir := filepath.Join(base, fmt.Sprintf("docs-%d", n))
	if err := os.MkdirAll(base, 0o755); err != nil {
		return err
	}
	lock, err := lockCorpus(dataDir + ".lock")
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := s.scaleCorpus(ctx, c, dataDir, n); err != nil {
		return err
	}
	if s.Cfg.ScaleLoad {
		return nil
	}
	var rows []*scaleRow
	for _, lim := range s.Cfg.ScaleLimits {
		if b, err := os.ReadFile("/proc/loadavg"); err == nil {
			s.Rep.Note("scale %s: load average at the start of the row %s (the machine's other work competes for its cores: compare a row with the unlimited row of the same run)", limitName(lim), strings.Join(strings.Fields(string(b))[:3], " "))
		}
		r := &scaleRow{limit: lim, p50: map[string]time.Duration{}, p99: map[string]time.Duration{}, faults: map[string]float64{}, qps: map[string]float64{}}
		rows = append(rows, r)
		r.err = s.scaleRow(ctx, c, dataDir, window, r)
		if r.err != nil {
			s.Logf("scale: row %s: %v", limitName(lim), r.err)
		}
		if ctx.Err() != nil {
			break
		}
	}
	addScale(s.Rep, s.Cfg, n, rows)
	var errs []error
	if ctx.Err() == nil {
		if err := s.scaleDigest(ctx, dataDir, n); err != nil {
			errs = append(errs, fmt.Errorf("scale replica digest: %w", err))
		}
	}
	for _, r := range rows {
		if r.err != nil {
			errs = append(errs, fmt.Errorf("scale row %s: %w", limitName(r.limit), r.err))
		}
	}
	return errors.Join(errs...)
}

// scaleCorpus loads n documents into dataDir and indexes them, unless a
// previous run did (marker files scale-loaded and scale-indexed).
func (s *session) scaleCorpus(ctx context.Context, c *corpus, dataDir string, n int) error {
	loaded, indexed := filepath.Join(dataDir, "scale-loaded"), filepath.Join(dataDir, "scale-indexed")
	if !harness.FileExists(loaded) {
		// An interrupted load is resumed (loadCorpus finds where it
		// stopped), not started over.
		if err := os.MkdirAll(dataDir, 0o755); err != nil {
			return err
		}
		s.Logf("scale: loading %d documents into %s", n, dataDir)
		t0 := time.Now()
		if err := loadCorpus(ctx, dataDir, c, n); err != nil {
			return fmt.Errorf("load corpus: %w", err)
		}
		s.Rep.Note("scale: %d documents loaded into %s in %s", n, dataDir, time.Since(t0).Round(time.Second))
		if err := os.WriteFile(loaded, nil, 0o644); err != nil {
			return err
		}
	} else {
		s.Rep.Note("scale: %d documents reused from %s", n, dataDir)
	}
	if harness.FileExists(indexed) {
		return nil
	}
	s.Logf("scale: indexing %d documents (quire reindex, no limit)", n)
	t0 := time.Now()
	if out, err := exec.CommandContext(ctx, s.Cfg.Bin, "reindex", "--data-dir", dataDir).CombinedOutput(); err != nil {
		return fmt.Errorf("quire reindex: %w: %s", err, harness.Tail(out))
	}
	s.Rep.Note("scale: corpus indexed (quire reindex, outside any cgroup) in %s", time.Since(t0).Round(time.Second))
	return os.WriteFile(indexed, nil, 0o644)
}

// limitName names a row.
func limitName(mib int64) string {
	if mib == 0 {
		return "unlimited"
	}
	return fmt.Sprintf("%d MiB", mib)
}

// scaleRow runs one row in a cgroup of its own.
func (s *session) scaleRow(ctx context.Context, c *corpus, dataDir string, window time.Duration, r *scaleRow) error {
	name := fmt.Sprintf("quire-bench-%d-%s", os.Getpid(), strings.ReplaceAll(limitName(r.limit), " ", ""))
	cg, err := harness.NewCgroup(name, r.limit<<20)
	if err != nil {
		return err
	}
	defer func() {
		if err := cg.Remove(); err != nil {
			s.Logf("scale: %v", err)
		}
	}()
	defer func() {
		if st, err := cg.Stat(); err == nil {
			r.ooms = st.OOMKills
		}
		r.peak.Anon = max(r.queryPk.Anon, r.reindxPk.Anon, r.ingestPk.Anon)
		r.peak.File = max(r.queryPk.File, r.reindxPk.File, r.ingestPk.File)
		r.peak.Usage = max(r.queryPk.Usage, r.reindxPk.Usage, r.ingestPk.Usage)
	}()
	env := s.Cfg.ServerEnv
	pprofAt := ""
	if s.Cfg.ScaleProfile != "" {
		port, err := harness.FreePort()
		if err != nil {
			return err
		}
		pprofAt = fmt.Sprintf("127.0.0.1:%d", port)
		env = append(slices.Clip(env), "QUIRE_PPROF="+pprofAt)
	}
	opts := harness.ServerOpts{Cgroup: cg, Env: env, Ready: scaleReady}

	// 1. Queries over the corpus.
	if err := dropCache(dataDir); err != nil {
		return fmt.Errorf("drop the corpus's page cache: %w", err)
	}
	cg.ResetPeak()
	s.Logf("scale %s: queries", limitName(r.limit))
	srv, err := harness.StartServerWith(ctx, s.Cfg.Bin, dataDir, filepath.Join(s.Root, "scale.log"), opts)
	if err != nil {
		return err
	}
	s.Rep.Note("scale %s: the server answered %s after it started on the corpus (page cache dropped)", limitName(r.limit), srv.ReadyIn.Round(100*time.Millisecond))
	err = s.scaleQueries(ctx, srv, cg, c, window, pprofAt, r)
	if err == nil {
		err = srv.CheckAlive()
	}
	if err != nil {
		err = srv.WithLog(err)
	}
	srv.Stop()
	r.queryPk = cg.ResetPeak()
	if err != nil {
		return err
	}

	// 2. Reindex of a copy of the corpus.
	if s.Cfg.ScaleReindex {
		if err := s.scaleReindex(ctx, cg, dataDir, r); err != nil {
			return err
		}
	}

	// 3. Ingest into an empty server.
	if s.Cfg.ScaleIngest <= 0 {
		return nil
	}
	return s.scaleIngest(ctx, opts, r)
}

// scaleReady bounds the wait for a scale row's server to answer: before
// it serves, a single server sweeps the chunks of interrupted uploads in
// one pass over the chunk keys, 14–36 s at a million documents in 512 MiB
// with a cold page cache (storage/DESIGN.md, "Counting at a million").
const scaleReady = 5 * time.Minute

// firstPass is the scale rows' first query phase: the rare-word /search
// queries of the measured phase after it, the same words in the same
// order, on the cache the start left. Each phase's warm-up is a second;
// inside a memory limit on a disk with a large read-around, the first
// queries over a million documents need longer to page their postings in
// (storage/DESIGN.md, "Read-around" and "The first queries after a
// start"), and every later rare-word phase runs the same words. Without it
// the first measured phase alone paid for that, so /search and
// /searchFulltext, doing the same work, were measured on different caches.
// Its figures are reported, not held to the goal: they are what the first
// seconds of rare-word queries after a cold start cost.
const firstPass = "rare word, first pass after the start"

// scaleQueryList is what a scale row runs: the first pass, then every
// query type of the search benchmark.
func scaleQueryList(srv *harness.Server, c *corpus) (func(path string) harness.LoadOp, []searchQuery) {
	get, queries := searchQueries(srv, c)
	for _, q := range queries {
		if q.name == "fulltext word" {
			return get, append([]searchQuery{{name: firstPass, op: q.op}}, queries...)
		}
	}
	return get, queries
}

// scaleQueries runs every query type against srv.
func (s *session) scaleQueries(ctx context.Context, srv *harness.Server, cg *harness.Cgroup, c *corpus, window time.Duration, pprofAt string, r *scaleRow) error {
	get, queries := scaleQueryList(srv, c)
	// The segments the idle merge leaves, not those of the last load.
	var err error
	r.segments, r.mergeWait, err = waitIdleMerge(ctx, srv, func(f string, a ...any) { s.Logf("scale %s: "+f, append([]any{limitName(r.limit)}, a...)...) })
	if err != nil {
		return err
	}
	s.Logf("scale %s: index segments %s after %s waiting for the idle merge and warm pass", limitName(r.limit), r.segments, r.mergeWait.Round(time.Second))
	// The HTTP floor, which also brings the server up to speed.
	if res := harness.RunLoad(ctx, searchClients, time.Second, window, get("/healthz")); res.Err() != nil {
		return fmt.Errorf("healthz load: %w", res.Err())
	}
	for _, q := range queries {
		s.Logf("scale %s: %s", limitName(r.limit), q.name)
		st0, err := cg.Stat()
		if err != nil {
			return err
		}
		prof := make(chan error, 1)
		if pprofAt != "" {
			f := filepath.Join(s.Cfg.ScaleProfile, strings.ReplaceAll(fmt.Sprintf("%s-%s.cpu", limitName(r.limit), q.name), " ", "-"))
			go func() { prof <- harness.CPUProfile(ctx, pprofAt, window, f) }()
		} else {
			prof <- nil
		}
		res := harness.RunLoad(ctx, searchClients, time.Second, window, q.op)
		if err := errors.Join(res.Err(), <-prof); err != nil {
			return fmt.Errorf("%s: %w", q.name, err)
		}
		st1, err := cg.Stat()
		if err != nil {
			return err
		}
		r.p50[q.name], r.p99[q.name] = res.Percentile(0.50), res.Percentile(0.99)
		r.qps[q.name] = res.Rate()
		// The faults of the warm-up second count too: divide by every
		// query of the phase, not only the window's.
		all := res.Ops + int(res.Rate()*time.Second.Seconds())
		r.faults[q.name] = float64(st1.MajFault-st0.MajFault) / float64(max(all, 1))
	}
	return nil
}

// scaleReindex times quire reindex of a copy of the corpus's documents
// inside cg.
func (s *session) scaleReindex(ctx context.Context, cg *harness.Cgroup, dataDir string, r *scaleRow) error {
	scratch := filepath.Join(scaleScratch(s.Cfg, s.Root), "reindex")
	defer os.RemoveAll(scratch)
	os.RemoveAll(scratch)
	if err := os.MkdirAll(scratch, 0o755); err != nil {
		return err
	}
	s.Logf("scale %s: copying the documents for the reindex", limitName(r.limit))
	if out, err := exec.CommandContext(ctx, "cp", "-r", filepath.Join(dataDir, "db"), filepath.Join(scratch, "db")).CombinedOutput(); err != nil {
		return fmt.Errorf("copy the corpus: %w: %s", err, harness.Tail(out))
	}
	if err := dropCache(scratch); err != nil {
		return err
	}
	cg.ResetPeak()
	s.Logf("scale %s: reindex", limitName(r.limit))
	t0 := time.Now()
	out, err := cg.Command(ctx, s.Cfg.Bin, "reindex", "--data-dir", scratch).CombinedOutput()
	r.reindex = time.Since(t0)
	r.reindxPk = cg.ResetPeak()
	if err != nil {
		r.reindex = 0
		return fmt.Errorf("quire reindex: %w: %s", err, harness.Tail(out))
	}
	return nil
}

// scaleScratch is where a row's copies go: beside the kept corpus, on
// the same disk.
func scaleScratch(c harness.Config, root string) string {
	if c.ScaleData != "" {
		return filepath.Join(c.ScaleData, "scratch")
	}
	return root
}

// scaleIngest creates cfg.ScaleIngest documents in an empty server
// inside the row's cgroup.
func (s *session) scaleIngest(ctx context.Context, opts harness.ServerOpts, r *scaleRow) error {
	data := filepath.Join(scaleScratch(s.Cfg, s.Root), "ingest")
	os.RemoveAll(data)
	defer os.RemoveAll(data)
	opts.Cgroup.ResetPeak()
	s.Logf("scale %s: ingest of %d documents", limitName(r.limit), s.Cfg.ScaleIngest)
	srv, err := harness.StartServerWith(ctx, s.Cfg.Bin, data, filepath.Join(s.Root, "scale-ingest.log"), opts)
	if err != nil {
		return err
	}
	defer srv.Stop()
	q, err := harness.QuireCount(ctx, srv, s.Cfg, s.Cfg.ScaleIngest)
	if err == nil {
		_, err = srv.WaitIndexed(ctx, 10*time.Minute)
	}
	if err == nil {
		err = srv.CheckAlive()
	}
	if err != nil {
		return srv.WithLog(fmt.Errorf("ingest: %w", err))
	}
	r.ingest, r.ingestP = q.Rate(), q.Percentile(0.99)
	srv.Stop()
	r.ingestPk = opts.Cgroup.ResetPeak()
	return nil
}

// addScale adds the scale benchmark's rows: one line per figure, each
// limit's value against the unlimited row's.
func addScale(r *harness.Report, cfg harness.Config, n int, rows []*scaleRow) {
	var free *scaleRow
	for _, x := range rows {
		if x.limit == 0 && x.err == nil {
			free = x
		}
	}
	k := fmt.Sprintf("%dk docs", n/1000)
	_, queries := scaleQueryList(nil, newCorpus())
	for _, x := range rows {
		lim := limitName(x.limit)
		goal := x.limit == scaleGoalLimit
		if x.err != nil {
			r.Rows = append(r.Rows, harness.Row{Name: fmt.Sprintf("scale %s, %s", lim, k), Quire: "FAILED", Baseline: "-", Ratio: "-", Target: "complete", Status: "MISS"})
			r.Note("scale %s: %v", lim, x.err)
		}
		for _, q := range queries {
			p99, ok := x.p99[q.name]
			if !ok {
				continue
			}
			base, ratio := "-", "-"
			if free != nil && free != x {
				base = harness.Millis(free.p99[q.name])
				ratio = fmt.Sprintf("%.2f", p99.Seconds()/free.p99[q.name].Seconds())
			}
			tgt, st := "-", "info"
			if goal && q.name != firstPass {
				tgt, st = "< "+harness.Millis(scaleQueryTarget), harness.Status(p99 < scaleQueryTarget)
			}
			r.Rows = append(r.Rows, harness.Row{
				Name:  fmt.Sprintf("scale %s: %s p99 (p50 %s, %.2f maj. faults/query)", lim, q.name, harness.Millis(x.p50[q.name]), x.faults[q.name]),
				Quire: harness.Millis(p99), Baseline: base, Ratio: ratio, Target: tgt, Status: st,
			})
		}
		if x.reindex > 0 {
			base, ratio := "-", "-"
			if free != nil && free != x && free.reindex > 0 {
				base, ratio = free.reindex.Round(time.Second).String(), fmt.Sprintf("%.2f", x.reindex.Seconds()/free.reindex.Seconds())
			}
			tgt, st := "-", "info"
			if goal {
				tgt, st = "< "+scaleReindexMax.String(), harness.Status(x.reindex < scaleReindexMax)
			}
			r.Rows = append(r.Rows, harness.Row{Name: fmt.Sprintf("scale %s: reindex %s", lim, k), Quire: x.reindex.Round(time.Second).String(), Baseline: base, Ratio: ratio, Target: tgt, Status: st})
		}
		if x.ingest > 0 {
			base, ratio := "-", "-"
			tgt, st := "-", "info"
			if free != nil && free != x && free.ingest > 0 {
				base, ratio = fmt.Sprintf("%.0f docs/s", free.ingest), fmt.Sprintf("%.2f", x.ingest/free.ingest)
				if goal {
					tgt, st = fmt.Sprintf(">= %.1f", scaleIngestRatio), harness.Status(x.ingest/free.ingest >= scaleIngestRatio)
				}
			}
			r.Rows = append(r.Rows, harness.Row{Name: fmt.Sprintf("scale %s: ingest %d docs (create p99 %s)", lim, cfg.ScaleIngest, harness.Millis(x.ingestP)), Quire: fmt.Sprintf("%.0f docs/s", x.ingest), Baseline: base, Ratio: ratio, Target: tgt, Status: st})
		}
		if x.segments.known {
			r.Rows = append(r.Rows, harness.Row{Name: fmt.Sprintf("scale %s: index segments during the queries (text, names)", lim),
				Quire: fmt.Sprintf("%d, %d", x.segments.text, x.segments.names), Baseline: "-", Ratio: "-", Target: "-", Status: "info"})
			r.Note("scale %s: queries began after %s waiting for the idle merge and warm pass (%.0f merge steps so far, %.0f best-hits entries warmed)", lim, x.mergeWait.Round(time.Second), x.segments.merged, x.segments.warmed)
		}
		r.Rows = append(r.Rows,
			harness.Row{Name: fmt.Sprintf("scale %s: OOM kills", lim), Quire: fmt.Sprint(x.ooms), Baseline: "-", Ratio: "-", Target: "0", Status: harness.Status(x.ooms == 0)},
			harness.Row{Name: fmt.Sprintf("scale %s: peak anonymous (queries/reindex/ingest %s/%s/%s)", lim, harness.Megabytes(x.queryPk.Anon), harness.Megabytes(x.reindxPk.Anon), harness.Megabytes(x.ingestPk.Anon)),
				Quire: harness.Megabytes(x.peak.Anon), Baseline: "-", Ratio: "-", Target: "< " + harness.Megabytes(harness.AnonTarget), Status: harness.Status(x.peak.Anon < harness.AnonTarget)},
			harness.Row{Name: fmt.Sprintf("scale %s: peak charged (page cache peak %s)", lim, harness.Megabytes(x.peak.File)), Quire: harness.Megabytes(x.peak.Usage), Baseline: "-", Ratio: "-", Target: "-", Status: "info"},
		)
		for _, q := range queries {
			if qps, ok := x.qps[q.name]; ok {
				r.Note("scale %s: %s %.0f queries/s with %d clients", lim, q.name, qps, searchClients)
			}
		}
	}
	r.Note("scale: the server runs in a memory cgroup per row (limit: v1 memory.limit_in_bytes or v2 memory.max); the corpus's page cache is dropped before each row so its pages are charged to the row; peaks are sampled every %s from memory.stat (anonymous: total_rss / anon; page cache: total_cache / file) and the kernel's max_usage_in_bytes / memory.peak; major faults are the cgroup's pgmajfault over the queries of a phase (warm-up included)", harness.CgroupEvery)
	r.Note("scale: ingest runs on an empty data directory inside the row's limit, 64 clients creating 4 KiB documents, until the index has caught up; reindex is quire reindex of a copy of the corpus's Badger directory inside the limit")
	if len(cfg.ServerEnv) > 0 {
		r.Note("scale: server environment %s", strings.Join(cfg.ServerEnv, " "))
	}
}
