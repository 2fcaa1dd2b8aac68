// Package links holds the benchmark's signed-links row (-links-only):
// downloads through signed URLs from 64 clients of one address beside the
// same downloads through GET /documents/{id}/content.
package links

import (
	"context"

	"quire/bench/internal/harness"
)

// session is the run the rows of this package add to.
type session struct{ *harness.Session }

// Run runs the signed-links row against srv with docs documents (0: its
// default).
func Run(ctx context.Context, s *harness.Session, srv *harness.Server, docs int) error {
	return (&session{s}).linksBench(ctx, srv, docs)
}
