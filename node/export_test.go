package node

import (
	"time"

	"quire/storage"
)

// SetTestStats makes every recount of the per-site counts wait for hold
// (nil: none) and reuse a count for at most maxAge, for nodes opened
// until it is called again. It returns a func that restores the defaults.
func SetTestStats(hold chan struct{}, maxAge time.Duration) (restore func()) {
	oldHold, oldAge := testStatsHold, statsMaxAge
	testStatsHold, statsMaxAge = hold, maxAge
	return func() { testStatsHold, statsMaxAge = oldHold, oldAge }
}

// SetTestApplierWrap makes nodes built from now on give their server the
// applier wrap returns (nil: the node's own). It returns a func that
// restores the default.
func SetTestApplierWrap(wrap func(storage.Applier) storage.Applier) (restore func()) {
	old := testWrapApplier
	testWrapApplier = wrap
	return func() { testWrapApplier = old }
}

// PromoteChecks counts the looks of n's promotion loop (raftstate.go).
func PromoteChecks(n *Node) int64 { return n.promoteChecks.Load() }

// SetTestDropForwardAnswer makes leaders close a forward's connection
// without answering, after proposing, for the commands drop returns true
// for. It returns a func that restores the default.
func SetTestDropForwardAnswer(drop func(*storage.Command) bool) (restore func()) {
	old := testDropForwardAnswer
	testDropForwardAnswer = drop
	return func() { testDropForwardAnswer = old }
}

// ForwardResends counts the writes n sent again after an unknown outcome.
func ForwardResends(n *Node) int64 {
	if a, ok := n.applier.(*clusterApplier); ok {
		return a.resends.Load()
	}
	return 0
}

// SetTestDigestVersion makes members report their digests as taken by
// the algorithm version of returns for their id (0: their own), with
// another sum, as a member running other code would. It returns a func
// that restores the default.
func SetTestDigestVersion(of func(nodeID string) int) (restore func()) {
	old := testDigestVersion
	testDigestVersion = of
	return func() { testDigestVersion = old }
}

// SetTestLeaderWait sets how long writes and admin requests wait for a
// leader (leaderWait), for nodes running until it is restored. It returns
// a func that restores the default: register it with t.Cleanup before the
// nodes start, so it runs after they closed.
func SetTestLeaderWait(d time.Duration) (restore func()) {
	old := leaderWait
	leaderWait = d
	return func() { leaderWait = old }
}
