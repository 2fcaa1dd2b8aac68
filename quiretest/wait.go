package quiretest

import (
	"testing"
	"time"
)

// Eventually polls cond every 20 ms until it holds, and fails t once
// timeout has passed without it (what says what was awaited). Use it for
// a state only a request can observe; a test that can wait for the event
// itself (a channel, a callback) should.
func Eventually(t testing.TB, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
