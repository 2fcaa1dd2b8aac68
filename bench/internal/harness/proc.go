package harness

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ProcStatus holds the memory figures of /proc/<pid>/status, in bytes.
type ProcStatus struct {
	RSS  int64 // VmRSS: resident now
	HWM  int64 // VmHWM: the kernel's resident high-water mark
	anon int64 // RssAnon: heap, stacks (what the Go runtime holds)
	file int64 // RssFile: mapped files (Badger's tables and logs, Bleve's segments)
	shm  int64 // RssShmem: shared memory (none expected)
}

// MaxOf returns the field-wise maximum of a and b.
func MaxOf(a, b ProcStatus) ProcStatus {
	return ProcStatus{RSS: max(a.RSS, b.RSS), HWM: max(a.HWM, b.HWM), anon: max(a.anon, b.anon), file: max(a.file, b.file), shm: max(a.shm, b.shm)}
}

// readStatus reads the memory lines of /proc/<pid>/status (Linux only).
func readStatus(pid int) (ProcStatus, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ProcStatus{}, err
	}
	var st ProcStatus
	fields := map[string]*int64{"VmRSS": &st.RSS, "VmHWM": &st.HWM, "RssAnon": &st.anon, "RssFile": &st.file, "RssShmem": &st.shm}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		dst := fields[k]
		if !ok || dst == nil {
			continue
		}
		kb, _, _ := strings.Cut(strings.TrimSpace(v), " ")
		n, err := strconv.ParseInt(kb, 10, 64)
		if err != nil {
			return ProcStatus{}, fmt.Errorf("parse %s in /proc/%d/status: %w", k, pid, err)
		}
		*dst = n << 10 // the kernel's "kB" is KiB
	}
	return st, nil
}

// RSSSampler polls a process's memory figures and keeps their peaks: the
// peak since the last ResetPeak (one benchmark phase) and over the whole
// run. VmHWM alone cannot tell the phases apart.
type RSSSampler struct {
	pid  int
	quit chan struct{}
	done chan struct{}

	mu   sync.Mutex
	last ProcStatus
	peak ProcStatus // since the last ResetPeak
	ever ProcStatus // field-wise peak over the whole run
}

// startRSS starts sampling pid every period.
func startRSS(pid int, period time.Duration) *RSSSampler {
	r := &RSSSampler{pid: pid, quit: make(chan struct{}), done: make(chan struct{})}
	r.sample()
	go r.loop(period)
	return r
}

func (r *RSSSampler) loop(period time.Duration) {
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
func (r *RSSSampler) sample() ProcStatus {
	st, err := readStatus(r.pid)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		return r.last
	}
	r.last = st
	r.peak = MaxOf(r.peak, st)
	r.ever = MaxOf(r.ever, st)
	return st
}

// split formats the parts of a reading: RssAnon, RssFile, RssShmem.
func (p ProcStatus) split() string {
	return fmt.Sprintf("RssAnon %s, RssFile %s, RssShmem %s", Megabytes(p.anon), Megabytes(p.file), Megabytes(p.shm))
}

// Current returns a fresh reading.
func (r *RSSSampler) Current() ProcStatus { return r.sample() }

// ResetPeak returns the peak since the previous reset and starts a new
// phase at the current figures.
func (r *RSSSampler) ResetPeak() ProcStatus {
	st := r.sample()
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.peak
	r.peak = st
	return p
}

// MaxEver returns the peaks over the whole run; its hwm is the kernel's
// VmHWM as of now.
func (r *RSSSampler) MaxEver() ProcStatus {
	r.sample()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ever
}

// stop ends sampling; call it once.
func (r *RSSSampler) stop() {
	close(r.quit)
	<-r.done
}

// userHZ is the unit of the CPU times in /proc/<pid>/stat; Linux fixes it
// at 100 for user space.
const userHZ = 100

// ReadCPU returns the user+system CPU time pid has used (Linux only).
func ReadCPU(pid int) (time.Duration, error) {
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

// CPUSpan measures the CPU the server and the benchmark itself use over
// a phase, to show who had the machine's cores.
type CPUSpan struct {
	at    time.Time
	pids  []int
	start []time.Duration
}

// StartCPU starts measuring the given processes.
func StartCPU(pids ...int) CPUSpan {
	c := CPUSpan{at: time.Now(), pids: pids}
	for _, p := range pids {
		t, _ := ReadCPU(p)
		c.start = append(c.start, t)
	}
	return c
}

// Cores returns the average number of cores each process used since start.
func (c CPUSpan) Cores() []float64 {
	wall := time.Since(c.at).Seconds()
	out := make([]float64, len(c.pids))
	for i, p := range c.pids {
		t, _ := ReadCPU(p)
		out[i] = (t - c.start[i]).Seconds() / wall
	}
	return out
}

// MajorFaults returns the major page faults of process pid so far (field
// 12 of /proc/<pid>/stat): reads of mapped pages that had to come from
// the disk.
func MajorFaults(pid int) (uint64, error) {
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

// ProcessCPU is the CPU time a process used and that of its children it
// has waited for (/proc/<pid>/stat: utime, stime, cutime, cstime; Linux
// only): for the server, its own work and its engines'.
func ProcessCPU(pid int) (time.Duration, error) {
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
