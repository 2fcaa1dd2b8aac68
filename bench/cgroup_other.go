//go:build !linux

package main

import "errors"

// dropCache needs posix_fadvise; the scale benchmark is Linux only.
func dropCache(dir string) error { return errors.New("dropping a directory's page cache needs Linux") }
