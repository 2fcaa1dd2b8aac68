package search

import (
	"context"
	"testing"
	"time"

	"quire/node"

	"quire/bench/internal/harness"
)

// TestMetrics_NamesAgreeWithServer reads a real node's /metrics through
// the bench's own readers: the series the query phases wait on and count
// must be the ones the server exports. The search phase of make bench once
// failed on a third best-hits series the server had gained.
func TestMetrics_NamesAgreeWithServer(t *testing.T) {
	p, err := harness.StartInproc(t.TempDir(), node.ClusterConfig{})
	if err != nil {
		t.Fatalf("start a node: %v", err)
	}
	t.Cleanup(p.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	best, err := bestHits(ctx, p.Server)
	if err != nil {
		t.Fatalf("bestHits: %v", err)
	}
	for _, label := range []string{"used", "built"} {
		if _, ok := best[label]; !ok {
			t.Errorf("bestHits has no %q series: %v", label, best)
		}
	}

	st, err := indexSegments(ctx, p.Server)
	if err != nil {
		t.Fatalf("indexSegments: %v", err)
	}
	for _, c := range []struct {
		what string
		ok   bool
	}{
		{"quire_index_segments", st.known},
		{"quire_index_warm_running", st.warmKnown},
		{"quire_site_counts_running", st.countKnown},
	} {
		if !c.ok {
			t.Errorf("the bench does not find %s in the server's /metrics", c.what)
		}
	}
}
