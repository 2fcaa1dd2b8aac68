package safepath

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckSegment(t *testing.T) {
	for _, tt := range []struct {
		seg string
		ok  bool
	}{
		{"default", true}, {"scan-1", true}, {"%2Ffinance%2Fhr", true}, {"Rechnungen 2026", true}, {"..foo", true},
		{"", false}, {".", false}, {"..", false}, {"...", false}, {".. ", false}, {"a/b", false}, {`a\b`, false},
		{"/", false}, {`\`, false}, {"c:", false}, {"a:stream", false}, {"a\x00b", false}, {"a\nb", false},
		{"con", false}, {"CON", false}, {"nul.txt", false}, {"Com1", false}, {"lpt9.pdf", false}, {"aux ", false},
		{"COM¹", false}, {"conin$", false}, {"a|b", false}, {"a?b", false}, {"a*b", false}, {`a"b`, false},
		{"a<b", false}, {"trailing.", false}, {"\xff", false}, {strings.Repeat("a", 256), false},
		{"console", true}, {"com10", true}, {"lpt", true},
	} {
		if err := CheckSegment(tt.seg); (err == nil) != tt.ok {
			t.Errorf("CheckSegment(%q) = %v, want ok %v", tt.seg, err, tt.ok)
		}
	}
}

func TestJoin_StaysUnderRoot(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(root, "site"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "site"), filepath.Join(root, "inner")); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name    string
		segs    []string
		want    string // "" for an error
		outside bool
	}{
		{"plain", []string{"site", "scan"}, filepath.Join(root, "site", "scan"), false},
		{"not there yet", []string{"new", "scan"}, filepath.Join(root, "new", "scan"), false},
		{"dot dot", []string{"..", "scan"}, "", false},
		{"separator", []string{"a/../../x"}, "", false},
		{"a link out of the root", []string{"link", "scan"}, "", true},
		{"a link that stays inside", []string{"inner", "scan"}, filepath.Join(root, "inner", "scan"), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Join(root, tt.segs...)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("Join(%q) = %s, want an error", tt.segs, got)
				}
				if tt.outside && !errors.Is(err, ErrOutside) {
					t.Fatalf("Join(%q): %v, want ErrOutside", tt.segs, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Join(%q) = %s, %v; want %s", tt.segs, got, err, tt.want)
			}
		})
	}
	// A root that is itself a link is the operator's: trusted.
	lroot := filepath.Join(base, "lroot")
	if err := os.Symlink(root, lroot); err != nil {
		t.Fatal(err)
	}
	if _, err := Join(lroot, "site", "scan"); err != nil {
		t.Errorf("a linked root: %v", err)
	}
}

// FuzzJoin: whatever two segments are, Join either refuses them or
// answers a path directly below root with exactly those two names (never
// one that cleaning collapsed, never a separator or a navigation inside).
func FuzzJoin(f *testing.F) {
	for _, s := range [][2]string{{"default", "scan"}, {"..", "x"}, {"a/b", "c"}, {`..\..`, "x"}, {"con", "x"},
		{"x", "nul.txt"}, {"...", ""}, {"a\x00", "b"}, {"%2E%2E", "scan"}, {"c:", "x"}, {"ok", ". "}} {
		f.Add(s[0], s[1])
	}
	root := filepath.Join(f.TempDir(), "root")
	f.Fuzz(func(t *testing.T, a, b string) {
		p, err := Join(root, a, b)
		if err != nil {
			return
		}
		for _, s := range []string{a, b} {
			if CheckSegment(s) != nil || s == "." || s == ".." || strings.ContainsAny(s, `/\:`+"\x00") {
				t.Fatalf("Join accepted segment %q", s)
			}
		}
		if p != root+string(filepath.Separator)+a+string(filepath.Separator)+b {
			t.Fatalf("Join(%q, %q) = %q: not the two names below root", a, b, p)
		}
		if filepath.Clean(p) != p {
			t.Fatalf("Join(%q, %q) = %q is not clean", a, b, p)
		}
	})
}
