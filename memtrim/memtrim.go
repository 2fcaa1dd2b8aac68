// Package memtrim keeps the pages of the data directory's file mappings
// from piling up in the server's resident set.
//
// Badger reads its tables and value log, and Bleve (zapx) its index
// segments, through mmap; neither has an option to read with pread
// instead. Every page a read touches stays mapped, and counted in the
// process's RSS (as RssFile), until the kernel needs the memory back,
// which on a machine with free memory is never: a server that has
// answered queries over 100,000 documents keeps hundreds of megabytes of
// them mapped, a million documents more than a gigabyte.
//
// The trimmer reads the process's RssFile every period. Above a budget it
// asks the kernel to page out the coldest mappings of files under the
// data directory (madvise MADV_PAGEOUT, Linux 5.4 and later) until
// RssFile is a quarter under the budget: the mappings with the smallest
// share of their resident pages touched since the previous trim (smaps's
// Referenced, cleared through /proc/self/clear_refs at each trim) go
// first, so the pages queries keep reading stay. Once after the server has
// been quiet for a while (RssFile has not grown), every such mapping is
// paged out. The pages are
// unmapped from the process and dropped from the page cache when nothing
// else maps them; dirty pages of a shared mapping stay dirty in the page
// cache until written back, so nothing is lost. The next read of such a
// page faults it back in from the file.
//
// MADV_PAGEOUT and not MADV_DONTNEED, which would keep the pages in the
// page cache (a cheaper refault): the trimmer finds the mappings in
// /proc/self/maps, and between that read and the madvise Badger or Bleve
// may unmap one (a table deleted by a compaction, a segment merged away)
// and the runtime may map anonymous memory at the same address. DONTNEED
// on anonymous memory zeroes it; PAGEOUT on it swaps it out or leaves it
// be, which is harmless.
package memtrim

import (
	"errors"
	"log/slog"
	"path/filepath"
	"runtime/debug"
	"sync/atomic"
	"time"
)

// Options are a trimmer's settings.
type Options struct {
	// Budget is the RssFile above which the trimmer pages the data
	// directory's coldest mappings out, down to three quarters of it.
	// RssFile also counts the quire binary's own text (about 20 MB),
	// which the trimmer leaves alone.
	Budget int64
	// Period is how often RssFile is read (a read of /proc/self/status,
	// some microseconds).
	Period time.Duration
	// Idle: when the process has been quiet this long (RssFile has not
	// grown by more than a MiB and it used under 5% of a core in every
	// period), the mappings are paged out once, whatever the budget (0:
	// never).
	Idle time.Duration
	// FreeHeap: at that same moment of rest, the Go heap's free memory is
	// returned to the system too (debug.FreeOSMemory): under a load the
	// heap grows to its collection goal, and without this a server at rest
	// keeps that goal resident until the runtime's scavenger slowly gives
	// it back.
	FreeHeap bool
}

// DefaultOptions are the server's settings; see storage/DESIGN.md,
// "Memory", for the measurements that chose them.
func DefaultOptions() Options {
	return Options{Budget: 96 << 20, Period: 100 * time.Millisecond, Idle: 5 * time.Second, FreeHeap: true}
}

// Activity that puts off the trim at rest: RssFile growing by more than
// growth in a period, or the process using more than busyCPU of a core
// over it (a server answering queries from pages it already has mapped
// does not grow RssFile, and paging those out would cost it disk reads).
const (
	growth  = 1 << 20
	busyCPU = 0.05
)

// errNoClearRefs: the referenced bits could not be cleared after a trim
// (/proc/self/clear_refs refused); the trim itself was done.
var errNoClearRefs = errors.New("cannot clear the referenced bits")

// Stats counts what a trimmer did.
type Stats struct {
	Checks   uint64 // readings of RssFile
	Trims    uint64 // passes that paged mappings out
	Mappings uint64 // madvise calls that succeeded
	Wakes    uint64 // activity seen after an idle trim (each allows one more)
	Frees    uint64 // heap memory returned at rest (FreeHeap)
}

// Trimmer pages out a directory's file mappings when RssFile exceeds a
// budget. Start one with Start; Stop ends it.
type Trimmer struct {
	dir    string
	o      Options
	log    *slog.Logger
	quit   chan struct{}
	done   chan struct{}
	checks atomic.Uint64
	trims  atomic.Uint64
	maps   atomic.Uint64
	wakes  atomic.Uint64
	frees  atomic.Uint64
}

// Start starts trimming the mappings of files under dir as o says. On
// other systems than Linux it does nothing; on a kernel without
// MADV_PAGEOUT it logs that once and stops.
func Start(dir string, o Options, log *slog.Logger) *Trimmer {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	t := &Trimmer{dir: dir, o: o, log: log, quit: make(chan struct{}), done: make(chan struct{})}
	if !supported {
		close(t.done)
		return t
	}
	go t.loop()
	return t
}

// Stop ends the trimmer and waits for it; call it once.
func (t *Trimmer) Stop() {
	close(t.quit)
	<-t.done
}

// Stats returns what the trimmer has done so far.
func (t *Trimmer) Stats() Stats {
	return Stats{Checks: t.checks.Load(), Trims: t.trims.Load(), Mappings: t.maps.Load(), Wakes: t.wakes.Load(), Frees: t.frees.Load()}
}

func (t *Trimmer) loop() {
	defer close(t.done)
	tk := time.NewTicker(t.o.Period)
	defer tk.Stop()
	var last int64       // RssFile at the previous check or trim
	active := time.Now() // when the process was last active
	idleTrimmed := false // paged out since it was last active
	warnedRefs := false  // errNoClearRefs logged
	cpu, _ := cpuTime()
	at := time.Now()
	for {
		select {
		case <-t.quit:
			return
		case <-tk.C:
		}
		file, err := rssFile()
		if err != nil {
			t.log.Warn("memory trimming off: cannot read the resident set", "err", err)
			return
		}
		t.checks.Add(1)
		now := time.Now()
		c, cerr := cpuTime()
		busy := cerr == nil && float64(c-cpu) > busyCPU*float64(now.Sub(at))
		cpu, at = c, now
		if file > last+growth || busy {
			if idleTrimmed {
				t.wakes.Add(1)
			}
			active, idleTrimmed = now, false
		}
		last = file
		idle := t.o.Idle > 0 && !idleTrimmed && now.Sub(active) >= t.o.Idle
		if file <= t.o.Budget && !idle {
			continue
		}
		idleTrimmed = idleTrimmed || idle
		if idle && t.o.FreeHeap {
			debug.FreeOSMemory()
			t.frees.Add(1)
		}
		// Over the budget, the coldest mappings go until RssFile is a
		// quarter under it; at rest, all of them.
		var n int
		if idle {
			n, err = pageOut(t.dir)
		} else {
			n, err = pageOutColdest(t.dir, file-t.o.Budget*3/4)
		}
		if errors.Is(err, errNoClearRefs) {
			// The mappings were paged out; without the cleared bits
			// every later trim sees every page as referenced and takes
			// the largest mappings first.
			if !warnedRefs {
				t.log.Warn("memory trimming cannot tell cold mappings from hot ones: it pages out the largest first", "err", err)
				warnedRefs = true
			}
			err = nil
		}
		if err != nil {
			t.log.Warn("memory trimming off", "err", err)
			return
		}
		t.trims.Add(1)
		t.maps.Add(uint64(n))
		// The trim's own work is not activity.
		if file, err := rssFile(); err == nil {
			last = file
		}
		if c, err := cpuTime(); err == nil {
			cpu, at = c, time.Now()
		}
	}
}

// TrimNow pages out the mappings of files under dir once, whatever the
// RssFile, and returns how many mappings it advised.
func TrimNow(dir string) (int, error) {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return pageOut(dir)
}
