package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"runtime"
)

// config holds the benchmark parameters, set from the flags.
type config struct {
	bin          string        // the quire binary
	out          string        // Markdown report file, "" for none
	quick        bool          // smoke-run sizes
	cpuProfile   string        // CPU profiles of the 3-node rows: PREFIX.ingest, PREFIX.upload
	clients      int           // concurrent creators
	docSize      int           // bytes of inline content per document
	warmup       time.Duration // load before the measured window
	window       time.Duration // measured window of the creation benchmark
	uploadSize   int64         // bytes of the streamed upload
	skipSearch   bool          // leave out the search benchmark
	searchOnly   bool          // run the search benchmark alone
	pipelineOnly bool          // run the pipeline benchmark alone
	ocrOnly      bool          // run the OCR benchmarks alone
	ocrPages     int           // pages per document of the OCR throughput row, 0 for its default
	ocrScanPages int           // pages of the upload-to-searchable scan, 0 for its default
	ocrDefaults  string        // how that scan asks for OCR: auto, named, default
	ingestProc   string        // sustained rows without (off), with (on) a site's default processing, or both
	bulkDocs     int           // documents of the console's bulk-tag row, 0 for its default
	ingestOnly   bool          // run the sustained-ingest and freshness benchmarks alone
	clusterOnly  bool          // run the three-node cluster benchmarks alone
	versionsOnly bool          // run the versions benchmark alone
	consoleOnly  bool          // run the web console benchmark (Chromium) alone
	intakeOnly   bool          // run the scanner intake benchmark alone
	linksOnly    bool          // run the signed-links benchmark alone
	linksDocs    int           // documents of the signed-links benchmark, 0 for its default
	ingestRuns   int           // repetitions of the sustained-ingest benchmark
	searchDocs   int           // documents of the search benchmark, 0 for its default
	searchData   string        // where the search benchmark keeps its documents between runs, "" for none
	scaleOnly    bool          // run the scale benchmark (memory cgroups) alone
	scaleLoad    bool          // only load and index the scale corpus
	scaleDocs    int           // documents of the scale benchmark
	scaleData    string        // where the scale corpus is kept between runs, "" for a temporary one
	scaleLimits  []int64       // the rows' memory limits, MiB, 0 for none
	scaleReindex bool          // time a reindex inside each row's limit
	scaleIngest  int           // documents created in each row's ingest
	serverEnv    []string      // KEY=VALUE added to the scale rows' server environment
	scaleProfile string        // directory for CPU profiles of the scale rows' query phases, "" for none
}

// session is one run of the benchmarks: its parameters, the report being
// filled and the temporary directory everything lives in.
type session struct {
	cfg      config
	rep      *report
	root     string
	progress io.Writer
}

// logf prints a progress line.
func (s *session) logf(format string, args ...any) {
	fmt.Fprintf(s.progress, "bench: "+format+"\n", args...)
}

// hostInfo describes the machine for the report header.
func hostInfo() string {
	h, _ := os.Hostname()
	return fmt.Sprintf("%s, %s/%s, %d CPUs, %s", h, runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
}
