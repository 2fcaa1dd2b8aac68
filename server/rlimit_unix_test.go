//go:build unix

package server_test

import (
	"fmt"
	"syscall"
	"testing"

	"quire/quiretest"
)

// raiseOpenFiles raises the soft limit of open files to n (bounded by the
// hard limit) for tests that hold many sockets, and skips the test when
// the hard limit is lower.
func raiseOpenFiles(t *testing.T, n uint64) {
	t.Helper()
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		quiretest.SkipUnlessCI(t, fmt.Sprintf("getrlimit: %v", err))
	}
	if l.Cur >= n {
		return
	}
	if l.Max < n {
		quiretest.SkipUnlessCI(t, fmt.Sprintf("open files hard limit %d < %d: raise it (ulimit -Hn)", l.Max, n))
	}
	l.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		quiretest.SkipUnlessCI(t, fmt.Sprintf("setrlimit: %v", err))
	}
}
