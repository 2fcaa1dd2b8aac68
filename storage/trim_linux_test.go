package storage

import (
	"bufio"
	"bytes"
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// vlogResident sums the resident kB of this process's mappings of the
// value-log files in dir.
func vlogResident(t *testing.T, dir string) (kb int, mapped bool) {
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
		if fs := strings.Fields(line); len(fs) >= 5 && strings.Contains(fs[0], "-") && !strings.HasSuffix(fs[0], ":") {
			in = len(fs) >= 6 && strings.HasSuffix(fs[5], ".vlog") && filepath.Dir(fs[5]) == dir
			mapped = mapped || in
			continue
		}
		if in && strings.HasPrefix(line, "Rss:") {
			n, _ := strconv.Atoi(strings.Fields(line)[1])
			kb += n
		}
	}
	return kb, mapped
}

// trimMappedFiles takes the value log's resident pages out of the
// process (they stay in the page cache): content read through the
// mapping no longer counts in the server's RSS.
func TestTrimMappedFiles_ValueLog(t *testing.T) {
	t.Parallel() // own store, no package or process state
	dir, err := filepath.Abs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d, err := Open(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	data := make([]byte, 4*ChunkSize)
	rand.New(rand.NewSource(3)).Read(data)
	if _, _, err := WriteContent(context.Background(), d, bytes.NewReader(data), 0, nil); err != nil {
		t.Fatal(err)
	}
	before, mapped := vlogResident(t, dir)
	if !mapped || before < 1024 {
		t.Fatalf("the value log holds %d kB resident (mapped %v) after writing 4 MiB through it", before, mapped)
	}
	d.gcMu.Lock()
	d.writeMu.Lock()
	trimMappedFiles(dir)
	d.writeMu.Unlock()
	d.gcMu.Unlock()
	after, _ := vlogResident(t, dir)
	if after > before/4 {
		t.Errorf("after the trim %d kB of the value log are resident (before %d)", after, before)
	}
	t.Logf("value log resident: %d kB before the trim, %d after", before, after)
}
