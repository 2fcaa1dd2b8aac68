//go:build linux

package memtrim

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// rssFile returns the process's RssFile from /proc/self/status, in bytes.
func rssFile() (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		v, ok := strings.CutPrefix(line, "RssFile:")
		if !ok {
			continue
		}
		kb, _, _ := strings.Cut(strings.TrimSpace(v), " ")
		n, err := strconv.ParseInt(kb, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parse RssFile: %w", err)
		}
		return n << 10, nil
	}
	return 0, errors.New("no RssFile in /proc/self/status")
}

// cpuTime returns the user and system CPU time the process has used.
func cpuTime() (time.Duration, error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// mapping is one line of /proc/self/maps.
type mapping struct {
	start, end uint64
	path       string
}

// fileMappings returns the mappings of files under dir (an absolute,
// symlink-free path).
func fileMappings(dir string) ([]mapping, error) {
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return nil, err
	}
	prefix := strings.TrimSuffix(dir, "/") + "/"
	var out []mapping
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		// start-end perms offset dev inode path
		f := strings.Fields(sc.Text())
		if len(f) < 6 {
			continue
		}
		path := strings.Join(f[5:], " ")
		if !strings.HasPrefix(path, prefix) {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			continue
		}
		s, err1 := strconv.ParseUint(lo, 16, 64)
		e, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || e <= s {
			continue
		}
		out = append(out, mapping{start: s, end: e, path: path})
	}
	return out, sc.Err()
}

// pageOut advises MADV_PAGEOUT on every mapping of a file under dir. A
// mapping gone since /proc/self/maps was read gives ENOMEM, which is
// skipped; EINVAL on the first call means the kernel lacks MADV_PAGEOUT.
func pageOut(dir string) (int, error) {
	ms, err := fileMappings(dir)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, m := range ms {
		_, _, errno := unix.Syscall(unix.SYS_MADVISE, uintptr(m.start), uintptr(m.end-m.start), unix.MADV_PAGEOUT)
		switch errno {
		case 0:
			n++
		case unix.EINVAL:
			if n == 0 {
				return 0, fmt.Errorf("madvise(MADV_PAGEOUT) refused (Linux 5.4 or later needed): %w", errno)
			}
		}
	}
	return n, nil
}

// supported: Linux has /proc/self and MADV_PAGEOUT (5.4 and later).
const supported = true
