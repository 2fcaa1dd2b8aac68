package harness

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

// Memory cgroups for the scale benchmark (bench/internal/search/scale.go).
// The server runs in a cgroup of its own with a memory limit, as on a
// small box: its page cache (Badger's tables, Bleve's segments) is
// charged to the cgroup and reclaimed under pressure, and an allocation
// past the limit that reclaim cannot satisfy is an OOM kill.
//
// cgroup v1 (a memory hierarchy at /sys/fs/cgroup/memory) and v2 (the
// unified hierarchy at /sys/fs/cgroup with the memory controller) are
// both handled; the benchmark has to run as root to make one.
const (
	cgroupV1Root = "/sys/fs/cgroup/memory"
	cgroupV2Root = "/sys/fs/cgroup"
	// CgroupEvery is the period of the peak samples.
	CgroupEvery = 100 * time.Millisecond
)

// Cgroup is one memory cgroup made by the benchmark.
type Cgroup struct {
	dir   string
	v2    bool
	limit int64 // bytes, 0 for none

	quit chan struct{}
	done chan struct{}
	mu   sync.Mutex
	peak CgroupStat // field-wise peak since the last ResetPeak
}

// CgroupStat is what the benchmark reads of a cgroup, in bytes and counts.
type CgroupStat struct {
	Anon     int64  // anonymous pages (heap, stacks): v1 total_rss, v2 anon
	File     int64  // page cache charged to it: v1 total_cache, v2 file
	Usage    int64  // charged memory: v1 usage_in_bytes, v2 memory.current
	MajFault uint64 // major page faults of its processes: pgmajfault
	OOMKills uint64 // OOM kills inside it: oom_kill of oom_control / memory.events
}

// NewCgroup makes a memory cgroup named name with a limit of limit bytes
// (0: none) and starts sampling its peaks. It says plainly why when it
// cannot.
func NewCgroup(name string, limit int64) (*Cgroup, error) {
	var c *Cgroup
	switch {
	case FileExists(filepath.Join(cgroupV1Root, "memory.limit_in_bytes")):
		c = &Cgroup{dir: filepath.Join(cgroupV1Root, name)}
	case FileExists(filepath.Join(cgroupV2Root, "cgroup.controllers")):
		b, err := os.ReadFile(filepath.Join(cgroupV2Root, "cgroup.controllers"))
		if err != nil || !strings.Contains(" "+string(b)+" ", " memory ") {
			return nil, fmt.Errorf("cgroup v2 at %s has no memory controller", cgroupV2Root)
		}
		// Children only get the memory files when the parent enables
		// the controller for its subtree.
		if err := os.WriteFile(filepath.Join(cgroupV2Root, "cgroup.subtree_control"), []byte("+memory"), 0); err != nil {
			return nil, fmt.Errorf("cgroup v2: enable memory for children: %w", err)
		}
		c = &Cgroup{dir: filepath.Join(cgroupV2Root, name), v2: true}
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
	if _, err := c.Stat(); err != nil {
		os.Remove(c.dir)
		return nil, err
	}
	c.quit, c.done = make(chan struct{}), make(chan struct{})
	go c.loop()
	return c, nil
}

// FileExists reports whether path can be stat'ed.
func FileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Command returns a command that runs name inside the cgroup (nil: as
// exec.CommandContext does): a shell writes its own pid into
// cgroup.procs and then execs name, so every page name touches is
// charged to the cgroup from its first instruction.
func (c *Cgroup) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	if c == nil {
		return exec.CommandContext(ctx, name, args...)
	}
	return exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, c.dir, name}, args...)...)
}

// Stat reads the cgroup's counters.
func (c *Cgroup) Stat() (CgroupStat, error) {
	var st CgroupStat
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
	st.Anon, st.File, st.MajFault = int64(kv[anon]), int64(kv[file]), kv[maj]
	b, err := os.ReadFile(filepath.Join(c.dir, usageFile))
	if err != nil {
		return st, err
	}
	u, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return st, fmt.Errorf("%s: %w", usageFile, err)
	}
	st.Usage = u
	ev, err := readKV(filepath.Join(c.dir, events))
	if err != nil {
		return st, err
	}
	k, ok := ev["oom_kill"]
	if !ok {
		return st, fmt.Errorf("%s has no oom_kill count (kernel too old to count OOM kills)", filepath.Join(c.dir, events))
	}
	st.OOMKills = k
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
// memory since the last ResetPeak (v1 max_usage_in_bytes; v2 memory.peak,
// Linux 5.19 and later), 0 when there is none.
func (c *Cgroup) kernelPeak() int64 {
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

func (c *Cgroup) loop() {
	defer close(c.done)
	t := time.NewTicker(CgroupEvery)
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

func (c *Cgroup) sample() {
	st, err := c.Stat()
	if err != nil {
		return
	}
	c.mu.Lock()
	c.peak.Anon = max(c.peak.Anon, st.Anon)
	c.peak.File = max(c.peak.File, st.File)
	c.peak.Usage = max(c.peak.Usage, st.Usage)
	c.mu.Unlock()
}

// ResetPeak returns the peaks since the last call (usage also from the
// kernel's high-water mark, which sees between samples) and starts anew.
func (c *Cgroup) ResetPeak() CgroupStat {
	c.sample()
	c.mu.Lock()
	p := c.peak
	c.peak = CgroupStat{}
	c.mu.Unlock()
	p.Usage = max(p.Usage, c.kernelPeak())
	if !c.v2 {
		os.WriteFile(filepath.Join(c.dir, "memory.max_usage_in_bytes"), []byte("0"), 0)
	}
	return p
}

// Remove stops the sampling and removes the cgroup; its processes must
// have exited. Its remaining page cache is charged to the parent.
func (c *Cgroup) Remove() error {
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
