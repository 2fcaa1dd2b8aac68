//go:build linux

package search

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// dropCache asks the kernel to drop the clean page-cache pages of every
// file under dir (posix_fadvise DONTNEED), so that a row starts with the
// data on disk rather than in pages charged to whoever read them last:
// a page already cached is not charged to the cgroup that reads it.
func dropCache(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	})
}

// lockCorpus takes an exclusive lock on path (created if need be) so that
// two runs cannot load or read one kept corpus at once; the lock goes
// with the process.
func lockCorpus(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: another bench run is using this corpus: %w", path, err)
	}
	return f, nil
}
