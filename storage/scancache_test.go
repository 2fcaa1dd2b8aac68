package storage

import (
	"io"
	"log/slog"
	"strings"
	"testing"
)

// TestScanCached_SeesItsOwnWrites: a cached scan is dropped by a write
// or a delete under its prefix in the same transaction, and kept by a
// write elsewhere.
func TestScanCached_SeesItsOwnWrites(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d, err := Open(Config{Dir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	txn := d.bdb.NewTransaction(true)
	defer txn.Discard()
	tx := &tx{txn: txn}
	scan := func(t *testing.T) string {
		t.Helper()
		var keys []string
		if err := tx.scanCached([]byte("esb/s/"), func(k, _ []byte) error {
			keys = append(keys, string(k))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return strings.Join(keys, " ")
	}
	steps := []struct {
		name  string
		write func() error
		want  string
	}{
		{"empty", func() error { return nil }, ""},
		{"a write under the prefix", func() error { return tx.set([]byte("esb/s/a"), []byte("1")) }, "esb/s/a"},
		{"a write elsewhere keeps the cache", func() error { return tx.set([]byte("esb/t/b"), []byte("1")) }, "esb/s/a"},
		{"another write under the prefix", func() error { return tx.set([]byte("esb/s/c"), []byte("1")) }, "esb/s/a esb/s/c"},
		{"a delete under the prefix", func() error { return tx.del([]byte("esb/s/a")) }, "esb/s/c"},
	}
	for _, s := range steps {
		if err := s.write(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := scan(t); got != s.want {
			t.Errorf("%s: scan %q, want %q", s.name, got, s.want)
		}
		if got := scan(t); got != s.want {
			t.Errorf("%s: second scan %q, want %q", s.name, got, s.want)
		}
	}
}
