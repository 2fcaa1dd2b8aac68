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
