//go:build linux

package memtrim

import (
	"bufio"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// mapFile writes size bytes to a file in dir, syncs it (its pages are
// clean), maps it read-only and touches every page.
func mapFile(t *testing.T, dir string, size int) []byte {
	t.Helper()
	return mapFileNamed(t, dir, "seg.zap", size)
}

// mapFileNamed is mapFile for a file of that name.
func mapFileNamed(t *testing.T, dir, name string, size int) []byte {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, make([]byte, size), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	b, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(b) })
	var sum byte
	for i := 0; i < size; i += os.Getpagesize() {
		sum += b[i]
	}
	if sum != 0 {
		t.Fatalf("read %d from a file of zeros", sum)
	}
	return b
}

// residentOf returns the Rss, in bytes, /proc/self/smaps gives the
// mapping of a file named path.
func residentOf(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		if fs := strings.Fields(line); len(fs) >= 6 && strings.Contains(fs[0], "-") {
			in = strings.Join(fs[5:], " ") == path
			continue
		}
		if v, ok := strings.CutPrefix(line, "Rss:"); ok && in {
			kb, err := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no mapping of %s in /proc/self/smaps", path)
	return 0
}

func TestTrimNowPagesOutOnlyMappingsUnderDir(t *testing.T) {
	const size = 8 << 20
	data, other := t.TempDir(), t.TempDir()
	mapFile(t, data, size)
	mapFile(t, other, size)
	dataPath, _ := filepath.EvalSymlinks(filepath.Join(data, "seg.zap"))
	otherPath, _ := filepath.EvalSymlinks(filepath.Join(other, "seg.zap"))
	for _, p := range []string{dataPath, otherPath} {
		if r := residentOf(t, p); r < size/2 {
			t.Fatalf("%s: %d bytes resident after touching every page, want about %d", p, r, size)
		}
	}
	n, err := TrimNow(data)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("advised %d mappings, want 1", n)
	}
	if r := residentOf(t, dataPath); r > size/8 {
		t.Errorf("mapping under the directory: %d bytes resident after the trim, want under %d", r, size/8)
	}
	if r := residentOf(t, otherPath); r < size/2 {
		t.Errorf("mapping outside the directory: %d bytes resident after the trim, want it left alone (%d)", r, size)
	}
}

func TestRSSFileReadsStatus(t *testing.T) {
	n, err := rssFile()
	if err != nil {
		t.Fatal(err)
	}
	// The test binary's own text is mapped from a file.
	if n <= 0 {
		t.Fatalf("RssFile %d, want > 0", n)
	}
}

func TestTrimmerPagesOutAboveBudget(t *testing.T) {
	const size = 8 << 20
	data := t.TempDir()
	mapFile(t, data, size)
	path, _ := filepath.EvalSymlinks(filepath.Join(data, "seg.zap"))
	tr := Start(data, Options{Budget: 0, Period: 10 * time.Millisecond}, slog.New(slog.DiscardHandler))
	defer tr.Stop()
	deadline := time.Now().Add(10 * time.Second)
	for tr.Stats().Trims == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no trim within 10 s with a budget of 0")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if r := residentOf(t, path); r > size/8 {
		t.Errorf("%d bytes resident after a trim, want under %d", r, size/8)
	}
}

func TestTrimmerLeavesMappingsUnderBudget(t *testing.T) {
	const size = 8 << 20
	data := t.TempDir()
	mapFile(t, data, size)
	path, _ := filepath.EvalSymlinks(filepath.Join(data, "seg.zap"))
	tr := Start(data, Options{Budget: 1 << 40, Period: time.Millisecond}, slog.New(slog.DiscardHandler))
	deadline := time.Now().Add(10 * time.Second)
	for tr.Stats().Checks < 3 {
		if time.Now().After(deadline) {
			t.Fatal("fewer than 3 checks within 10 s at a period of 1 ms")
		}
		time.Sleep(time.Millisecond)
	}
	tr.Stop()
	if s := tr.Stats(); s.Trims != 0 {
		t.Errorf("%d trims under a budget of 1 TiB, want 0", s.Trims)
	}
	if r := residentOf(t, path); r < size/2 {
		t.Errorf("%d bytes resident, want the mapping left alone (%d)", r, size)
	}
}

func TestTrimmerPagesOutOnceWhenIdle(t *testing.T) {
	const size = 8 << 20
	data := t.TempDir()
	mapFile(t, data, size)
	path, _ := filepath.EvalSymlinks(filepath.Join(data, "seg.zap"))
	tr := Start(data, Options{Budget: 1 << 40, Period: 20 * time.Millisecond, Idle: 100 * time.Millisecond}, slog.New(slog.DiscardHandler))
	defer tr.Stop()
	deadline := time.Now().Add(10 * time.Second)
	for tr.Stats().Trims == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no trim within 10 s of quiet with Idle 100 ms")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Quiet on (this loop barely uses the CPU): no second trim, unless
	// the process was seen busy in between (the race detector or a
	// loaded machine can make a 20 ms spell busy), and then one per wake.
	checks := tr.Stats().Checks
	for tr.Stats().Checks < checks+20 {
		if time.Now().After(deadline) {
			t.Fatal("the trimmer stopped checking")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if s := tr.Stats(); s.Trims < 1 || s.Trims > 1+s.Wakes {
		t.Errorf("%d trims over a quiet spell with %d wakes, want 1 and at most one per wake", s.Trims, s.Wakes)
	}
	if r := residentOf(t, path); r > size/8 {
		t.Errorf("%d bytes resident after the idle trim, want under %d", r, size/8)
	}
}

func TestTrimmerWaitsWhileBusy(t *testing.T) {
	const size = 8 << 20
	data := t.TempDir()
	mapFile(t, data, size)
	tr := Start(data, Options{Budget: 1 << 40, Period: 20 * time.Millisecond, Idle: 100 * time.Millisecond}, slog.New(slog.DiscardHandler))
	defer tr.Stop()
	// A core's worth of work for 500 ms: the process is not at rest.
	x := uint64(1)
	for end := time.Now().Add(500 * time.Millisecond); time.Now().Before(end); {
		for i := 0; i < 1000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	if s := tr.Stats(); s.Trims != 0 || s.Checks < 5 {
		t.Fatalf("after 500 ms of work (x=%d): %d trims in %d checks, want 0 trims in at least 5 checks", x, s.Trims, s.Checks)
	}
	deadline := time.Now().Add(10 * time.Second)
	for tr.Stats().Trims == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no trim within 10 s once the work stopped")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// At rest the trimmer also returns the Go heap's free memory, once, when
// FreeHeap is set, and never when it is not.
func TestTrimmerReturnsTheHeapAtRest(t *testing.T) {
	for _, free := range []bool{true, false} {
		data := t.TempDir()
		mapFile(t, data, 1<<20)
		garbage := make([][]byte, 64)
		for i := range garbage {
			garbage[i] = make([]byte, 1<<20)
			garbage[i][0] = byte(i)
		}
		tr := Start(data, Options{Budget: 1 << 40, Period: 20 * time.Millisecond, Idle: 100 * time.Millisecond, FreeHeap: free}, slog.New(slog.DiscardHandler))
		garbage = nil
		deadline := time.Now().Add(10 * time.Second)
		for tr.Stats().Trims == 0 {
			if time.Now().After(deadline) {
				tr.Stop()
				t.Fatalf("FreeHeap %v: no trim within 10 s of quiet with Idle 100 ms", free)
			}
			time.Sleep(5 * time.Millisecond)
		}
		tr.Stop()
		s := tr.Stats()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		retained := ms.HeapIdle - ms.HeapReleased
		switch {
		case free && (s.Frees < 1 || s.Frees > 1+s.Wakes):
			t.Errorf("FreeHeap: %d heap returns over %d idle trims with %d wakes, want one per idle trim", s.Frees, s.Trims, s.Wakes)
		case free && retained > 16<<20:
			t.Errorf("FreeHeap: %d MiB of free heap still held after the return at rest", retained>>20)
		case !free && s.Frees != 0:
			t.Errorf("without FreeHeap: %d heap returns", s.Frees)
		}
	}
}

// touch reads every page of b.
func touch(t *testing.T, b []byte) {
	t.Helper()
	var sum byte
	for i := 0; i < len(b); i += os.Getpagesize() {
		sum += b[i]
	}
	if sum != 0 {
		t.Fatalf("read %d from a file of zeros", sum)
	}
}

// TestPageOutColdestKeepsWhatWasReadSinceTheLastTrim: over the budget,
// the mapping nobody read since the previous trim goes and the one read
// since stays; asked for more than the cold one holds, both go.
func TestPageOutColdestKeepsWhatWasReadSinceTheLastTrim(t *testing.T) {
	const size = 8 << 20
	for _, c := range []struct {
		name               string
		need               int64
		hotStays, coldStay bool
	}{
		{"need less than the cold mapping", size / 2, true, false},
		{"need both", size + size/2, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := t.TempDir()
			hot := mapFileNamed(t, data, "hot.zap", size)
			mapFileNamed(t, data, "cold.zap", size)
			hotPath, _ := filepath.EvalSymlinks(filepath.Join(data, "hot.zap"))
			coldPath, _ := filepath.EvalSymlinks(filepath.Join(data, "cold.zap"))
			if err := clearReferenced(); err != nil {
				t.Fatal(err)
			}
			touch(t, hot)
			dir, _ := filepath.EvalSymlinks(data)
			if _, err := pageOutColdest(dir, c.need); err != nil {
				t.Fatal(err)
			}
			for _, m := range []struct {
				path  string
				stays bool
			}{{hotPath, c.hotStays}, {coldPath, c.coldStay}} {
				r := residentOf(t, m.path)
				if m.stays && r < size/2 {
					t.Errorf("%s: %d bytes resident after the trim, want it kept (%d)", filepath.Base(m.path), r, size)
				}
				if !m.stays && r > size/8 {
					t.Errorf("%s: %d bytes resident after the trim, want it paged out (under %d)", filepath.Base(m.path), r, size/8)
				}
			}
		})
	}
}

// TestFileUsesReadsRssAndReferenced: smaps gives each mapping under the
// directory with its resident and referenced bytes.
func TestFileUsesReadsRssAndReferenced(t *testing.T) {
	const size = 4 << 20
	data := t.TempDir()
	b := mapFileNamed(t, data, "t.sst", size)
	if err := clearReferenced(); err != nil {
		t.Fatal(err)
	}
	touch(t, b[:size/2])
	dir, _ := filepath.EvalSymlinks(data)
	us, err := fileUses(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(us) != 1 {
		t.Fatalf("%d mappings under the directory, want 1: %+v", len(us), us)
	}
	u := us[0]
	if u.rss < size/2 || u.referenced < size/4 || u.referenced > u.rss*3/4 {
		t.Fatalf("Rss %d, Referenced %d after touching all %d bytes and then half of them again", u.rss, u.referenced, size)
	}
}
