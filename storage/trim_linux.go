package storage

import (
	"path/filepath"
	"strings"
	"syscall"

	"quire/mapadvice"
)

// madvDontneed is MADV_DONTNEED. On a shared file mapping it only removes
// the pages from this process's page tables: their contents stay in the
// page cache (dirty ones are still written back) and the next access maps
// them again. On any other mapping it would discard memory, so the caller
// must make sure no value-log file is unmapped while trimming (DB.trim
// holds Badger's writers and the value-log GC off) and only shared
// mappings are touched.
const madvDontneed = 4

// trimMappedFiles unmaps from this process the resident pages of Badger's
// value log, leaving them to the kernel's page cache. Badger writes and reads the value log
// through mmap, so a 1 GiB upload would otherwise leave 1 GiB of page cache
// counted in the server's RSS, which is what operators and monitoring see.
// Errors are ignored: this is only a hint.
func trimMappedFiles(dir string) {
	if dir == "" {
		return
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return
	}
	mapadvice.EachMapping(func(m mapadvice.Mapping) { //nolint:errcheck // a hint
		if len(m.Perms) != 4 || m.Perms[3] != 's' || !strings.HasSuffix(m.Path, ".vlog") || filepath.Dir(m.Path) != abs {
			return
		}
		syscall.Syscall(syscall.SYS_MADVISE, uintptr(m.Start), uintptr(m.End-m.Start), madvDontneed) //nolint:errcheck // a hint
	})
}
