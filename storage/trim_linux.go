package storage

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
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
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// 7f0c1c000000-7f0c3c000000 rw-s 00000000 fd:01 1234 /data/000001.vlog
		f := bytes.Fields(sc.Bytes())
		if len(f) < 6 || len(f[1]) != 4 || f[1][3] != 's' || !bytes.HasSuffix(f[5], []byte(".vlog")) || filepath.Dir(string(f[5])) != abs {
			continue
		}
		lo, hi, ok := bytes.Cut(f[0], []byte("-"))
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(string(lo), 16, 64)
		end, err2 := strconv.ParseUint(string(hi), 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		syscall.Syscall(syscall.SYS_MADVISE, uintptr(start), uintptr(end-start), madvDontneed) //nolint:errcheck // a hint
	}
}
