package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// procStatus holds the memory figures of /proc/<pid>/status, in bytes.
type procStatus struct {
	rss  int64 // VmRSS: resident now
	hwm  int64 // VmHWM: the kernel's resident high-water mark
	anon int64 // RssAnon: heap, stacks (what the Go runtime holds)
	file int64 // RssFile: mapped files (Badger's tables and logs, Bleve's segments)
	shm  int64 // RssShmem: shared memory (none expected)
}

// maxOf returns the field-wise maximum of a and b.
func maxOf(a, b procStatus) procStatus {
	return procStatus{rss: max(a.rss, b.rss), hwm: max(a.hwm, b.hwm), anon: max(a.anon, b.anon), file: max(a.file, b.file), shm: max(a.shm, b.shm)}
}

// readStatus reads the memory lines of /proc/<pid>/status (Linux only).
func readStatus(pid int) (procStatus, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return procStatus{}, err
	}
	var st procStatus
	fields := map[string]*int64{"VmRSS": &st.rss, "VmHWM": &st.hwm, "RssAnon": &st.anon, "RssFile": &st.file, "RssShmem": &st.shm}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		dst := fields[k]
		if !ok || dst == nil {
			continue
		}
		kb, _, _ := strings.Cut(strings.TrimSpace(v), " ")
		n, err := strconv.ParseInt(kb, 10, 64)
		if err != nil {
			return procStatus{}, fmt.Errorf("parse %s in /proc/%d/status: %w", k, pid, err)
		}
		*dst = n << 10 // the kernel's "kB" is KiB
	}
	return st, nil
}

// rssSampler polls a process's memory figures and keeps their peaks: the
// peak since the last resetPeak (one benchmark phase) and over the whole
// run. VmHWM alone cannot tell the phases apart.
type rssSampler struct {
	pid  int
	quit chan struct{}
	done chan struct{}

	mu   sync.Mutex
	last procStatus
	peak procStatus // since the last resetPeak
	ever procStatus // field-wise peak over the whole run
}

// startRSS starts sampling pid every period.
func startRSS(pid int, period time.Duration) *rssSampler {
	r := &rssSampler{pid: pid, quit: make(chan struct{}), done: make(chan struct{})}
	r.sample()
	go r.loop(period)
	return r
}

func (r *rssSampler) loop(period time.Duration) {
	defer close(r.done)
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-r.quit:
			return
		case <-t.C:
			r.sample()
		}
	}
}

// sample reads the figures once and updates the peaks. A failed read (the
// process is gone) keeps the previous figures.
func (r *rssSampler) sample() procStatus {
	st, err := readStatus(r.pid)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		return r.last
	}
	r.last = st
	r.peak = maxOf(r.peak, st)
	r.ever = maxOf(r.ever, st)
	return st
}

// split formats the parts of a reading: RssAnon, RssFile, RssShmem.
func (p procStatus) split() string {
	return fmt.Sprintf("RssAnon %s, RssFile %s, RssShmem %s", megabytes(p.anon), megabytes(p.file), megabytes(p.shm))
}

// current returns a fresh reading.
func (r *rssSampler) current() procStatus { return r.sample() }

// resetPeak returns the peak since the previous reset and starts a new
// phase at the current figures.
func (r *rssSampler) resetPeak() procStatus {
	st := r.sample()
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.peak
	r.peak = st
	return p
}

// maxEver returns the peaks over the whole run; its hwm is the kernel's
// VmHWM as of now.
func (r *rssSampler) maxEver() procStatus {
	r.sample()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ever
}

// stop ends sampling; call it once.
func (r *rssSampler) stop() {
	close(r.quit)
	<-r.done
}

// userHZ is the unit of the CPU times in /proc/<pid>/stat; Linux fixes it
// at 100 for user space.
const userHZ = 100

// readCPU returns the user+system CPU time pid has used (Linux only).
func readCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields follow the command name, which is in parentheses and may hold
	// spaces; utime and stime are the 12th and 13th after it.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, fmt.Errorf("no command name in /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parse /proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// cpuSpan measures the CPU the server and the benchmark itself use over
// a phase, to show who had the machine's cores.
type cpuSpan struct {
	at    time.Time
	pids  []int
	start []time.Duration
}

// startCPU starts measuring the given processes.
func startCPU(pids ...int) cpuSpan {
	c := cpuSpan{at: time.Now(), pids: pids}
	for _, p := range pids {
		t, _ := readCPU(p)
		c.start = append(c.start, t)
	}
	return c
}

// cores returns the average number of cores each process used since start.
func (c cpuSpan) cores() []float64 {
	wall := time.Since(c.at).Seconds()
	out := make([]float64, len(c.pids))
	for i, p := range c.pids {
		t, _ := readCPU(p)
		out[i] = (t - c.start[i]).Seconds() / wall
	}
	return out
}

// majorFaults returns the major page faults of process pid so far (field
// 12 of /proc/<pid>/stat): reads of mapped pages that had to come from
// the disk.
func majorFaults(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if i < 0 || len(f) < 10 {
		return 0, fmt.Errorf("unexpected /proc/%d/stat: %q", pid, b)
	}
	return strconv.ParseUint(f[9], 10, 64)
}

// processCPU is the CPU time a process used and that of its children it
// has waited for (/proc/<pid>/stat: utime, stime, cutime, cstime; Linux
// only): for the server, its own work and its engines'.
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command name, which is in parentheses.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 15 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	var ticks int64
	for _, k := range f[11:15] { // utime stime cutime cstime (fields 14-17)
		n, err := strconv.ParseInt(k, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// clockTicks is the kernel's USER_HZ, the unit of /proc's CPU times (100
// on every Linux architecture Quire ships for).
const clockTicks = 100
