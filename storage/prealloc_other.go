//go:build !linux

package storage

import "os"

// preallocate allocates n bytes of blocks to f by writing zeros (there is
// no portable fallocate).
func preallocate(f *os.File, n int64) error { return writeZeros(f, n) }
