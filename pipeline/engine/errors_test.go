package engine

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
)

func TestNoSpace_Classification(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("render: %w", &os.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}), true},
		{Retryable(&os.PathError{Op: "write", Path: "x", Err: syscall.EDQUOT}), true},
		{errors.New("pdftoppm: No space left on device"), true},
		{errors.New("unsupported file"), false},
		{&os.PathError{Op: "open", Path: "x", Err: syscall.ENOENT}, false},
	} {
		if got := NoSpace(c.err); got != c.want {
			t.Errorf("NoSpace(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
