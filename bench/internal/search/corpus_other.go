//go:build !linux

package search

import (
	"errors"
	"os"
)

// dropCache needs posix_fadvise; the scale benchmark is Linux only.
func dropCache(dir string) error { return errors.New("dropping a directory's page cache needs Linux") }

// lockCorpus: the scale benchmark is Linux only.
func lockCorpus(path string) (*os.File, error) {
	return nil, errors.New("the scale benchmark needs Linux")
}
