package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxPackageLines is the house rule of issue 45: a package a newcomer can
// read has at most this many lines of non-test Go. storage/ is the one
// exception, because its single transaction, key layout and applier table
// are what enforce the architectural rule (storage/doc.go maps its files to
// domains instead).
const maxPackageLines = 4000

var largePackages = map[string]bool{"storage": true}

// packageLines counts the lines of non-test Go files per directory under
// root, skipping directories Go ignores (testdata, dot and underscore
// names) and build outputs.
func packageLines(t *testing.T, root string) map[string]int {
	t.Helper()
	lines := map[string]int{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "build" || name == "node_modules" ||
				strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		lines[filepath.ToSlash(rel)] += bytes.Count(b, []byte("\n"))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// oversized lists the packages over the limit that are not exempt, in order.
func oversized(lines map[string]int) []string {
	var out []string
	for dir, n := range lines {
		if n > maxPackageLines && !largePackages[dir] {
			out = append(out, dir)
		}
	}
	sort.Strings(out)
	return out
}

func TestHouse_NoPackageOverTheLimit(t *testing.T) {
	lines := packageLines(t, ".")
	for _, dir := range []string{".", "server", "storage", "pipeline", "index"} {
		if lines[dir] == 0 {
			t.Errorf("counted no lines in %s: the walk is wrong", dir)
		}
	}
	for _, dir := range oversized(lines) {
		t.Errorf("package %s has %d lines of non-test Go, over the house limit of %d: split it by concern", dir, lines[dir], maxPackageLines)
	}
}

func TestHouse_OversizedFindsWhatIsOver(t *testing.T) {
	tests := []struct {
		name  string
		lines map[string]int
		want  []string
	}{
		{"all under", map[string]int{"a": 10, "b": maxPackageLines}, nil},
		{"one over", map[string]int{"a": maxPackageLines + 1, "b": 3}, []string{"a"}},
		{"storage is exempt", map[string]int{"storage": 3 * maxPackageLines}, nil},
		{"a storage subpackage is not", map[string]int{"storage/x": maxPackageLines + 1}, []string{"storage/x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := oversized(tt.lines)
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("oversized = %v, want %v", got, tt.want)
			}
		})
	}
}
