package harness

import (
	"fmt"
	"io"
	"os"
	"time"

	"runtime"
)

// Config holds the benchmark parameters, set from the flags.
type Config struct {
	Bin          string        // the quire binary
	Out          string        // Markdown report file, "" for none
	Quick        bool          // smoke-run sizes
	CPUProfile   string        // CPU profiles of the 3-node rows: PREFIX.ingest, PREFIX.upload
	Clients      int           // concurrent creators
	DocSize      int           // bytes of inline content per document
	Warmup       time.Duration // load before the measured window
	Window       time.Duration // measured window of the creation benchmark
	UploadSize   int64         // bytes of the streamed upload
	SkipSearch   bool          // leave out the search benchmark
	SearchOnly   bool          // run the search benchmark alone
	PipelineOnly bool          // run the pipeline benchmark alone
	OCROnly      bool          // run the OCR benchmarks alone
	OCRPages     int           // pages per document of the OCR throughput row, 0 for its default
	OCRScanPages int           // pages of the upload-to-searchable scan, 0 for its default
	OCRDefaults  string        // how that scan asks for OCR: auto, named, default
	IngestProc   string        // sustained rows without (off), with (on) a site's default processing, or both
	BulkDocs     int           // documents of the console's bulk-tag row, 0 for its default
	IngestOnly   bool          // run the sustained-ingest and freshness benchmarks alone
	ClusterOnly  bool          // run the three-node cluster benchmarks alone
	VersionsOnly bool          // run the versions benchmark alone
	ConsoleOnly  bool          // run the web console benchmark (Chromium) alone
	IntakeOnly   bool          // run the scanner intake benchmark alone
	LinksOnly    bool          // run the signed-links benchmark alone
	LinksDocs    int           // documents of the signed-links benchmark, 0 for its default
	IngestRuns   int           // repetitions of the sustained-ingest benchmark
	SearchDocs   int           // documents of the search benchmark, 0 for its default
	SearchData   string        // where the search benchmark keeps its documents between runs, "" for none
	ScaleOnly    bool          // run the scale benchmark (memory cgroups) alone
	ScaleLoad    bool          // only load and index the scale corpus
	ScaleDocs    int           // documents of the scale benchmark
	ScaleData    string        // where the scale corpus is kept between runs, "" for a temporary one
	ScaleLimits  []int64       // the rows' memory limits, MiB, 0 for none
	ScaleReindex bool          // time a reindex inside each row's limit
	ScaleIngest  int           // documents created in each row's ingest
	ServerEnv    []string      // KEY=VALUE added to the scale rows' server environment
	ScaleProfile string        // directory for CPU profiles of the scale rows' query phases, "" for none
}

// Session is one run of the benchmarks: its parameters, the report being
// filled and the temporary directory everything lives in.
type Session struct {
	Cfg      Config
	Rep      *Report
	Root     string
	Progress io.Writer
}

// Logf prints a progress line.
func (s *Session) Logf(format string, args ...any) {
	fmt.Fprintf(s.Progress, "bench: "+format+"\n", args...)
}

// hostInfo describes the machine for the report header.
func hostInfo() string {
	h, _ := os.Hostname()
	return fmt.Sprintf("%s, %s/%s, %d CPUs, %s", h, runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
}
