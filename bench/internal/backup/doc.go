// Package backup holds the benchmark's online backup and restore rows
// beside dd copying the archive, and the note on GET /metrics scrapes at
// the server's size.
package backup

import (
	"context"

	"quire/bench/internal/harness"
)

// session is the run the rows of this package add to.
type session struct{ *harness.Session }

// Run runs the backup rows against srv (the full run's first server, with
// the creation load's documents and the large upload).
func Run(ctx context.Context, s *harness.Session, srv *harness.Server) error {
	return (&session{s}).backupBench(ctx, srv)
}
