package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// TestScaleDigest_Row runs the replica digest row on a small corpus: it
// counts the corpus's documents, and the row and its note are reported.
func TestScaleDigest_Row(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	if err := loadCorpus(ctx, dir, newCorpus(), 200); err != nil {
		t.Fatal(err)
	}
	s := &session{rep: &report{}, root: t.TempDir(), progress: io.Discard}
	if err := s.scaleDigest(ctx, dir, 200); err != nil {
		t.Fatal(err)
	}
	if len(s.rep.rows) != 1 || !strings.HasPrefix(s.rep.rows[0].name, "replica digest walk") || s.rep.rows[0].ratio == "" {
		t.Fatalf("rows %+v", s.rep.rows)
	}
	if len(s.rep.notes) != 1 || !strings.Contains(s.rep.notes[0], ": 200 documents,") {
		t.Fatalf("notes %q", s.rep.notes)
	}
	t.Logf("%+v; %s", s.rep.rows[0], s.rep.notes[0])
}
