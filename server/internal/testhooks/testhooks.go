// Package testhooks holds the switches that tests of server's packages
// turn. Each changes behaviour only while a test sets it; being internal,
// nothing outside server/ can import it. Production code reads them.
package testhooks

import (
	"sync/atomic"
	"time"
)

var (
	moveStep              atomic.Int64
	smtpLoopbackUntrusted atomic.Bool
	davLoopbackUntrusted  atomic.Bool
	answerWait            atomic.Int64
)

// SetAnswerWait sets how long a keyed request's retry waits for the
// answer of another run of it, until it is called again (0: the default).
func SetAnswerWait(d time.Duration) { answerWait.Store(int64(d)) }

// AnswerWait is the wait SetAnswerWait set, or def.
func AnswerWait(def time.Duration) time.Duration {
	if d := answerWait.Load(); d > 0 {
		return time.Duration(d)
	}
	return def
}

// SetMoveStep sets how many documents one step of a folder move moves in
// servers that start a move until it is called again (0: the default).
func SetMoveStep(n int) { moveStep.Store(int64(n)) }

// MoveStep is the step SetMoveStep set, or def.
func MoveStep(def int) int {
	if n := moveStep.Load(); n > 0 {
		return int(n)
	}
	return def
}

// SMTPLoopbackUntrusted makes loopback SMTP clients count as LAN clients
// (no AUTH before STARTTLS) until the returned restore runs.
func SMTPLoopbackUntrusted() (restore func()) {
	smtpLoopbackUntrusted.Store(true)
	return func() { smtpLoopbackUntrusted.Store(false) }
}

// SMTPLoopbackTrusted reports whether loopback SMTP clients are trusted
// (always, unless a test said otherwise).
func SMTPLoopbackTrusted() bool { return !smtpLoopbackUntrusted.Load() }

// DavLoopbackUntrusted makes loopback WebDAV clients count as LAN clients
// (no plain HTTP) until the returned restore runs.
func DavLoopbackUntrusted() (restore func()) {
	davLoopbackUntrusted.Store(true)
	return func() { davLoopbackUntrusted.Store(false) }
}

// DavLoopbackTrusted reports whether loopback WebDAV clients are trusted
// (always, unless a test said otherwise).
func DavLoopbackTrusted() bool { return !davLoopbackUntrusted.Load() }

var sortedFolderBound atomic.Int64

// SetSortedFolderBound sets the most entries GET /folders sorts (0: the
// default), so a test reaches the bound with a few documents.
func SetSortedFolderBound(n int) { sortedFolderBound.Store(int64(n)) }

// SortedFolderBound is the bound SetSortedFolderBound set, or def.
func SortedFolderBound(def int) int {
	if n := sortedFolderBound.Load(); n > 0 {
		return int(n)
	}
	return def
}
