// Command bench measures Quire against baselines taken in the same run and
// reports every figure as a ratio, because the machines it runs on are
// shared and noisy: an absolute docs/s says little, "half of what raw Badger
// does on this disk right now" says a lot.
//
// Run it from the repository root after building bin/quire (make bench does
// both):
//
//	go run ./bench [-quick] [-out report.md] [-bin bin/quire]
//	               [-no-search | -search-only | -pipeline-only | -ocr-only | -ingest-only | -cluster-only | -console-only
//	                | -intake-only | -links-only | -versions-only]
//	               [-ingest-runs 3] [-ingest-processing both|off|on] [-search-docs N] [-search-data DIR] [-cpuprofile PREFIX]
//	               [-ocr-pages N] [-ocr-scan-pages N] [-ocr-defaults auto|named|default] [-bulk-docs N] [-links-docs N]
//	go run ./bench -scale-only -scale-data DIR [-scale-docs N] [-scale-limits 0,512,256]
//	               [-scale-reindex=false] [-scale-ingest N] [-scale-profile DIR] [-server-env K=V]
//	go run ./bench -scale-load-only -scale-data DIR [-scale-docs N]
//
// It runs these benchmarks against a bin/quire child process on a loopback
// port with its data in a temporary directory:
//
//   - document creation: 64 HTTP clients POST /documents with 4 KiB of inline
//     text; the baseline is raw Badger with SyncWrites doing one durable
//     transaction (a 4 KiB value and a small key) per document;
//   - streamed upload: 1 GiB of pseudo-random bytes PUT to an upload URL;
//     the baseline is dd writing the same amount with conv=fsync;
//   - pipeline: 2,000 documents created with CHECKSUM and FULLTEXT actions,
//     actions/s until the pipeline is idle beside raw Badger doing the
//     durable minimum per action (read, hash, two synced transactions) with
//     the same 4 workers, and sampled create-to-searchable latency;
//   - OCR (internal/ocr): scanned pages generated in the run (A4,
//     300 dpi, image-only PDFs) read by the pipeline's OCR action in
//     pages/min beside tesseract run directly on the same pages, and the
//     time from the upload of a 10-page scan until a word printed on its
//     last page finds it;
//   - sustained ingest and fulltext freshness (internal/ingest): 30,000
//     creates beside raw Badger writing as many synced transactions, repeated for
//     the run-to-run spread, without and with a site's default processing
//     (processing.defaultActions; measured once the server keeps it); 60 s
//     of creates while sampled documents are polled until a text search
//     finds them;
//   - scanner intake (internal/intake): files per second taken from a
//     watched folder beside plain POST /documents creates of files of the same
//     sizes, one after another;
//   - cluster (internal/cluster): three in-process nodes beside one: ingest,
//     an upload through a follower, and the time from a leader kill to
//     the first acknowledged write;
//   - signed links (internal/links): 64 clients of one address download
//     5,000 documents through their signed URLs beside the same downloads
//     through GET /documents/{id}/content, with the default rate limits;
//   - console (internal/console): the web console in headless Chromium:
//     first load, opening a folder of 10,000 documents (in the open console, and
//     as a first load with the cache off), bulk-tagging 1,000 documents
//     through the bulk bar, search as you type (at 10,000 documents here,
//     and at the search benchmark's 100,000);
//   - scale (internal/search, -scale-only, make bench-scale, as root): the
//     search corpus at 1,000,000 documents served from inside a memory cgroup,
//     one row per limit beside the unlimited row, the rare words' first
//     pass on the cold cache reported apart from the measured phases;
//   - search: 100,000 generated documents indexed by quire reindex beside
//     raw Bleve batch indexing, then fulltext (rare and common words, through
//     /search and /searchFulltext), filename-prefix, folder and attribute
//     queries from 8 clients beside GET /healthz (the HTTP floor), and
//     search as you type in the console over the same documents.
//
// It also samples the server's resident memory, judging its anonymous part
// (heap, stacks) in every phase, and checks that the upload reads back
// intact. Temporary files and the child process are removed on
// every exit path the process survives.
//
// This package only parses the flags and runs the rows in order. What
// every row shares (the run's Config and Session, starting bin/quire or
// an in-process node, the memory, CPU and cgroup samplers, the loads, the
// upload's baselines, the Report) is bench/internal/harness; the rows are
// in bench/internal/ingest (create, upload, pipeline, sustained ingest,
// freshness, burst), search (search, the idle-merge wait, scale, the
// replica digest walk), ocr, console, cluster (with the exactly-once
// writers), backup, versions, links and intake. A scaled-down freshness
// row for engineers who may not run the bench on a shared machine is
// BenchmarkFreshnessProcessing:
//
//	go test -c -o freshness.test ./bench/internal/ingest/
//	QUIRE_BIN=$PWD/bin/quire QUIRE_HARNESS_SECS=20 ./freshness.test -test.run '^$' -test.bench BenchmarkFreshnessProcessing
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"quire/bench/internal/backup"
	"quire/bench/internal/cluster"
	"quire/bench/internal/console"
	"quire/bench/internal/harness"
	"quire/bench/internal/ingest"
	"quire/bench/internal/intake"
	"quire/bench/internal/links"
	"quire/bench/internal/ocr"
	"quire/bench/internal/search"
	"quire/bench/internal/versions"
)

// newConfig returns the parameters of a full or a quick run.
func newConfig(bin, out string, quick bool) harness.Config {
	c := harness.Config{
		Bin: bin, Out: out, Quick: quick,
		Clients: 64, DocSize: 4 << 10,
		Warmup: time.Second, Window: 10 * time.Second,
		UploadSize:  1 << 30,
		IngestRuns:  3,
		OCRDefaults: ocr.DefaultsAuto, IngestProc: ingest.ProcBoth,
	}
	if quick {
		c.Window = 3 * time.Second
		c.UploadSize = 64 << 20
	}
	return c
}

func main() {
	quick := flag.Bool("quick", false, "smaller sizes for a smoke run")
	out := flag.String("out", "", "also write the report as Markdown to this file")
	bin := flag.String("bin", "bin/quire", "path of the quire binary (make build)")
	noSearch := flag.Bool("no-search", false, "skip the search benchmark (100,000 documents)")
	searchOnly := flag.Bool("search-only", false, "run the search benchmark alone")
	pipelineOnly := flag.Bool("pipeline-only", false, "run the pipeline benchmark alone")
	ingestOnly := flag.Bool("ingest-only", false, "run the sustained-ingest and fulltext-freshness benchmarks alone")
	ingestProc := flag.String("ingest-processing", ingest.ProcBoth, "sustained-ingest rows without a site's default processing (off), with it (on: processing.defaultActions OCR, FULLTEXT), or both")
	ocrOnly := flag.Bool("ocr-only", false, "run the OCR benchmarks alone (pages/min beside tesseract, upload to searchable of a 10-page scan)")
	ocrPagesF := flag.Int("ocr-pages", 0, "pages of each of the OCR throughput row's 4 scans (0: 5, or 1 with -quick)")
	ocrScanPagesF := flag.Int("ocr-scan-pages", 0, "pages of the upload-to-searchable scan (0: 10, or 3 with -quick)")
	ocrDefaults := flag.String("ocr-defaults", ocr.DefaultsAuto, "how the upload-to-searchable scan asks for OCR: auto (the server's default processing when a scan created without actions gets OCR and FULLTEXT, else named), named (the request names them), default (the server's default processing, or the row is not measured)")
	bulkDocs := flag.Int("bulk-docs", 0, "documents of the console's bulk-tag row (0: 1,000, or 200 with -quick)")
	clusterOnly := flag.Bool("cluster-only", false, "run the three-node cluster benchmarks alone (ingest, upload through a follower, failover)")
	consoleOnly := flag.Bool("console-only", false, "run the web console benchmark alone (headless Chromium: first load, a folder of 10,000, search as you type)")
	versionsOnly := flag.Bool("versions-only", false, "run the versions benchmark alone (1,000 versions of one document)")
	intakeOnly := flag.Bool("intake-only", false, "run the scanner intake benchmark alone (files through a watched folder beside API creates)")
	linksOnly := flag.Bool("links-only", false, "run the signed-links benchmark alone (64 clients of one address download documents through signed URLs)")
	linksDocs := flag.Int("links-docs", 0, "documents of the signed-links benchmark (0: 5,000, or 500 with -quick)")
	ingestRuns := flag.Int("ingest-runs", 3, "repetitions of the sustained-ingest benchmark (run-to-run spread)")
	cpuProfile := flag.String("cpuprofile", "", "write CPU profiles of the 3-node ingest and upload rows to `PREFIX`.ingest and PREFIX.upload")
	searchDocs := flag.Int("search-docs", 0, "documents of the search benchmark (default 100,000, 10,000 with -quick; 1000000 for the scale run)")
	searchData := flag.String("search-data", "", "keep the search benchmark's loaded and indexed documents in `DIR` and reuse them in later runs of the same size (the loading and reindex rows are then skipped)")
	scaleOnly := flag.Bool("scale-only", false, "run the scale benchmark alone: the server in a memory cgroup per -scale-limits row (run as root)")
	scaleLoad := flag.Bool("scale-load-only", false, "only load and index the scale corpus into -scale-data")
	scaleDocs := flag.Int("scale-docs", 1000000, "documents of the scale benchmark")
	scaleData := flag.String("scale-data", "", "keep the scale corpus in `DIR`/docs-N between runs (keep it outside the repository)")
	scaleLimits := flag.String("scale-limits", "0,512,256", "memory limits of the scale rows in MiB, comma-separated; 0 is the unlimited row the others are compared with")
	scaleReindex := flag.Bool("scale-reindex", true, "time quire reindex of a copy of the corpus inside each scale row's limit")
	scaleIngest := flag.Int("scale-ingest", ingest.SustainedDocs, "documents created in an empty server inside each scale row's limit (0: no ingest)")
	serverEnv := flag.String("server-env", "", "KEY=VALUE[,KEY=VALUE] added to the environment of the scale rows' servers (A/B runs)")
	scaleProfile := flag.String("scale-profile", "", "write a CPU profile of the server during each scale query phase into `DIR` (through QUIRE_PPROF on a loopback port)")
	flag.Parse()
	if !slices.Contains([]string{ocr.DefaultsAuto, ocr.DefaultsNamed, ocr.DefaultsDefault}, *ocrDefaults) {
		fmt.Fprintf(os.Stderr, "bench: -ocr-defaults: %q is not auto, named or default\n", *ocrDefaults)
		os.Exit(2)
	}
	if !slices.Contains([]string{ingest.ProcBoth, ingest.ProcOff, ingest.ProcOn}, *ingestProc) {
		fmt.Fprintf(os.Stderr, "bench: -ingest-processing: %q is not both, off or on\n", *ingestProc)
		os.Exit(2)
	}
	if *ocrPagesF < 0 || *ocrPagesF > 100 || *ocrScanPagesF < 0 || *ocrScanPagesF > 100 || *bulkDocs < 0 || *bulkDocs > 5000 {
		fmt.Fprintln(os.Stderr, "bench: -ocr-pages and -ocr-scan-pages are from 0 to 100, -bulk-docs from 0 to 5000 (a folder the console reads whole)")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	cfg := newConfig(*bin, *out, *quick)
	cfg.SkipSearch = *noSearch
	cfg.SearchOnly = *searchOnly
	cfg.PipelineOnly = *pipelineOnly
	cfg.OCROnly = *ocrOnly
	cfg.OCRPages = *ocrPagesF
	cfg.OCRScanPages = *ocrScanPagesF
	cfg.OCRDefaults = *ocrDefaults
	cfg.IngestProc = *ingestProc
	cfg.BulkDocs = *bulkDocs
	cfg.IngestOnly = *ingestOnly
	cfg.ClusterOnly = *clusterOnly
	cfg.VersionsOnly = *versionsOnly
	cfg.ConsoleOnly = *consoleOnly
	cfg.IntakeOnly = *intakeOnly
	cfg.LinksOnly = *linksOnly
	cfg.LinksDocs = *linksDocs
	cfg.IngestRuns = *ingestRuns
	cfg.SearchDocs = *searchDocs
	cfg.SearchData = *searchData
	cfg.CPUProfile = *cpuProfile
	cfg.ScaleOnly = *scaleOnly || *scaleLoad
	cfg.ScaleLoad = *scaleLoad
	cfg.ScaleDocs = *scaleDocs
	cfg.ScaleData = *scaleData
	cfg.ScaleReindex = *scaleReindex
	cfg.ScaleIngest = *scaleIngest
	cfg.ScaleProfile = *scaleProfile
	if *serverEnv != "" {
		cfg.ServerEnv = strings.Split(*serverEnv, ",")
	}
	for _, f := range strings.Split(*scaleLimits, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil || n < 0 || n > 1<<20 {
			fmt.Fprintf(os.Stderr, "bench: -scale-limits: %q is not a number of MiB\n", f)
			os.Exit(2)
		}
		cfg.ScaleLimits = append(cfg.ScaleLimits, n)
	}
	code := run(ctx, cfg, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run runs every benchmark, prints the report (also a partial one when a
// benchmark failed) and returns the exit code.
func run(ctx context.Context, cfg harness.Config, stdout, stderr io.Writer) int {
	rep := harness.NewReport(cfg)
	err := runAll(ctx, cfg, rep, stderr)
	if err != nil {
		rep.Note("FAILED: %v", err)
	}
	rep.WriteText(stdout)
	if cfg.Out != "" {
		if werr := harness.WriteMarkdown(cfg.Out, rep); werr != nil {
			fmt.Fprintln(stderr, "bench:", werr)
			return 1
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "bench:", err)
		return 1
	}
	return 0
}

// runAll runs the benchmarks in order, adding rows to rep as results come.
// Deferred calls stop the server and remove the temporary directory on
// every return, a panic in this goroutine included.
func runAll(ctx context.Context, cfg harness.Config, rep *harness.Report, progress io.Writer) error {
	if _, err := os.Stat(cfg.Bin); err != nil {
		return fmt.Errorf("quire binary: %w (run make build first)", err)
	}
	root, err := os.MkdirTemp("", "quire-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	s := &harness.Session{Cfg: cfg, Rep: rep, Root: root, Progress: progress}
	if cfg.ScaleOnly {
		return search.Scale(ctx, s)
	}
	if cfg.SearchOnly {
		return search.Run(ctx, s)
	}
	if cfg.PipelineOnly {
		return ingest.Pipeline(ctx, s)
	}
	if cfg.OCROnly {
		return ocr.Run(ctx, s)
	}
	if cfg.IngestOnly {
		return ingest.Run(ctx, s)
	}
	if cfg.ClusterOnly {
		return cluster.Run(ctx, s)
	}
	if cfg.ConsoleOnly {
		srv, err := harness.StartServer(ctx, cfg.Bin, filepath.Join(root, "quire"), filepath.Join(root, "quire.log"))
		if err != nil {
			return err
		}
		defer srv.Stop()
		if err := console.Run(ctx, s, srv); err != nil {
			return srv.WithLog(err)
		}
		return nil
	}
	if cfg.IntakeOnly {
		return intake.Run(ctx, s)
	}
	if cfg.LinksOnly {
		srv, err := harness.StartServer(ctx, cfg.Bin, filepath.Join(root, "quire"), filepath.Join(root, "quire.log"))
		if err != nil {
			return err
		}
		defer srv.Stop()
		if err := links.Run(ctx, s, srv, cfg.LinksDocs); err != nil {
			return srv.WithLog(err)
		}
		return nil
	}
	if cfg.VersionsOnly {
		srv, err := harness.StartServer(ctx, cfg.Bin, filepath.Join(root, "quire"), filepath.Join(root, "quire.log"))
		if err != nil {
			return err
		}
		defer srv.Stop()
		if err := versions.Run(ctx, s, srv); err != nil {
			return srv.WithLog(err)
		}
		return nil
	}

	base, err := ingest.BadgerBaseline(ctx, s)
	if err != nil {
		return err
	}
	srv, err := harness.StartServer(ctx, cfg.Bin, filepath.Join(root, "quire"), filepath.Join(root, "quire.log"))
	if err != nil {
		return err
	}
	defer srv.Stop()
	idle := srv.RSS.Current()
	if err := ingest.Create(ctx, s, srv, base, idle); err != nil {
		return srv.WithLog(err)
	}
	// The index works behind the writes; the upload is measured on its
	// own once it has caught up.
	took, err := srv.WaitIndexed(ctx, 10*time.Minute)
	if err != nil {
		return srv.WithLog(err)
	}
	s.Rep.Note("index catch-up after the creation load: %.1fs until the index queue was empty", took.Seconds())
	if err := ingest.Upload(ctx, s, srv); err != nil {
		return srv.WithLog(err)
	}
	if err := backup.Run(ctx, s, srv); err != nil {
		return srv.WithLog(err)
	}
	if err := versions.Run(ctx, s, srv); err != nil {
		return srv.WithLog(err)
	}
	if err := links.Run(ctx, s, srv, cfg.LinksDocs); err != nil {
		return srv.WithLog(err)
	}
	if err := console.Run(ctx, s, srv); err != nil {
		return srv.WithLog(err)
	}
	// Anonymous memory has no high-water mark in /proc; the samples' peak
	// is judged, and the total RSS beside it includes VmHWM, which also
	// catches peaks between two samples.
	whole := srv.RSS.MaxEver()
	whole.RSS = max(whole.RSS, whole.HWM)
	rep.AddAnon("server peak anonymous memory, whole run", idle, whole, harness.AnonTarget)
	if err := srv.CheckAlive(); err != nil {
		return err
	}
	srv.Stop()
	if err := ingest.Pipeline(ctx, s); err != nil {
		return err
	}
	if err := ocr.Run(ctx, s); err != nil {
		return err
	}
	if err := ingest.Run(ctx, s); err != nil {
		return err
	}
	if err := intake.Run(ctx, s); err != nil {
		return err
	}
	if err := cluster.Run(ctx, s); err != nil {
		return err
	}
	if cfg.SkipSearch {
		return nil
	}
	return search.Run(ctx, s)
}
