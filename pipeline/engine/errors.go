package engine

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// NoSpace reports whether err comes from a full disk: ENOSPC or EDQUOT
// from Quire's own file operations, or an engine program that said so on
// its standard error (tesseract, pdftoppm and LibreOffice report the
// errno's text).
func NoSpace(err error) bool {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return true
	}
	m := strings.ToLower(err.Error())
	return strings.Contains(m, "no space left on device") || strings.Contains(m, "disk quota exceeded")
}

type retryableError struct{ err error }

func (e retryableError) Error() string { return e.err.Error() }
func (e retryableError) Unwrap() error { return e.err }

// Retryable marks err as transient: the action is tried again later.
func Retryable(err error) error { return retryableError{err} }

// IsRetryable reports whether err was marked with Retryable.
func IsRetryable(err error) bool {
	var r retryableError
	return errors.As(err, &r)
}

// MissingProgramError is an external program (an engine) that is not
// installed or not where the configuration says: the server answers it as
// 503 naming the program and its Debian package, never as a 500.
type MissingProgramError struct {
	Name, Pkg  string
	Configured string // the configured path, "" when looked up on PATH
}

func (e *MissingProgramError) Error() string {
	if e.Configured != "" {
		return fmt.Sprintf("%s not found at %s: install the Debian package %s or fix the configured path", e.Name, e.Configured, e.Pkg)
	}
	return fmt.Sprintf("%s not found: install the Debian package %s (apt-get install %s)", e.Name, e.Pkg, e.Pkg)
}

// Find finds an external program: the configured path, or name on PATH.
// Its error (a *MissingProgramError) names the Debian package to install.
func Find(configured, name, pkg string) (string, error) {
	if configured != "" {
		if _, err := os.Stat(configured); err != nil {
			return "", &MissingProgramError{Name: name, Pkg: pkg, Configured: configured}
		}
		return configured, nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", &MissingProgramError{Name: name, Pkg: pkg}
	}
	return p, nil
}
