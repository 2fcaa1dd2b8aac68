package intake

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"quire/storage"
)

// TestPruneJournal: the journal keeps a watched file's entry while the
// file is still at its path (taken, not cleared) and drops it once the
// file is gone and the grace has passed; another source's entry (a mail)
// goes after journalKeep. A file whose entry stayed is repeated, not
// taken twice.
func TestPruneJournal(t *testing.T) {
	db, err := storage.Open(storage.Config{Dir: t.TempDir(), MinFreeBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	in := New(Config{Applier: db, Store: db, Now: func() time.Time { return now }})
	ctx := context.Background()
	prof := storage.IntakeProfile{Name: "scan", PathTemplate: "Scans/{filename}", UserID: "admin", Duplicates: storage.IntakeKeepBoth,
		Watch: &storage.IntakeWatch{Enabled: true, StableSeconds: 1, OnSuccess: storage.IntakeMove}}
	cmd := storage.MustCommand(storage.OpPutIntakeProfile, "default", "admin", now, storage.PutIntakeProfile{Profile: prof, Create: true})
	if _, err := db.Apply(ctx, cmd); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	w := NewWatcher(in, root, time.Second, nil)
	dir, err := WatchDir(root, "default", "scan")
	if err != nil {
		t.Fatal(err)
	}
	if err := Prepare(dir); err != nil {
		t.Fatal(err)
	}
	mtime := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	write := func(name, body string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	scan := func() {
		w.Scan(ctx)
		now = now.Add(2 * time.Second)
		w.Scan(ctx)
	}
	entries := func() int {
		n := 0
		if err := db.EachIntakeJournal(func(string, string, storage.IntakeRecord) bool { n++; return true }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	write("a.pdf", "%PDF-1.4 a")
	write("b.pdf", "%PDF-1.4 b")
	scan()
	if _, err := os.Stat(filepath.Join(dir, DoneDir, "b.pdf")); err != nil {
		t.Fatalf("b.pdf not taken: %v", err)
	}
	// b.pdf is back as it was: its intake committed, its move not done.
	write("b.pdf", "%PDF-1.4 b")
	if _, err := in.Take(ctx, "default", &prof, Source{Kind: KindSMTP, Name: "m.pdf", Key: "mail\x00<1@mfp>\x001"}, bytes.NewReader([]byte("%PDF-1.4 m"))); err != nil {
		t.Fatal(err)
	}
	if n := entries(); n != 3 {
		t.Fatalf("%d journal entries, want 3", n)
	}
	for _, step := range []struct {
		after time.Duration
		want  int // entries left
	}{
		{0, 3},                  // within the grace: all stay
		{2 * time.Hour, 2},      // a.pdf is gone: its entry goes; b.pdf is still there
		{8 * 24 * time.Hour, 1}, // the mail's entry is older than journalKeep
	} {
		now = now.Add(step.after)
		if _, err := w.PruneJournal(ctx); err != nil {
			t.Fatal(err)
		}
		if n := entries(); n != step.want {
			t.Errorf("after %v: %d journal entries, want %d", step.after, n, step.want)
		}
	}
	// b.pdf's entry stayed: it is cleared, not taken again.
	scan()
	if _, err := os.Stat(filepath.Join(dir, "b.pdf")); err == nil {
		t.Errorf("b.pdf is still in the folder")
	}
	if got := count(in.files.WithLabelValues(KindFolder, "scan", "created")); got != 2 {
		t.Errorf("%v folder files created, want 2", got)
	}
	if got := count(in.files.WithLabelValues(KindFolder, "scan", "repeated")); got != 1 {
		t.Errorf("%v folder files repeated, want 1", got)
	}
	// Once cleared and past the grace, b.pdf's entry goes too.
	now = now.Add(2 * time.Hour)
	if _, err := w.PruneJournal(ctx); err != nil {
		t.Fatal(err)
	}
	if n := entries(); n != 0 {
		t.Errorf("%d journal entries at the end, want 0", n)
	}
}

// count is a counter's value.
func count(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		return -1
	}
	return m.GetCounter().GetValue()
}
