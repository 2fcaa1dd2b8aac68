package search

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"quire/bench/internal/harness"
)

// The idle merge (index/DESIGN.md, "Idle merge") merges the server's
// search indexes down once they have been quiet for index.merge_idle
// (30 s), and then warms the cached best hits of the costliest words
// (index/DESIGN.md, "Warming"). A query phase measured while they run
// measures them too, and one measured before them the segments a load
// left behind and a cold cache. So the query phases first wait for both,
// by the server's own metrics.
const (
	// mergeAbove is the server's threshold: an index with more segments
	// is merged down (index.mergeAbove).
	mergeAbove = 4
	// mergeNotStarted: no merge or warm pass running for this long since
	// the wait began or the last one ended means none is coming (idle
	// merge off, or a pass ended before the wait began); longer than the
	// default 30 s.
	mergeNotStarted = 45 * time.Second
	// mergeWaitMax bounds the wait (a million documents rewrite 1.2 GB).
	mergeWaitMax = 20 * time.Minute
)

// segmentState is what /metrics says of the index's segments.
type segmentState struct {
	text, names int
	merging     bool
	merged      float64 // idle merge steps so far
	known       bool    // the server reports segments (older binaries do not)
	warming     bool    // the best-hits warm pass runs or follows the merge
	warmPasses  float64 // warm passes ended (done or yielded)
	warmed      float64 // best-hits entries the warm passes built
	warmKnown   bool    // the server reports warm passes
	// The per-site counts, which read the whole store in the background
	// (storage/DESIGN.md, "Counting at a million"): a query phase waits
	// for the first to end, so that it does not share the disk with it.
	countKnown bool // the server reports quire_site_counts_running
	counting   bool // a count runs
	counted    bool // a count has ended (quire_site_counts_age_seconds)
}

func (s segmentState) String() string {
	if !s.known {
		return "not reported"
	}
	if !s.warmKnown {
		return fmt.Sprintf("text %d, names %d", s.text, s.names)
	}
	return fmt.Sprintf("text %d, names %d; best hits warmed %.0f", s.text, s.names, s.warmed)
}

// indexSegments reads the segment gauges from the server's /metrics.
func indexSegments(ctx context.Context, srv *harness.Server) (segmentState, error) {
	resp, err := srv.Request(ctx, http.MethodGet, "/metrics", nil, 0, "")
	if err != nil {
		return segmentState{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return segmentState{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return segmentState{}, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	var st segmentState
	for _, line := range strings.Split(string(b), "\n") {
		name, v, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			continue
		}
		switch name {
		case `quire_index_segments{index="text"}`:
			st.text, st.known = int(f), true
		case `quire_index_segments{index="names"}`:
			st.names = int(f)
		case `quire_index_idle_merge_running`:
			st.merging = f == 1
		case `quire_index_idle_merges_total{result="merged"}`:
			st.merged = f
		case `quire_index_warm_running`:
			st.warming, st.warmKnown = f == 1, true
		case `quire_index_warm_passes_total{result="done"}`, `quire_index_warm_passes_total{result="yielded"}`:
			st.warmPasses += f
		case `quire_index_best_hits_total{result="warmed"}`:
			st.warmed = f
		case `quire_site_counts_running`:
			st.countKnown, st.counting = true, f == 1
		case `quire_site_counts_age_seconds`:
			st.counted = true
		}
	}
	return st, nil
}

// waitIdleMerge waits until a warm pass (which follows the idle merge)
// has ended since the wait began and no count of the per-site metrics
// runs, or, from a server without warm passes,
// the idle merge has brought both indexes to the threshold or below, or
// they are evidently not going to run (none ran for
// mergeNotStarted), for at most mergeWaitMax. It returns the state it
// ended at and how long it waited.
func waitIdleMerge(ctx context.Context, srv *harness.Server, logf func(string, ...any)) (segmentState, time.Duration, error) {
	began := time.Now()
	lastActive := began
	first := true
	var passes float64 // warm passes ended before the wait
	for {
		st, err := indexSegments(ctx, srv)
		if err != nil {
			return st, time.Since(began), err
		}
		if first {
			logf("index segments at start: %s", st)
			first = false
			passes = st.warmPasses
		}
		switch {
		case !st.known:
			return st, time.Since(began), nil
		case st.merging || st.warming || st.countKnown && (st.counting || !st.counted):
			lastActive = time.Now()
		case st.warmKnown && st.warmPasses > passes:
			// The warm pass follows the idle merge, which leaves more
			// than mergeAbove segments when they are too large to merge
			// (index.maxSegmentDocs).
			return st, time.Since(began), nil
		case !st.warmKnown && st.text <= mergeAbove && st.names <= mergeAbove:
			return st, time.Since(began), nil
		case time.Since(lastActive) >= mergeNotStarted:
			return st, time.Since(began), nil
		}
		if time.Since(began) > mergeWaitMax {
			return st, time.Since(began), fmt.Errorf("idle merge and warm pass not done after %s: %s", mergeWaitMax, st)
		}
		select {
		case <-ctx.Done():
			return st, time.Since(began), ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}
