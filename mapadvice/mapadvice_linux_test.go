package mapadvice

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// mapFile maps a new file of n bytes at dir/name read-only and shared, as
// Bleve and Badger map theirs.
func mapFile(t *testing.T, dir, name string, n int) []byte {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, make([]byte, n), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := syscall.Mmap(int(f.Fd()), 0, n, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Munmap(b) })
	return b
}

// randomRead reports whether path's mapping is advised random; it fails
// the test when path is not mapped.
func randomRead(t *testing.T, path string) bool {
	t.Helper()
	rr, mapped, err := Advised(path)
	if err != nil {
		t.Fatal(err)
	}
	if !mapped {
		t.Fatalf("%s is not mapped", path)
	}
	return rr
}

func TestRandom(t *testing.T) {
	old := ScanEvery
	ScanEvery = 50 * time.Millisecond
	t.Cleanup(func() { ScanEvery = old })
	dir := t.TempDir()
	other := t.TempDir()
	mapFile(t, dir, "000001.sst", 1<<20)
	mapFile(t, dir, "sub/000002.zap", 1<<20)
	mapFile(t, dir, "000003.vlog", 1<<20)
	mapFile(t, other, "000004.sst", 1<<20)

	stop := Random(dir, ".sst", ".zap")
	defer stop()

	for _, c := range []struct {
		path string
		want bool
	}{
		{filepath.Join(dir, "000001.sst"), true},
		{filepath.Join(dir, "sub/000002.zap"), true},
		{filepath.Join(dir, "000003.vlog"), false},  // another suffix
		{filepath.Join(other, "000004.sst"), false}, // another directory
	} {
		if got := randomRead(t, c.path); got != c.want {
			t.Errorf("%s advised random: %v, want %v", c.path, got, c.want)
		}
	}

	// A file mapped later (a new table or segment) is advised by the watcher.
	late := filepath.Join(dir, "000005.zap")
	mapFile(t, dir, "000005.zap", 1<<20)
	deadline := time.Now().Add(10 * time.Second)
	for !randomRead(t, late) {
		if time.Now().After(deadline) {
			t.Fatalf("%s was not advised within 10s of being mapped", late)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// After the last registration stops, the watcher stops, and a new one
// starts with the next registration.
func TestRandom_StopAndRegisterAgain(t *testing.T) {
	for i := 0; i < 3; i++ {
		dir := t.TempDir()
		mapFile(t, dir, fmt.Sprintf("%d.sst", i), 1<<16)
		stop := Random(dir, ".sst")
		if !randomRead(t, filepath.Join(dir, fmt.Sprintf("%d.sst", i))) {
			t.Errorf("round %d: not advised", i)
		}
		stop()
		stop() // twice is harmless
		mu.Lock()
		running := stopCh != nil
		mu.Unlock()
		if running {
			t.Fatalf("round %d: the watcher runs with nothing registered", i)
		}
	}
}

func TestReadahead(t *testing.T) {
	dir := t.TempDir()
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		t.Fatal(err)
	}
	devName := fmt.Sprintf("%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))
	for _, c := range []struct {
		name   string
		target string            // where dev/block/<maj:min> points, "" for no link
		files  map[string]string // under the fake sysfs
		want   int
		device string
		ok     bool
	}{
		{"whole disk", "devices/vda", map[string]string{"devices/vda/queue/read_ahead_kb": "8192\n"}, 8192, "vda", true},
		{"partition reads its disk's queue", "devices/vda/vda1", map[string]string{
			"devices/vda/vda1/partition":      "1\n",
			"devices/vda/queue/read_ahead_kb": "128\n",
		}, 128, "vda", true},
		{"no block device", "", nil, 0, "", false},
		{"no queue", "devices/vda", map[string]string{"devices/vda/size": "1\n"}, 0, "", false},
		{"not a number", "devices/vda", map[string]string{"devices/vda/queue/read_ahead_kb": "lots\n"}, 0, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			for p, v := range c.files {
				full := filepath.Join(root, p)
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(full, []byte(v), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.MkdirAll(filepath.Join(root, "dev", "block"), 0o755); err != nil {
				t.Fatal(err)
			}
			if c.target != "" {
				if err := os.MkdirAll(filepath.Join(root, c.target), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(filepath.Join(root, c.target), filepath.Join(root, "dev", "block", devName)); err != nil {
					t.Fatal(err)
				}
			}
			old := sysfs
			sysfs = root
			defer func() { sysfs = old }()
			got, device, ok := Readahead(dir)
			if got != c.want || device != c.device || ok != c.ok {
				t.Errorf("Readahead = %d, %q, %v; want %d, %q, %v", got, device, ok, c.want, c.device, c.ok)
			}
		})
	}
}
