package index

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// TestSegmentBuffer_SmallBatchAfterLargeDocument: the batch after a large
// document's allocates about what it needs. Zap sizes a new segment's
// buffer from the last segment any index of the process built (one pool
// for all), times the batch's documents plus 100: a one-document names
// batch after 1 MiB of text allocated 466 MiB and zeroed it (39% of a
// test package's CPU under the race detector; a spike a 512 MiB server
// cannot afford).
func TestSegmentBuffer_SmallBatchAfterLargeDocument(t *testing.T) {
	x, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	var words strings.Builder
	for i := 0; words.Len() < 128<<10; i++ {
		fmt.Fprintf(&words, "word%d ", i)
	}
	big := Doc{Site: "default", ID: "big", Path: "big.txt", ContentType: "text/plain", Content: words.String()}
	if err := x.PutText([]Doc{big}, nil); err != nil {
		t.Fatal(err)
	}
	const budget = 8 << 20
	for i := range 6 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		d := Doc{Site: "default", ID: fmt.Sprintf("small%d", i), Path: fmt.Sprintf("small%d.txt", i)}
		if err := x.PutNames([]Doc{d}, nil); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		if got := after.TotalAlloc - before.TotalAlloc; got > budget {
			t.Fatalf("names batch %d of one document after a %d-byte text allocated %d MiB, want under %d MiB", i, len(big.Content), got>>20, budget>>20)
		}
		if err := x.PutText([]Doc{big}, nil); err != nil {
			t.Fatal(err)
		}
	}
}
