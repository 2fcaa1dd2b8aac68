package index

import (
	"errors"
	"strings"
	"testing"
	"time"

	"quire/storage"
)

// TestText_Deadline: a query still running at its deadline is cancelled
// and answered as a validation error, not left to run.
func TestText_Deadline(t *testing.T) {
	x, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if err := x.Put([]Doc{{Site: "default", ID: "d1", Path: "a.txt", Content: "alpha beta gamma", Inserted: time.Now()}}, nil); err != nil {
		t.Fatal(err)
	}
	if hits, _, err := x.Text("default", "alpha", TextOptions{Syntax: true}); err != nil || len(hits) != 1 {
		t.Fatalf("hits %v, err %v", hits, err)
	}
	old := queryTimeout
	queryTimeout = time.Nanosecond
	t.Cleanup(func() { queryTimeout = old })
	_, _, err = x.Text("default", "alpha", TextOptions{Syntax: true})
	var ve *storage.ValidationError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "did not finish within") {
		t.Fatalf("err %v, want the deadline's validation error", err)
	}
}

// TestText_PhraseNeedsOrder: a quoted phrase matches its words in order
// and next to each other only (content keeps term vectors for this), and
// word and prefix queries still match.
func TestText_PhraseNeedsOrder(t *testing.T) {
	x, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	docs := []Doc{
		{Site: "default", ID: "in-order", Path: "a.txt", Content: "alpha beta gamma", Inserted: time.Now()},
		{Site: "default", ID: "reversed", Path: "b.txt", Content: "gamma beta alpha", Inserted: time.Now()},
		{Site: "default", ID: "apart", Path: "c.txt", Content: "beta delta gamma", Inserted: time.Now()},
	}
	if err := x.Put(docs, nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{`"beta gamma"`, []string{"in-order"}},
		{`"gamma beta"`, []string{"reversed"}},
		{`delta`, []string{"apart"}},
		{`del*`, []string{"apart"}},
	} {
		hits, _, err := x.Text("default", tc.q, TextOptions{Syntax: true})
		if err != nil {
			t.Fatalf("%s: %v", tc.q, err)
		}
		var got []string
		for _, h := range hits {
			got = append(got, h.ID)
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s: hits %v, want %v", tc.q, got, tc.want)
		}
	}
}
