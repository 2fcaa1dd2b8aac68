// Package console holds the benchmark's web console rows (-console-only):
// the console in headless Chromium beside the same work asked of the API
// from Go: first loads, a folder of 10,000 documents, bulk-tagging through
// the bulk bar, and search as you type.
package console

import (
	"context"

	"quire/bench/internal/harness"
)

// session is the run the rows of this package add to.
type session struct{ *harness.Session }

// Run runs the console rows against srv.
func Run(ctx context.Context, s *harness.Session, srv *harness.Server) error {
	return (&session{s}).consoleBench(ctx, srv)
}

// SearchRow runs the row of search as you type at the search rows'
// corpus of n documents in srv; words is the corpus's vocabulary, most
// frequent first.
func SearchRow(ctx context.Context, s *harness.Session, srv *harness.Server, words []string, n int) error {
	return (&session{s}).consoleSearchRow(ctx, srv, words, n)
}
