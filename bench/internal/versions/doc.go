// Package versions holds the benchmark's versions rows (-versions-only):
// what 1,000 versions of one document cost a reader.
package versions

import (
	"context"

	"quire/bench/internal/harness"
)

// session is the run the rows of this package add to.
type session struct{ *harness.Session }

// Run runs the versions rows against srv.
func Run(ctx context.Context, s *harness.Session, srv *harness.Server) error {
	return (&session{s}).versionsBench(ctx, srv)
}
