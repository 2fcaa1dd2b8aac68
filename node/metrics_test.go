package node_test

import (
	"context"
	"net/http"
	"regexp"
	"testing"
	"time"

	"quire/node"
	"quire/quiretest"
)

// scrape returns the body of GET /metrics (t fails on another status).
func scrape(t *testing.T, s *quiretest.Server) string {
	t.Helper()
	r := s.Do(http.MethodGet, "/metrics", nil, "")
	if r.Status != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", r.Status, r.Body)
	}
	return string(r.Body)
}

// TestMetrics_CountInBackground: the per-site counts read every document
// (seconds at a million), so a scrape never waits for a count that takes
// long: it answers with the last count (none before the first), and the
// count it started shows in a later scrape. Closing the node stops a
// count under way.
func TestMetrics_CountInBackground(t *testing.T) {
	hold := make(chan struct{})
	t.Cleanup(node.SetTestStats(hold, 0))
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for range 2 {
		r := s.Do(http.MethodPost, "/documents", map[string]any{"content": "counted"}, tok)
		if r.Status != http.StatusCreated {
			t.Fatalf("add document: %d %s", r.Status, r.Body)
		}
	}
	docs := regexp.MustCompile(`(?m)^quire_documents\{site="default"\} 2$`)
	age := regexp.MustCompile(`(?m)^quire_site_counts_age_seconds [0-9.e+-]+$`)
	idle := regexp.MustCompile(`(?m)^quire_site_counts_running 0$`)

	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"a scrape answers while the count is held", func(t *testing.T) {
			body := scrape(t, s)
			if docs.MatchString(body) || age.MatchString(body) {
				t.Fatalf("per-site counts before any count ended:\n%s", body)
			}
			if !regexp.MustCompile(`(?m)^quire_site_counts_running 1$`).MatchString(body) {
				t.Fatalf("no quire_site_counts_running 1 while the count is held in:\n%s", body)
			}
		}},
		{"the count shows once it ends", func(t *testing.T) {
			close(hold)
			quiretest.Eventually(t, "a count of 2 documents with its age, and no count running", 30*time.Second, func() bool {
				body := scrape(t, s)
				return docs.MatchString(body) && age.MatchString(body) && idle.MatchString(body)
			})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.run)
	}
}

// TestMetrics_CloseStopsHeldCount: a node closes while a count waits.
func TestMetrics_CloseStopsHeldCount(t *testing.T) {
	t.Cleanup(node.SetTestStats(make(chan struct{}), 0))
	s := quiretest.NewServer(t)
	scrape(t, s) // starts a count, which waits
	closed := make(chan error, 1)
	go func() { closed <- s.Node.Close(context.Background()) }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("close: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the node did not close within 30 s while a count was held")
	}
}
