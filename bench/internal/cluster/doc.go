// Package cluster holds the benchmark's cluster rows (-cluster-only): three
// nodes in the benchmark's process beside one (ingest, an upload through
// a follower, the read-back on every member), the failover and the
// follower kill with writers with and without an Idempotency-Key
// (exactlyonce.go), and the replica digests at the end.
package cluster

import (
	"context"

	"quire/bench/internal/harness"
)

// session is the run the rows of this package add to.
type session struct{ *harness.Session }

// Run runs the cluster rows.
func Run(ctx context.Context, s *harness.Session) error {
	return (&session{s}).clusterBench(ctx)
}
