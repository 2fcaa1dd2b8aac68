// Package safepath is the one place where an identifier becomes a file
// system path (issue 43, finding 3). Site ids, intake profile names,
// backup entries and anything later that names a folder or a file are
// checked by CheckSegment, which refuses what would navigate or name a
// device on any operating system Quire runs on, and every path made from
// them is built by Join, which verifies the result stays under its root
// after cleaning and after following symbolic links.
//
// Why both: a segment check alone trusts every other part of the path
// (a root that is itself a link, a folder that an operator or an attacker
// with file access replaced by a link), and a containment check alone
// accepts a name like "con" or "a:b" that stays under the root on Linux
// but is a device or an alternate data stream on Windows.
package safepath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// MaxSegment is the longest segment in bytes (the common file system
// limit for one name).
const MaxSegment = 255

// ErrOutside is a path that would leave its root.
var ErrOutside = errors.New("path leaves its root")

// SegmentError says why a string cannot be one path segment.
type SegmentError struct {
	Segment string
	Reason  string
}

func (e *SegmentError) Error() string {
	return fmt.Sprintf("%q cannot name a folder or file: %s", e.Segment, e.Reason)
}

// reserved are the Windows device names: a file of that name, with any
// extension, opens the device in every folder.
var reserved = map[string]bool{"CON": true, "PRN": true, "AUX": true, "NUL": true, "CONIN$": true, "CONOUT$": true, "CLOCK$": true}

func init() {
	for _, p := range []string{"COM", "LPT"} {
		for _, d := range []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "¹", "²", "³"} {
			reserved[p+d] = true
		}
	}
}

// CheckSegment reports why s cannot be one segment of a path on Linux,
// macOS or Windows (nil when it can): empty, longer than MaxSegment, not
// UTF-8, "." or "..", a separator of any of them ("/", "\"), a drive or
// stream colon, NUL or another control character, the characters Windows
// refuses in names (<>"|?*), a trailing dot or space (Windows drops them,
// so "..." and ".. " are ".."), or a reserved device name (CON, PRN, AUX,
// NUL, COM0-9, LPT0-9, with or without an extension).
func CheckSegment(s string) error {
	bad := func(why string) error { return &SegmentError{Segment: s, Reason: why} }
	switch {
	case s == "":
		return bad("empty")
	case len(s) > MaxSegment:
		return bad(fmt.Sprintf("longer than %d bytes", MaxSegment))
	case !utf8.ValidString(s):
		return bad("not UTF-8")
	case s == "." || s == "..":
		return bad("a relative folder")
	}
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f:
			return bad("a control character")
		case strings.ContainsRune(`/\:<>"|?*`, r):
			return bad(fmt.Sprintf("the character %q", r))
		}
	}
	if last := s[len(s)-1]; last == '.' || last == ' ' {
		return bad("a trailing dot or space")
	}
	base := s
	if i := strings.IndexByte(base, '.'); i >= 0 {
		base = base[:i]
	}
	if reserved[strings.ToUpper(strings.TrimRight(base, " "))] {
		return bad("a reserved device name")
	}
	return nil
}

// Join joins root and segs, each checked by CheckSegment, and verifies
// the result stays under root: lexically after cleaning, and again after
// resolving symbolic links of the part that exists (a link anywhere
// below root that points outside it is refused with ErrOutside). root
// itself is trusted (the operator's setting) and may be a link.
func Join(root string, segs ...string) (string, error) {
	if root == "" {
		return "", errors.New("no root")
	}
	for _, s := range segs {
		if err := CheckSegment(s); err != nil {
			return "", err
		}
	}
	p := filepath.Join(append([]string{root}, segs...)...)
	if err := Within(root, p); err != nil {
		return "", err
	}
	return p, nil
}

// Within verifies that p is root or below it: lexically after cleaning,
// and after resolving the symbolic links of the longest part of p that
// exists (compared with root resolved the same way).
func Within(root, p string) error {
	root, p = filepath.Clean(root), filepath.Clean(p)
	if !under(root, p) {
		return fmt.Errorf("%w: %s is not under %s", ErrOutside, p, root)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // nothing exists yet: nothing can be a link
	}
	if err != nil {
		return err
	}
	// The longest existing prefix of p, resolved; what follows it does
	// not exist yet and so holds no link.
	existing, rest := p, ""
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		parent := filepath.Dir(existing)
		if parent == existing || !under(root, parent) {
			return nil
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return err
	}
	if !under(realRoot, filepath.Join(real, rest)) {
		return fmt.Errorf("%w: %s leads to %s, outside %s", ErrOutside, p, real, realRoot)
	}
	return nil
}

// under reports whether the clean path p is root or below it.
func under(root, p string) bool {
	if p == root {
		return true
	}
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
