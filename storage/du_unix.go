//go:build unix

package storage

import (
	"os"
	"syscall"
)

// diskUsage is the bytes a file occupies: Badger's value log is a sparse
// file mapped at twice its size limit, so its apparent size says little.
func diskUsage(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int64(st.Blocks) * 512
	}
	return fi.Size()
}
