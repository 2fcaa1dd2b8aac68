//go:build !unix

package storage

import "os"

// diskUsage is the file's size (no block counts here).
func diskUsage(fi os.FileInfo) int64 { return fi.Size() }
