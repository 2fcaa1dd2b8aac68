// Package intake holds the benchmark's scanner intake row (-intake-only):
// files taken from a watched folder beside POST /documents creates of
// files of the same sizes.
package intake

import (
	"context"

	"quire/bench/internal/harness"
)

// session is the run the rows of this package add to.
type session struct{ *harness.Session }

// Run runs the intake row on a server of its own.
func Run(ctx context.Context, s *harness.Session) error {
	return (&session{s}).intakeBench(ctx)
}
