//go:build unix

package server_test

import (
	"syscall"
	"testing"
)

// raiseOpenFiles raises the soft limit of open files to n (bounded by the
// hard limit) for tests that hold many sockets, and skips the test when
// the hard limit is lower.
func raiseOpenFiles(t *testing.T, n uint64) {
	t.Helper()
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		t.Skipf("getrlimit: %v", err)
	}
	if l.Cur >= n {
		return
	}
	if l.Max < n {
		t.Skipf("open files hard limit %d < %d", l.Max, n)
	}
	l.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		t.Skipf("setrlimit: %v", err)
	}
}
