package storage

import (
	"fmt"
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

// TestFresh_ReadsWhatBadgerReads: under the prefixes of a document the
// command created (markFresh), each reads the command's own writes
// without a Badger iterator, and what it reads is what an iterator of the
// same transaction reads, after writes, rewrites and deletes, with an
// earlier command's writes pending in the transaction (a group commit)
// and committed keys of other documents around.
func TestFresh_ReadsWhatBadgerReads(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d, err := Open(Config{Dir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	const doc, other = "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"
	before := d.bdb.NewTransaction(true)
	for _, k := range [][]byte{tagKey("default", other, "a"), actionKey("default", other, 0, 0), tagKey("s2", doc, "a")} {
		if err := before.Set(k, []byte("committed")); err != nil {
			t.Fatal(err)
		}
	}
	if err := before.Commit(); err != nil {
		t.Fatal(err)
	}
	txn := d.bdb.NewTransaction(true)
	defer txn.Discard()
	earlier := &tx{txn: txn} // an earlier command of the group
	if err := earlier.set(tagKey("default", other, "b"), []byte("pending")); err != nil {
		t.Fatal(err)
	}
	fresh := &tx{txn: txn}
	fresh.markFresh("default", doc)
	plain := &tx{txn: txn} // the same transaction, read through Badger
	read := func(t *testing.T, x *tx, prefix []byte) string {
		t.Helper()
		var kvs []string
		if err := x.each(prefix, func(k, v []byte) error {
			kvs = append(kvs, string(k)+"="+string(v))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return strings.Join(kvs, " ")
	}
	steps := []struct {
		name  string
		write func() error
	}{
		{"nothing written", func() error { return nil }},
		{"tags", func() error {
			for _, k := range []string{"z", "a", "m/n", "m"} {
				if err := fresh.set(tagKey("default", doc, k), []byte(k)); err != nil {
					return err
				}
			}
			return nil
		}},
		{"a tag rewritten", func() error { return fresh.set(tagKey("default", doc, "a"), []byte("again")) }},
		{"a tag deleted", func() error { return fresh.del(tagKey("default", doc, "z")) }},
		{"actions and attributes", func() error {
			for seq := range 12 {
				if err := fresh.set(actionKey("default", doc, seq, 0), []byte(fmt.Sprint(seq))); err != nil {
					return err
				}
			}
			return fresh.set(docAttrKey("default", doc, "customer"), []byte("x"))
		}},
		{"a deleted key written again", func() error { return fresh.set(tagKey("default", doc, "z"), []byte("back")) }},
	}
	prefixes := [][]byte{tagPrefix("default", doc), tagKey("default", doc, "m"), actionPrefix("default", doc), docAttrPrefix("default", doc)}
	for _, s := range steps {
		if err := s.write(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		for _, p := range prefixes {
			if fresh.freshOf(p) == nil {
				t.Fatalf("%s: %q is not read as fresh", s.name, p)
			}
			if got, want := read(t, fresh, p), read(t, plain, p); got != want {
				t.Errorf("%s: under %q fresh read %q, Badger %q", s.name, p, got, want)
			}
		}
	}
	if got, want := read(t, fresh, tagPrefix("default", other)), string(tagKey("default", other, "a"))+"=committed "+string(tagKey("default", other, "b"))+"=pending"; got != want {
		t.Errorf("another document's tags read through the fresh command: %q", got)
	}
}
