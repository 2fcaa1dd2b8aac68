// Package ingest holds the benchmark's write rows: document creation and
// the streamed upload on the full run's first server (beside raw Badger
// and dd), the pipeline (CHECKSUM and FULLTEXT actions beside raw Badger,
// -pipeline-only), and sustained ingest, fulltext freshness and the burst
// (-ingest-only). BenchmarkFreshnessProcessing is a scaled-down freshness
// row for engineers who may not run the bench.
package ingest

import (
	"context"

	"quire/bench/internal/harness"
)

// session is the run the rows of this package add to.
type session struct{ *harness.Session }

// BadgerBaseline runs the baseline of the creation row: raw Badger in the
// run's directory.
func BadgerBaseline(ctx context.Context, s *harness.Session) (harness.LoadResult, error) {
	return (&session{s}).badgerBaseline(ctx)
}

// Create runs the creation row against srv beside base (BadgerBaseline);
// idle is the server's memory before it.
func Create(ctx context.Context, s *harness.Session, srv *harness.Server, base harness.LoadResult, idle harness.ProcStatus) error {
	return (&session{s}).create(ctx, srv, base, idle)
}

// Upload runs the streamed-upload row and its baselines against srv, then
// checks the uploaded content.
func Upload(ctx context.Context, s *harness.Session, srv *harness.Server) error {
	return (&session{s}).upload(ctx, srv)
}

// Pipeline runs the pipeline rows on a server of their own.
func Pipeline(ctx context.Context, s *harness.Session) error {
	return (&session{s}).pipelineBench(ctx)
}

// Run runs the sustained-ingest, freshness and burst rows, each on fresh
// servers.
func Run(ctx context.Context, s *harness.Session) error {
	return (&session{s}).ingestBench(ctx)
}
