package storage

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// preallocate allocates n bytes of blocks to f, so later writes into them
// cannot run out of space. File systems without fallocate get zeros
// written instead.
func preallocate(f *os.File, n int64) error {
	err := unix.Fallocate(int(f.Fd()), 0, 0, n)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
		return writeZeros(f, n)
	}
	return err
}
