package intake

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"quire/storage"
)

func TestIgnored(t *testing.T) {
	for name, want := range map[string]bool{
		"scan.pdf": false, "Scan 0001.PDF": false, "a.error.txt.pdf": false,
		".hidden": true, "~$doc.docx": true, "x.tmp": true, "X.TMP": true, "x.part": true,
		"scan.pdf.error.txt": true, "Thumbs.db": true, "desktop.ini": true,
	} {
		if got := Ignored(name); got != want {
			t.Errorf("Ignored(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestWatchDir(t *testing.T) {
	if d, err := WatchDir("", "default", "p"); d != "" || err != nil {
		t.Errorf("no root: %q %v", d, err)
	}
	if d, err := WatchDir("/srv/scans", "/finance/hr", "p"); err != nil || d != filepath.Join("/srv/scans", "%2Ffinance%2Fhr", "p") {
		t.Errorf("a site with slashes: %q %v", d, err)
	}
	// Ids that would leave the root or name a device (issue 43).
	for _, c := range [][2]string{{"..", "p"}, {".", "p"}, {"...", "p"}, {"a:b", "p"}, {"com1", "p"}, {"default", "con"}, {"default", ".."}} {
		if d, err := WatchDir("/srv/scans", c[0], c[1]); err == nil {
			t.Errorf("WatchDir(%q, %q) = %q, want an error", c[0], c[1], d)
		}
	}
}

func TestPermanent(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{storage.Invalid("k", "bad"), true},
		{fmt.Errorf("wrapped: %w", &storage.AccessError{Msg: "no"}), true},
		{&TooLargeError{Limit: 1}, true},
		{ErrEmpty, true},
		{errChanged, false},
		{storage.ErrClosed, false},
		{errors.New("disk full"), false},
	} {
		if got := Permanent(tt.err); got != tt.want {
			t.Errorf("Permanent(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
