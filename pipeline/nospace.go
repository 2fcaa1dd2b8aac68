package pipeline

import (
	"errors"
	"strings"
	"syscall"
	"time"
)

// noSpace reports whether err comes from a full disk: ENOSPC or EDQUOT
// from Quire's own file operations, or an engine program that said so on
// its standard error (tesseract, pdftoppm and LibreOffice report the
// errno's text).
func noSpace(err error) bool {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return true
	}
	m := strings.ToLower(err.Error())
	return strings.Contains(m, "no space left on device") || strings.Contains(m, "disk quota exceeded")
}

// spaceRetryDelay is how long an action waits after a full disk stopped
// it: six times the first retry's wait (a minute by default).
func spaceRetryDelay(cfg Config) time.Duration { return 6 * cfg.RetryBase }
