//go:build linux

package memtrim

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"slices"
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
	prefix := strings.TrimSuffix(dir, "/") + "/"
	var out []mapping
	err := eachLine("/proc/self/maps", func(line string) error {
		if m, ok := parseMapping(line, prefix); ok {
			out = append(out, m)
		}
		return nil
	})
	return out, err
}

// eachLine reads the file at path whole (a /proc file changes while it is
// read in pieces) and calls fn with each of its lines, stopping at fn's
// first error.
func eachLine(path string, fn func(line string) error) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if err := fn(sc.Text()); err != nil {
			return err
		}
	}
	return sc.Err()
}

// parseMapping parses a mapping's line of /proc/self/maps (or its header
// line in smaps): start-end perms offset dev inode path. ok is false for
// another line or a mapping of no file under prefix.
func parseMapping(line, prefix string) (m mapping, ok bool) {
	f := strings.Fields(line)
	if len(f) < 6 || strings.HasSuffix(f[0], ":") {
		return mapping{}, false
	}
	path := strings.Join(f[5:], " ")
	if !strings.HasPrefix(path, prefix) {
		return mapping{}, false
	}
	lo, hi, ok := strings.Cut(f[0], "-")
	if !ok {
		return mapping{}, false
	}
	s, err1 := strconv.ParseUint(lo, 16, 64)
	e, err2 := strconv.ParseUint(hi, 16, 64)
	if err1 != nil || err2 != nil || e <= s {
		return mapping{}, false
	}
	return mapping{start: s, end: e, path: path}, true
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
		ok, err := advise(m, n == 0)
		if err != nil {
			return 0, err
		}
		if ok {
			n++
		}
	}
	return n, nil
}

// use is a mapping of a file with its resident bytes and those of them
// referenced since the referenced bits were last cleared.
type use struct {
	mapping
	rss, referenced int64
}

// fileUses reads /proc/self/smaps for the mappings of files under dir.
func fileUses(dir string) ([]use, error) {
	prefix := strings.TrimSuffix(dir, "/") + "/"
	var out []use
	cur := -1 // index in out of the mapping being read, -1 for one not under dir
	err := eachLine("/proc/self/smaps", func(line string) error {
		if f := strings.Fields(line); len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			// A mapping's header line.
			cur = -1
			if m, ok := parseMapping(line, prefix); ok {
				out = append(out, use{mapping: m})
				cur = len(out) - 1
			}
			return nil
		}
		if cur < 0 {
			return nil
		}
		name, v, ok := strings.Cut(line, ":")
		if !ok || (name != "Rss" && name != "Referenced") {
			return nil
		}
		kb, _, _ := strings.Cut(strings.TrimSpace(v), " ")
		n, err := strconv.ParseInt(kb, 10, 64)
		if err != nil {
			return fmt.Errorf("parse %s of %s in smaps: %w", name, out[cur].path, err)
		}
		if name == "Rss" {
			out[cur].rss = n << 10
		} else {
			out[cur].referenced = n << 10
		}
		return nil
	})
	return out, err
}

// clearReferenced clears the referenced bits of the process's pages, so
// that smaps's Referenced counts the pages touched after it.
func clearReferenced() error {
	return os.WriteFile("/proc/self/clear_refs", []byte("1"), 0)
}

// pageOutColdest pages out mappings of files under dir until need bytes
// of their resident pages are out: first the mappings with the smallest
// share of pages referenced since the previous call (cold ones), the
// larger first among equals. It then clears the referenced bits for the
// next call. It returns the mappings advised.
func pageOutColdest(dir string, need int64) (int, error) {
	us, err := fileUses(dir)
	if err != nil {
		return 0, err
	}
	us = slices.DeleteFunc(us, func(u use) bool { return u.rss == 0 })
	// a.referenced/a.rss < b.referenced/b.rss, without division.
	slices.SortFunc(us, func(a, b use) int {
		if c := cmp.Compare(a.referenced*b.rss, b.referenced*a.rss); c != 0 {
			return c
		}
		return cmp.Compare(b.rss, a.rss)
	})
	n := 0
	for _, u := range us {
		if need <= 0 {
			break
		}
		ok, err := advise(u.mapping, n == 0)
		if err != nil {
			return n, err
		}
		if ok {
			n++
			need -= u.rss
		}
	}
	if err := clearReferenced(); err != nil {
		return n, fmt.Errorf("%w: %v", errNoClearRefs, err)
	}
	return n, nil
}

// advise advises MADV_PAGEOUT on m. A mapping gone since it was read
// gives ENOMEM, which is skipped (false); EINVAL on the first call means
// the kernel lacks MADV_PAGEOUT.
func advise(m mapping, first bool) (bool, error) {
	_, _, errno := unix.Syscall(unix.SYS_MADVISE, uintptr(m.start), uintptr(m.end-m.start), unix.MADV_PAGEOUT)
	switch {
	case errno == 0:
		return true, nil
	case errno == unix.EINVAL && first:
		return false, fmt.Errorf("madvise(MADV_PAGEOUT) refused (Linux 5.4 or later needed): %w", errno)
	}
	return false, nil
}

// supported: Linux has /proc/self and MADV_PAGEOUT (5.4 and later).
const supported = true
