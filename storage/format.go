package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// StoreFormat is the layout of the records and content chunks this build
// reads and writes. The store's directory holds it in the file FORMAT,
// written when the store is created and after every migration. A store
// of a newer format (written by a newer release) is refused before
// anything of it is opened, so a rolled-back binary cannot damage it; a
// store of an older format is migrated by Open, step by step, with its
// progress in the log (migrations). Bump it, and add the step, whenever
// the meaning of a stored key or value changes.
//
// 1: the layout of every release before the marker existed (a store
// without FORMAT is format 1: the upgrade test, upgrade/, proves the
// current build reads one written by an older release).
const StoreFormat = 1

// formatFile is the marker's name in the store's directory.
const formatFile = "FORMAT"

// migrations[n] turns a store of format n into format n+1, inside Open
// (nothing else runs on the store yet). None exists yet: format 1 is the
// first numbered one.
var migrations = map[int]func(d *DB) error{}

// FormatError is Open's answer for a store it does not understand: one
// written by a newer release, or a marker it cannot read. Nothing of the
// store was opened or changed.
type FormatError struct {
	Dir   string
	Found string // the marker's content ("" when unreadable)
	Err   error  // why it could not be read, if so
}

func (e *FormatError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("the store in %s has a format marker this release cannot read (%v); it was left untouched", e.Dir, e.Err)
	}
	return fmt.Sprintf("the store in %s is format %s, written by a newer release of Quire; this release reads format %d at most. "+
		"It was left untouched: run the newer release again, or roll back by restoring a backup taken before the upgrade into a new data dir (README, \"Upgrading and rolling back\")",
		e.Dir, e.Found, StoreFormat)
}

// readFormat reads the marker in dir: 0 when there is none.
func readFormat(dir string) (int, error) {
	b, err := os.ReadFile(filepath.Join(dir, formatFile))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, &FormatError{Dir: dir, Err: err}
	}
	s := strings.TrimSpace(string(b))
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		if err == nil {
			err = fmt.Errorf("%q is not a format number", s)
		}
		return 0, &FormatError{Dir: dir, Found: s, Err: err}
	}
	if n > StoreFormat {
		return n, &FormatError{Dir: dir, Found: s}
	}
	return n, nil
}

// CheckFormat says whether this build can open the store in dir (a
// FormatError when it cannot), without opening or changing anything.
func CheckFormat(dir string) error {
	_, err := readFormat(dir)
	return err
}

// MarkFormat records n as the format of the store in dir, which a
// restore just wrote from a snapshot of a store of that format.
func MarkFormat(dir string, n int) error {
	if n < 1 || n > StoreFormat {
		return &FormatError{Dir: dir, Found: strconv.Itoa(n)}
	}
	return writeFormat(dir, n)
}

// writeFormat records n as the store's format: written under a temporary
// name, synced and renamed, so a crash leaves the old marker or the new.
func writeFormat(dir string, n int) error {
	tmp := filepath.Join(dir, formatFile+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "%d\n", n)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, formatFile))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write the store's format marker: %w", err)
	}
	// The rename is durable once the directory is synced (best effort:
	// Windows cannot sync a directory).
	if f, err := os.Open(dir); err == nil {
		f.Sync()
		f.Close()
	}
	return nil
}

// hasStore says whether dir already holds a Badger store.
func hasStore(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "MANIFEST"))
	return err == nil
}

// upgradeFormat brings the just opened store from format found (0: no
// marker) to StoreFormat and records it. A read-only open (full disk)
// migrates nothing and writes no marker: the next read-write open does.
func (d *DB) upgradeFormat(found int, existed bool) error {
	if found == StoreFormat || d.readOnly.Load() {
		return nil
	}
	from := found
	if found == 0 {
		if existed {
			d.log.Info("store format: the store has no format marker (written before release markers existed), it is format 1", "dir", d.dir)
		}
		from = 1
	}
	for v := from; v < StoreFormat; v++ {
		m, ok := migrations[v]
		if !ok {
			return fmt.Errorf("no migration of the store from format %d to %d", v, v+1)
		}
		d.log.Info("store format: migrating", "from", v, "to", v+1)
		if err := m(d); err != nil {
			return fmt.Errorf("migrate the store from format %d to %d: %w", v, v+1, err)
		}
		if err := writeFormat(d.dir, v+1); err != nil {
			return err
		}
		d.log.Info("store format: migrated", "to", v+1)
	}
	return writeFormat(d.dir, StoreFormat)
}
