//go:build !linux

package storage

// trimMappedFiles is a no-op where the kernel offers no way to reclaim
// mapped file pages on request.
func trimMappedFiles(string) {}
