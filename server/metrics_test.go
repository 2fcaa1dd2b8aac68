package server_test

import (
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"quire/node"
	"quire/quiretest"
	"quire/server/internal/servertest"
)

// TestMetrics scrapes /metrics after some traffic on two sites and checks
// the series a dashboard and the alert rules use.
func TestMetrics(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for i := 0; i < 3; i++ {
		servertest.AddDoc(t, s, tok, "", map[string]any{"content": "hello", "actions": []map[string]any{{"type": "CHECKSUM", "parameters": map[string]any{"checksumType": "SHA256"}}}})
	}
	servertest.AddDoc(t, s, tok, "?siteId=finance", map[string]any{"content": "0123456789"})
	id := servertest.AddDoc(t, s, tok, "", map[string]any{"content": "x"})
	servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+id, nil, tok), http.StatusOK)
	servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/00000000-0000-0000-0000-000000000000", nil, tok), http.StatusNotFound)
	servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+id+"?softDelete=true", nil, tok), http.StatusOK)

	// The per-site counts are taken in the background: a scrape waits up
	// to a second for the count it starts, so a slow machine may need
	// another scrape (node/metrics.go, statsWait).
	counted := regexp.MustCompile(`(?m)^quire_documents\{site="default"\} 4$`)
	var r *quiretest.Response
	quiretest.Eventually(t, "quire_documents{site=\"default\"} 4 in /metrics", 30*time.Second, func() bool {
		r = s.Do(http.MethodGet, "/metrics", nil, "")
		servertest.MustStatus(t, r, http.StatusOK)
		return counted.Match(r.Body)
	})
	body := string(r.Body)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("content type %q", ct)
	}
	tests := []struct{ name, pattern string }{
		{"creates counted by route template", `quire_http_requests_total\{method="POST",route="/documents",status="201"\} 5`},
		{"reads by template, not by id", `quire_http_requests_total\{method="GET",route="/documents/:documentId",status="200"\} 1`},
		{"404s", `quire_http_requests_total\{method="GET",route="/documents/:documentId",status="404"\} 1`},
		{"latency histogram", `quire_http_request_duration_seconds_bucket\{method="POST",route="/documents",le="\+Inf"\} 5`},
		{"documents per site", `quire_documents\{site="default"\} 4`},
		{"second site", `quire_documents\{site="finance"\} 1`},
		{"soft deleted", `quire_documents_soft_deleted\{site="default"\} 1`},
		{"content bytes", `quire_document_content_bytes\{site="finance"\} 10`},
		{"actions by type and status", `quire_actions\{site="default",status="(PENDING|RUNNING|COMPLETE)",type="CHECKSUM"\} [1-3]`},
		{"storage sizes", `quire_storage_vlog_bytes [1-9][0-9.e+]*`},
		{"lsm", `quire_storage_lsm_bytes [0-9.e+]+`},
		{"index size", `quire_index_bytes [1-9][0-9.e+]*`},
		{"index lag", `quire_index_lag_seconds [0-9.e+-]+`},
		{"cached best hits", `quire_index_best_hits_total\{result="used"\} [0-9.e+]+`},
		{"index segments", `quire_index_segments\{index="text"\} [0-9.e+]+`},
		{"idle merges", `quire_index_idle_merges_total\{result="merged"\} [0-9.e+]+`},
		{"idle merge running", `quire_index_idle_merge_running [01]`},
		{"warmed best hits", `quire_index_best_hits_total\{result="warmed"\} [0-9.e+]+`},
		{"warm passes", `quire_index_warm_passes_total\{result="done"\} [0-9.e+]+`},
		{"warm running", `quire_index_warm_running [01]`},
		{"pipeline", `quire_pipeline_running 1`},
		{"queue age", `quire_pipeline_oldest_due_seconds [0-9.e+-]+`},
		{"go runtime", `go_goroutines [0-9]+`},
		{"process", `process_resident_memory_bytes [0-9.e+]+`},
		{"build info", `quire_build_info\{goversion="go[^"]+",version="[^"]+"\} 1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !regexp.MustCompile(`(?m)^` + tt.pattern + `$`).MatchString(body) {
				t.Fatalf("no line matching %s in:\n%s", tt.pattern, grepQuire(body))
			}
		})
	}
	if strings.Contains(body, id) {
		t.Fatal("a document id leaked into a label")
	}
}

func grepQuire(body string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "quire_") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestMetrics_DashboardAndAlertsUseRealSeries checks that every quire_
// series the Grafana dashboard and the alert rules query is one the
// server exports.
func TestMetrics_DashboardAndAlertsUseRealSeries(t *testing.T) {
	s := quiretest.NewServer(t)
	servertest.AddDoc(t, s, s.Admin(), "", map[string]any{"content": "x", "actions": []map[string]any{{"type": "CHECKSUM", "parameters": map[string]any{"checksumType": "SHA256"}}}})
	servertest.MustStatus(t, s.Do(http.MethodGet, "/nothing", nil, s.Admin()), http.StatusNotFound)
	body := string(s.Do(http.MethodGet, "/metrics", nil, "").Body)
	// The quire_raft_* series come from a cluster member (here a cluster
	// of one).
	member := quiretest.NewServer(t, func(c *quiretest.Config) {
		c.Cluster = node.ClusterConfig{NodeID: "m1", RaftListen: "127.0.0.1:0", Bootstrap: true}
	})
	body += "\n" + string(member.Do(http.MethodGet, "/metrics", nil, "").Body)
	exported := map[string]bool{}
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "# TYPE ") {
			f := strings.Fields(l)
			exported[f[2]] = true
			if f[3] == "histogram" {
				exported[f[2]+"_bucket"], exported[f[2]+"_sum"], exported[f[2]+"_count"] = true, true, true
			}
		}
	}
	name := regexp.MustCompile(`\b(quire_[a-z_]+|go_[a-z_]+|process_[a-z_]+)\b`)
	for _, file := range []string{"../packaging/grafana-dashboard.json", "../packaging/alerts.yml"} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		seen := 0
		for _, m := range name.FindAllString(string(b), -1) {
			seen++
			if !exported[m] {
				t.Errorf("%s queries %s, which /metrics does not export", file, m)
			}
		}
		if seen < 5 {
			t.Fatalf("%s: only %d series found", file, seen)
		}
	}
}

// TestMetrics_ListenerAndToken: metrics.token makes every scrape send a
// bearer token; metrics.listen moves /metrics to a listener of its own,
// and the API listener stops serving it.
func TestMetrics_ListenerAndToken(t *testing.T) {
	const token = "scrape-token-0123456789"
	for _, tt := range []struct {
		name     string
		separate bool
		token    string
	}{
		{"token on the API listener", false, token},
		{"own listener, no token", true, ""},
		{"own listener and token", true, token},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := quiretest.NewServer(t, func(c *quiretest.Config) {
				c.MetricsToken = tt.token
				if tt.separate {
					c.MetricsListen = "127.0.0.1:0"
				}
			})
			base := s.URL
			if tt.separate {
				if s.Node.MetricsAddr() == "" {
					t.Fatal("no metrics listener")
				}
				base = "http://" + s.Node.MetricsAddr()
				r := s.DoHeaders(http.MethodGet, s.URL+"/metrics", nil, "", map[string]string{"Authorization": "Bearer " + tt.token})
				servertest.MustStatus(t, r, http.StatusNotFound)
			}
			scrape := func(auth string) *quiretest.Response {
				h := map[string]string{}
				if auth != "" {
					h["Authorization"] = auth
				}
				return s.DoHeaders(http.MethodGet, base+"/metrics", nil, "", h)
			}
			if tt.token != "" {
				for _, bad := range []string{"", "Bearer wrong-token-0123456789", token, "Bearer " + token + "x", "Basic " + token} {
					r := scrape(bad)
					servertest.MustStatus(t, r, http.StatusUnauthorized)
					if strings.Contains(string(r.Body), "quire_") {
						t.Fatalf("refused scrape (%q) shows metrics", bad)
					}
				}
			}
			auth := ""
			if tt.token != "" {
				auth = "Bearer " + tt.token
			}
			r := scrape(auth)
			servertest.MustStatus(t, r, http.StatusOK)
			if !strings.Contains(string(r.Body), "quire_build_info") {
				t.Fatalf("scrape without quire metrics: %.300s", r.Body)
			}
		})
	}
}
