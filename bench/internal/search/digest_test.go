package search

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"quire/bench/internal/harness"
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
	s := &session{&harness.Session{Rep: &harness.Report{}, Root: t.TempDir(), Progress: io.Discard}}
	if err := s.scaleDigest(ctx, dir, 200); err != nil {
		t.Fatal(err)
	}
	if len(s.Rep.Rows) != 1 || !strings.HasPrefix(s.Rep.Rows[0].Name, "replica digest walk") || s.Rep.Rows[0].Ratio == "" {
		t.Fatalf("rows %+v", s.Rep.Rows)
	}
	if len(s.Rep.Notes) != 1 || !strings.Contains(s.Rep.Notes[0], ": 200 documents,") {
		t.Fatalf("notes %q", s.Rep.Notes)
	}
	t.Logf("%+v; %s", s.Rep.Rows[0], s.Rep.Notes[0])
}
