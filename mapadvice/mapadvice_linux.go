package mapadvice

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// madvRandom is MADV_RANDOM: no read-around on a fault in the mapping.
const madvRandom = 1

type registration struct {
	dir      string // absolute, cleaned
	suffixes []string
}

// mapping identifies one mapping of one file; a file unmapped and mapped
// again at the same address under another inode is a new one.
type mapping struct {
	start, end uint64
	inode      string
}

var (
	mu      sync.Mutex
	nextID  int
	regs    = map[int]registration{}
	advised = map[mapping]struct{}{}
	stopCh  chan struct{} // non-nil while the watcher runs
)

// Random advises random access on the mappings of the files in dir (and
// below it) whose names end in one of suffixes, now and as they appear,
// until the returned function is called.
func Random(dir string, suffixes ...string) (stop func()) {
	abs, err := filepath.Abs(dir)
	if err != nil || len(suffixes) == 0 {
		return func() {}
	}
	mu.Lock()
	id := nextID
	nextID++
	regs[id] = registration{dir: filepath.Clean(abs), suffixes: suffixes}
	if stopCh == nil {
		stopCh = make(chan struct{})
		go watch(stopCh)
	}
	scanLocked()
	mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			mu.Lock()
			defer mu.Unlock()
			delete(regs, id)
			if len(regs) == 0 && stopCh != nil {
				close(stopCh)
				stopCh = nil
				advised = map[mapping]struct{}{}
			}
		})
	}
}

func watch(stop chan struct{}) {
	t := time.NewTicker(ScanEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		mu.Lock()
		select {
		case <-stop: // stopped while waiting for mu
		default:
			scanLocked()
		}
		mu.Unlock()
	}
}

// Mapping is one line of /proc/self/maps that maps a file.
type Mapping struct {
	Start, End uint64 // the address range
	Perms      string // "r--s": read, write, execute, shared or private
	Inode      string
	Path       string
}

// EachMapping calls fn with each file mapping of this process, as
// /proc/self/maps lists them.
func EachMapping(fn func(Mapping)) error {
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// 7f0c1c000000-7f0c3c000000 r--s 00000000 fd:01 1234 /data/index/text/store/000000000905.zap
		f := bytes.Fields(sc.Bytes())
		if len(f) < 6 {
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
		fn(Mapping{Start: start, End: end, Perms: string(f[1]), Inode: string(f[4]), Path: string(f[5])})
	}
	return sc.Err()
}

// scanLocked reads this process's mappings and advises the new matching
// ones. Mappings gone since the last scan are forgotten.
func scanLocked() {
	now := make(map[mapping]struct{}, len(advised))
	err := EachMapping(func(m Mapping) {
		if !matches(m.Path) {
			return
		}
		k := mapping{start: m.Start, end: m.End, inode: m.Inode}
		now[k] = struct{}{}
		if _, done := advised[k]; done {
			return
		}
		syscall.Syscall(syscall.SYS_MADVISE, uintptr(m.Start), uintptr(m.End-m.Start), madvRandom) //nolint:errcheck // a hint
	})
	if err == nil {
		advised = now
	}
}

func matches(p string) bool {
	for _, r := range regs {
		if !strings.HasPrefix(p, r.dir+string(filepath.Separator)) {
			continue
		}
		for _, s := range r.suffixes {
			if strings.HasSuffix(p, s) {
				return true
			}
		}
	}
	return false
}

// sysfs is where Readahead finds block devices (a test's fake tree).
var sysfs = "/sys"

// Readahead returns the readahead window, in KiB, of the block device
// holding dir (what the kernel reads around a fault on a mapping of a
// file there) and the device's name (vda, sda, nvme0n1). ok is false when
// it cannot tell (a file system with no block device, such as tmpfs).
func Readahead(dir string) (kib int, device string, ok bool) {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return 0, "", false
	}
	major := (st.Dev >> 8) & 0xfff
	minor := (st.Dev & 0xff) | ((st.Dev >> 12) & 0xfff00)
	dev, err := filepath.EvalSymlinks(filepath.Join(sysfs, "dev", "block", fmt.Sprintf("%d:%d", major, minor)))
	if err != nil {
		return 0, "", false
	}
	// A partition has no queue of its own: its disk's is the parent.
	if _, err := os.Stat(filepath.Join(dev, "partition")); err == nil {
		dev = filepath.Dir(dev)
	}
	b, err := os.ReadFile(filepath.Join(dev, "queue", "read_ahead_kb"))
	if err != nil {
		return 0, "", false
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 0 {
		return 0, "", false
	}
	return n, filepath.Base(dev), true
}

// Advised reports whether this process maps path (mapped) and whether
// every mapping of it is advised random access ("rr" in its VmFlags in
// /proc/self/smaps): for tests, and for support sessions.
func Advised(path string) (random, mapped bool, err error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return false, false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	in := false
	random = true
	for sc.Scan() {
		line := sc.Text()
		// A mapping's header starts with its address range; the lines
		// after it, up to the next header, are "Key: value".
		if fs := strings.Fields(line); len(fs) >= 5 && strings.Contains(fs[0], "-") && !strings.HasSuffix(fs[0], ":") {
			in = len(fs) >= 6 && fs[5] == path
			mapped = mapped || in
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			rr := false
			for _, fl := range strings.Fields(line)[1:] {
				rr = rr || fl == "rr"
			}
			random = random && rr
		}
	}
	if err := sc.Err(); err != nil {
		return false, false, err
	}
	return random && mapped, mapped, nil
}
