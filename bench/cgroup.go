package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Memory cgroups for the scale benchmark (scale.go). The server runs in
// a cgroup of its own with a memory limit, as on a small box: its page
// cache (Badger's tables, Bleve's segments) is charged to the cgroup and
// reclaimed under pressure, and an allocation past the limit that
// reclaim cannot satisfy is an OOM kill.
//
// cgroup v1 (a memory hierarchy at /sys/fs/cgroup/memory) and v2 (the
// unified hierarchy at /sys/fs/cgroup with the memory controller) are
// both handled; the benchmark has to run as root to make one.
const (
	cgroupV1Root = "/sys/fs/cgroup/memory"
	cgroupV2Root = "/sys/fs/cgroup"
	// cgroupEvery is the period of the peak samples.
	cgroupEvery = 100 * time.Millisecond
)

// cgroup is one memory cgroup made by the benchmark.
type cgroup struct {
	dir   string
	v2    bool
	limit int64 // bytes, 0 for none

	quit chan struct{}
	done chan struct{}
	mu   sync.Mutex
	peak cgroupStat // field-wise peak since the last resetPeak
}

// cgroupStat is what the benchmark reads of a cgroup, in bytes and counts.
type cgroupStat struct {
	anon     int64  // anonymous pages (heap, stacks): v1 total_rss, v2 anon
	file     int64  // page cache charged to it: v1 total_cache, v2 file
	usage    int64  // charged memory: v1 usage_in_bytes, v2 memory.current
	majFault uint64 // major page faults of its processes: pgmajfault
	oomKills uint64 // OOM kills inside it: oom_kill of oom_control / memory.events
}

// newCgroup makes a memory cgroup named name with a limit of limit bytes
// (0: none) and starts sampling its peaks. It says plainly why when it
// cannot.
func newCgroup(name string, limit int64) (*cgroup, error) {
	var c *cgroup
	switch {
	case fileExists(filepath.Join(cgroupV1Root, "memory.limit_in_bytes")):
		c = &cgroup{dir: filepath.Join(cgroupV1Root, name)}
	case fileExists(filepath.Join(cgroupV2Root, "cgroup.controllers")):
		b, err := os.ReadFile(filepath.Join(cgroupV2Root, "cgroup.controllers"))
		if err != nil || !strings.Contains(" "+string(b)+" ", " memory ") {
			return nil, fmt.Errorf("cgroup v2 at %s has no memory controller", cgroupV2Root)
		}
		// Children only get the memory files when the parent enables
		// the controller for its subtree.
		if err := os.WriteFile(filepath.Join(cgroupV2Root, "cgroup.subtree_control"), []byte("+memory"), 0); err != nil {
			return nil, fmt.Errorf("cgroup v2: enable memory for children: %w", err)
		}
		c = &cgroup{dir: filepath.Join(cgroupV2Root, name), v2: true}
	default:
		return nil, fmt.Errorf("no memory cgroup: neither %s (v1) nor %s with cgroup.controllers (v2)", cgroupV1Root, cgroupV2Root)
	}
	c.limit = limit
	if err := os.Mkdir(c.dir, 0o755); err != nil {
		return nil, fmt.Errorf("make cgroup %s (the scale benchmark must run as root): %w", c.dir, err)
	}
	lim, file := "-1", "memory.limit_in_bytes"
	if c.v2 {
		lim, file = "max", "memory.max"
	}
	if limit > 0 {
		lim = strconv.FormatInt(limit, 10)
	}
	if err := os.WriteFile(filepath.Join(c.dir, file), []byte(lim), 0); err != nil {
		os.Remove(c.dir)
		return nil, fmt.Errorf("cgroup %s: set %s: %w", c.dir, file, err)
	}
	if _, err := c.stat(); err != nil {
		os.Remove(c.dir)
		return nil, err
	}
	c.quit, c.done = make(chan struct{}), make(chan struct{})
	go c.loop()
	return c, nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// command returns a command that runs name inside the cgroup (nil: as
// exec.CommandContext does): a shell writes its own pid into
// cgroup.procs and then execs name, so every page name touches is
// charged to the cgroup from its first instruction.
func (c *cgroup) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	if c == nil {
		return exec.CommandContext(ctx, name, args...)
	}
	return exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, c.dir, name}, args...)...)
}

// stat reads the cgroup's counters.
func (c *cgroup) stat() (cgroupStat, error) {
	var st cgroupStat
	kv, err := readKV(filepath.Join(c.dir, "memory.stat"))
	if err != nil {
		return st, err
	}
	usageFile, events := "memory.usage_in_bytes", "memory.oom_control"
	anon, file, maj := "total_rss", "total_cache", "total_pgmajfault"
	if c.v2 {
		usageFile, events = "memory.current", "memory.events"
		anon, file, maj = "anon", "file", "pgmajfault"
	}
	st.anon, st.file, st.majFault = int64(kv[anon]), int64(kv[file]), kv[maj]
	b, err := os.ReadFile(filepath.Join(c.dir, usageFile))
	if err != nil {
		return st, err
	}
	u, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return st, fmt.Errorf("%s: %w", usageFile, err)
	}
	st.usage = u
	ev, err := readKV(filepath.Join(c.dir, events))
	if err != nil {
		return st, err
	}
	k, ok := ev["oom_kill"]
	if !ok {
		return st, fmt.Errorf("%s has no oom_kill count (kernel too old to count OOM kills)", filepath.Join(c.dir, events))
	}
	st.oomKills = k
	return st, nil
}

// readKV reads a file of "key value" lines.
func readKV(path string) (map[string]uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok {
			continue
		}
		if n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64); err == nil {
			out[k] = n
		}
	}
	return out, nil
}

// kernelPeak is the kernel's own high-water mark of the cgroup's charged
// memory since the last resetPeak (v1 max_usage_in_bytes; v2 memory.peak,
// Linux 5.19 and later), 0 when there is none.
func (c *cgroup) kernelPeak() int64 {
	f := "memory.max_usage_in_bytes"
	if c.v2 {
		f = "memory.peak"
	}
	b, err := os.ReadFile(filepath.Join(c.dir, f))
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n
}

func (c *cgroup) loop() {
	defer close(c.done)
	t := time.NewTicker(cgroupEvery)
	defer t.Stop()
	for {
		select {
		case <-c.quit:
			return
		case <-t.C:
			c.sample()
		}
	}
}

func (c *cgroup) sample() {
	st, err := c.stat()
	if err != nil {
		return
	}
	c.mu.Lock()
	c.peak.anon = max(c.peak.anon, st.anon)
	c.peak.file = max(c.peak.file, st.file)
	c.peak.usage = max(c.peak.usage, st.usage)
	c.mu.Unlock()
}

// resetPeak returns the peaks since the last call (usage also from the
// kernel's high-water mark, which sees between samples) and starts anew.
func (c *cgroup) resetPeak() cgroupStat {
	c.sample()
	c.mu.Lock()
	p := c.peak
	c.peak = cgroupStat{}
	c.mu.Unlock()
	p.usage = max(p.usage, c.kernelPeak())
	if !c.v2 {
		os.WriteFile(filepath.Join(c.dir, "memory.max_usage_in_bytes"), []byte("0"), 0)
	}
	return p
}

// remove stops the sampling and removes the cgroup; its processes must
// have exited. Its remaining page cache is charged to the parent.
func (c *cgroup) remove() error {
	if c == nil {
		return nil
	}
	close(c.quit)
	<-c.done
	var err error
	for range 50 { // a process that just exited may still be counted
		if err = os.Remove(c.dir); err == nil || errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("remove cgroup %s: %w", c.dir, err)
}
