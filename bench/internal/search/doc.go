// Package search holds the benchmark's search rows: the generated corpus
// loaded through storage and indexed by quire reindex beside raw Bleve,
// the query rows beside GET /healthz, the wait for the idle merge and the
// warm pass before them (segments.go), and console's search as you type
// over the same documents; and the scale rows (-scale-only, make
// bench-scale): the corpus at a million documents served from inside
// memory cgroups, and the replica digest walk of its store.
package search

import (
	"context"

	"quire/bench/internal/harness"
)

// session is the run the rows of this package add to.
type session struct{ *harness.Session }

// Run runs the search rows on a server of their own.
func Run(ctx context.Context, s *harness.Session) error {
	return (&session{s}).searchBench(ctx)
}

// Scale runs the scale rows (Linux, as root).
func Scale(ctx context.Context, s *harness.Session) error {
	return (&session{s}).scaleBench(ctx)
}
