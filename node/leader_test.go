package node_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"quire/quiretest"
	"quire/storage"
)

// hookCounter is a webhook receiver that counts deliveries per document
// and holds each for delay (a slow action).
type hookCounter struct {
	srv   *httptest.Server
	delay atomic.Int64 // nanoseconds
	mu    sync.Mutex
	hits  map[string]int
	total int
}

func newHookCounter(t *testing.T, delay time.Duration) *hookCounter {
	h := &hookCounter{hits: map[string]int{}}
	h.delay.Store(int64(delay))
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Duration(h.delay.Load()))
		var b struct {
			Documents []struct {
				DocumentID string `json:"documentId"`
			} `json:"documents"`
		}
		if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		h.mu.Lock()
		for _, d := range b.Documents {
			h.hits[d.DocumentID]++
		}
		h.total++
		h.mu.Unlock()
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hookCounter) count() (docs, total int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.hits), h.total
}

func (h *hookCounter) of(id string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hits[id]
}

// createWithActions creates n documents through s, each with a checksum,
// a slow webhook and a fulltext action.
func createWithActions(t *testing.T, s *quiretest.Server, n int, hook string) []string {
	t.Helper()
	tok := s.Admin()
	var ids []string
	for i := range n {
		r := s.Do(http.MethodPost, "/documents", map[string]any{"contentType": "text/plain", "content": fmt.Sprintf("document %d", i),
			"actions": []map[string]any{
				{"type": "CHECKSUM", "parameters": map[string]any{"checksumType": "SHA256"}},
				{"type": "WEBHOOK", "parameters": map[string]any{"url": hook}},
				{"type": "FULLTEXT"},
			}}, tok)
		if r.Status != http.StatusCreated {
			t.Fatalf("create %d: %d %s", i, r.Status, r.Body)
		}
		ids = append(ids, quiretest.Str(t, r.JSON(t), "documentId"))
	}
	return ids
}

// actionStatuses reads a document's action statuses on s.
func actionStatuses(t *testing.T, s *quiretest.Server, tok, id string) []string {
	t.Helper()
	r := s.Do(http.MethodGet, "/documents/"+id+"/actions", nil, tok)
	if r.Status != http.StatusOK {
		t.Fatalf("actions of %s: %d %s", id, r.Status, r.Body)
	}
	var out []string
	for _, a := range quiretest.List(t, r.JSON(t), "actions") {
		out = append(out, quiretest.Str(t, quiretest.Obj(t, a), "status"))
	}
	return out
}

// allComplete reports whether every action of every document is COMPLETE
// on s.
func allComplete(t *testing.T, s *quiretest.Server, ids []string) bool {
	t.Helper()
	tok := s.Admin()
	for _, id := range ids {
		st := actionStatuses(t, s, tok, id)
		if len(st) != 3 {
			t.Fatalf("document %s has %d actions, want 3", id, len(st))
		}
		for _, x := range st {
			if x != "COMPLETE" {
				return false
			}
		}
	}
	return true
}

// schedulerRuns is how many times the members of srvs started their
// schedulers (each lead a member took, the same member again included).
func schedulerRuns(srvs []*quiretest.Server) int {
	n := 0
	for _, s := range srvs {
		if s.Node != nil {
			n += int(s.Node.SchedulerStarts())
		}
	}
	return n
}

func loopbackClusterOpt(id string, bootstrap bool) []quiretest.Option {
	return []quiretest.Option{clusterOpt(id, bootstrap), quiretest.AllowLoopbackOutbound}
}

// startLoopbackCluster is startCluster whose members may call webhooks on
// loopback.
func startLoopbackCluster(t *testing.T) (leader *quiretest.Server, followers []*quiretest.Server) {
	t.Helper()
	return leaderAndFollowers(t, formCluster(t, []string{"n1", "n2", "n3"}, loopbackClusterOpt, nil))
}

// TestLeader_ActionsRunOnTheLeaderOnlyAndResumeAfterAFailover: documents
// with a slow webhook between a checksum and a fulltext, created through a
// follower. Without a failover every webhook is delivered exactly once
// and the followers never start their pipeline. Then the leader is
// stopped abruptly while a second batch runs: a new leader finishes every
// action (all COMPLETE on both survivors), and each webhook was delivered
// at most once per leader that ran it (≤ 2).
func TestLeader_ActionsRunOnTheLeaderOnlyAndResumeAfterAFailover(t *testing.T) {
	t.Parallel() // in-process cluster of its own: see TestMain
	leader, fs := startLoopbackCluster(t)
	hook := newHookCounter(t, 30*time.Millisecond)

	// Followers: their schedulers are off (metric, accessor, pipeline).
	for _, f := range fs {
		if f.Node.Leading() {
			t.Fatalf("follower %s runs the schedulers", f.Node.Cluster.ID())
		}
		if running, _, _ := f.Node.Pipeline.Status(); running {
			t.Fatalf("follower %s runs its pipeline", f.Node.Cluster.ID())
		}
		if v := metricValue(t, f, "quire_schedulers_running"); v != 0 {
			t.Fatalf("follower %s: quire_schedulers_running %v", f.Node.Cluster.ID(), v)
		}
	}
	if !leader.Node.Leading() || metricValue(t, leader, "quire_schedulers_running") != 1 {
		t.Fatal("the leader does not run the schedulers")
	}

	// Phase 1: no failover; each action runs once, on the leader. (A
	// loaded machine can cost the leader its lease: then each webhook
	// went out at most once per leader, and phase 2 starts from whoever
	// leads.)
	all := []*quiretest.Server{leader, fs[0], fs[1]}
	runsBefore := schedulerRuns(all)
	ids := createWithActions(t, fs[0], 12, hook.srv.URL)
	waitFor(t, "every action of the first batch to complete", 60*time.Second, func() bool { return allComplete(t, fs[1], ids) })
	moved := schedulerRuns(all) - runsBefore // leads taken since
	firstBatch := map[string]int{}
	for _, id := range ids {
		n := hook.of(id)
		if n < 1 || n > 1+moved {
			t.Fatalf("webhook of %s delivered %d times while the lead was taken %d times more, want 1..%d", id, n, moved, 1+moved)
		}
		firstBatch[id] = n
	}
	if moved > 0 {
		t.Logf("the lead was taken %d times more during the first batch (a loaded machine)", moved)
		leader, fs = leaderAndFollowers(t, all)
	} else {
		for _, f := range fs {
			if f.Node.SchedulerStarts() != 0 {
				t.Fatalf("follower %s started its schedulers %d times", f.Node.Cluster.ID(), f.Node.SchedulerStarts())
			}
		}
	}

	// Phase 2: slower webhooks (30 take about 8 s on 4 workers); stop
	// the leader abruptly once some of them went out.
	hook.delay.Store(int64(time.Second))
	_, before := hook.count()
	runsBefore = schedulerRuns(all)
	ids2 := createWithActions(t, leader, 30, hook.srv.URL)
	waitFor(t, "a few webhooks of the second batch", 30*time.Second, func() bool {
		_, n := hook.count()
		return n >= before+4
	})
	// Raft first (no transfer, no leave): the node stops leading at once
	// and cancels its running actions, as a dead process would; then the
	// rest of it.
	killed := time.Now()
	if err := leader.Node.Cluster.Close(); err != nil {
		t.Fatal(err)
	}
	_, atKill := hook.count()
	// stepDown clears Leading first, then stops the sweep and the
	// pipeline: wait for both.
	waitFor(t, "the old leader to stop its schedulers and its pipeline", 10*time.Second, func() bool {
		running, _, _ := leader.Node.Pipeline.Status()
		return !leader.Node.Leading() && !running
	})
	oldRuns := int(leader.Node.SchedulerStarts())
	leader.Close()
	if atKill-before >= len(ids2) {
		t.Fatalf("all %d webhooks of the second batch went out before the kill; it must land mid-way", len(ids2))
	}

	var next *quiretest.Server
	waitFor(t, "a new leader to run the schedulers", 30*time.Second, func() bool {
		for _, f := range fs {
			if f.Node.Leading() {
				next = f
				return true
			}
		}
		return false
	})
	takeover := time.Since(killed)
	for _, f := range fs {
		if f != next && f.Node.Leading() {
			t.Fatal("both survivors run the schedulers")
		}
	}
	waitFor(t, "every action of the second batch to complete", 90*time.Second, func() bool { return allComplete(t, next, ids2) })
	// The other survivor holds the same outcome.
	var other *quiretest.Server
	for _, f := range fs {
		if f != next {
			other = f
		}
	}
	waitFor(t, "the other survivor to apply the outcomes", 30*time.Second, func() bool { return allComplete(t, other, ids2) })

	changes := next.Node.Cluster.LeaderChanges() // n1, then the new leader
	if changes < 2 {
		t.Fatalf("leader changes seen by the new leader: %d, want at least 2", changes)
	}
	// The leads that ran the second batch: the one it started on and
	// every one taken since (the new leader's, and any a loaded machine
	// added).
	leads := 1 + schedulerRuns(all) + oldRuns - runsBefore
	again := 0
	for _, id := range ids2 {
		n := hook.of(id)
		if n < 1 || n > leads {
			t.Fatalf("webhook of %s delivered %d times with %d leads running the batch, want 1..%d", id, n, leads, leads)
		}
		if n > 1 {
			again++
		}
	}
	for _, id := range ids {
		if n := hook.of(id); n != firstBatch[id] {
			t.Fatalf("webhook of first-batch document %s delivered %d times after the failover, %d before", id, n, firstBatch[id])
		}
	}
	if other.Node.Leading() || moved == 0 && other.Node.SchedulerStarts() != 0 {
		t.Fatalf("the surviving follower ran the schedulers (%d starts)", other.Node.SchedulerStarts())
	}
	t.Logf("%d of %d webhooks went out before the kill; %d delivered again by the new leader; its schedulers ran %v after the kill",
		atKill-before, len(ids2), again, takeover.Round(10*time.Millisecond))
}

// TestMetrics_RaftStateOnMembers: /metrics on a member shows the Raft
// metrics with sane values; after the leader is stopped the survivors'
// term is higher and they count a second leader.
func TestMetrics_RaftStateOnMembers(t *testing.T) {
	t.Parallel() // in-process cluster of its own: see TestMain
	leader, fs := startCluster(t)
	all := []*quiretest.Server{leader, fs[0], fs[1]}
	// A few writes, so the commit histogram and indexes move.
	tok := leader.Admin()
	for i := range 3 {
		if r := leader.Do(http.MethodPost, "/documents", map[string]any{"content": fmt.Sprintf("m%d", i)}, tok); r.Status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
	}
	// The metrics are read again when the lead moved while they were
	// read (a loaded machine can cost a leader its lease): the leader's
	// and its followers' are compared under one term.
	var (
		lv   map[string]float64
		fvs  []map[string]float64
		term float64
	)
	waitFor(t, "the members' metrics read under one leader and term", 30*time.Second, func() bool {
		l := leaderAmong(all)
		if l == nil || !l.Node.Leading() { // a new leader starts its schedulers just after
			return false
		}
		before := l.Node.Cluster.Status().Term
		leader, fs, fvs = l, nil, nil
		lv = metrics(t, leader)
		for _, s := range all {
			if s != leader {
				fs = append(fs, s)
				fvs = append(fvs, metrics(t, s))
			}
		}
		term = lv["quire_raft_term"]
		return leader.Node.Leading() && leader.Node.Cluster.IsLeader() && leader.Node.Cluster.Status().Term == before && term == float64(before)
	})
	want := map[string]float64{
		`quire_raft_state{state="leader"}`:   1,
		`quire_raft_state{state="follower"}`: 0,
		"quire_raft_peers":                   3,
		"quire_raft_voters":                  3,
		"quire_raft_leader_known":            1,
		"quire_raft_halted":                  0,
		"quire_raft_state_unreadable":        0,
		"quire_schedulers_running":           1,
	}
	for k, v := range want {
		if got, ok := lv[k]; !ok || got != v {
			t.Errorf("leader %s = %v (present %v), want %v", k, got, ok, v)
		}
	}
	if term < 1 || lv["quire_raft_applied_index"] < 3 || lv["quire_raft_commit_index"] < lv["quire_raft_applied_index"] ||
		lv["quire_raft_last_log_index"] < lv["quire_raft_commit_index"] || lv["quire_raft_leader_changes_total"] < 1 {
		t.Errorf("leader's raft metrics: %v", lv)
	}
	if lv["quire_raft_commit_seconds_count"] < 3 || lv["quire_raft_commit_seconds_sum"] <= 0 {
		t.Errorf("commit latency histogram: count %v sum %v", lv["quire_raft_commit_seconds_count"], lv["quire_raft_commit_seconds_sum"])
	}
	for i, f := range fs {
		fv := fvs[i]
		if fv[`quire_raft_state{state="follower"}`] != 1 || fv[`quire_raft_state{state="leader"}`] != 0 ||
			fv["quire_raft_term"] != term || fv["quire_schedulers_running"] != 0 || fv["quire_raft_peers"] != 3 {
			t.Errorf("follower %s raft metrics: %v", f.Node.Cluster.ID(), fv)
		}
	}
	// A single server has none of them.
	single := quiretest.NewServer(t)
	if sv := metrics(t, single); sv["quire_schedulers_running"] != 1 {
		t.Errorf("single server: quire_schedulers_running %v", sv["quire_schedulers_running"])
	} else {
		for k := range sv {
			if strings.HasPrefix(k, "quire_raft_") {
				t.Errorf("single server reports %s", k)
			}
		}
	}

	leader.Node.Cluster.Close()
	leader.Close()
	waitFor(t, "a survivor to lead", 30*time.Second, func() bool { return fs[0].Node.Cluster.IsLeader() || fs[1].Node.Cluster.IsLeader() })
	for _, f := range fs {
		waitFor(t, f.Node.Cluster.ID()+" to see the new leader", 20*time.Second, func() bool {
			fv := metrics(t, f)
			return fv["quire_raft_leader_known"] == 1 && fv["quire_raft_term"] > term && fv["quire_raft_leader_changes_total"] >= 2
		})
	}
}

// metrics scrapes s's /metrics: series (name and labels as printed) to
// value.
func metrics(t *testing.T, s *quiretest.Server) map[string]float64 {
	t.Helper()
	r := s.Do(http.MethodGet, "/metrics", nil, "")
	if r.Status != http.StatusOK {
		t.Fatalf("/metrics: %d", r.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(string(r.Body)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] = v
	}
	return out
}

func metricValue(t *testing.T, s *quiretest.Server, name string) float64 {
	t.Helper()
	v, ok := metrics(t, s)[name]
	if !ok {
		t.Fatalf("/metrics lacks %s", name)
	}
	return v
}

// TestLeader_ChunkSweepIsALeaderCommandAfterTheGrace: a chunk an upload
// left behind (written, never referenced) is swept by the leader on
// every member, never before it was unreferenced for the grace; the
// content of a document stays.
func TestLeader_ChunkSweepIsALeaderCommandAfterTheGrace(t *testing.T) {
	const grace = 2 * time.Second
	opt := func(c *quiretest.Config) { c.Cluster.ChunkSweepGrace = grace }
	leader, fs := leaderAndFollowers(t, formCluster(t, []string{"n1", "n2"}, func(id string, bootstrap bool) []quiretest.Option {
		return []quiretest.Option{clusterOpt(id, bootstrap), opt}
	}, nil))
	f := fs[0]
	r := f.Do(http.MethodPost, "/documents", map[string]any{"content": "kept content", "contentType": "text/plain"}, f.Admin())
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	id := quiretest.Str(t, r.JSON(t), "documentId")

	// An interrupted upload on the follower: its chunk is a replicated
	// command, and nothing references it.
	val := []byte("a chunk of an upload that never committed")
	sum := sha256.Sum256(val)
	sha := hex.EncodeToString(sum[:])
	cmd := storage.MustCommand(storage.OpPutChunks, "", "", time.Time{}, storage.PutChunks{Chunks: []storage.Chunk{
		{SHA: sha, Size: int64(len(val)), Value: append([]byte{0}, val...)}}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	put := time.Now()
	if _, _, err := leader.Node.Cluster.Propose(ctx, cmd); err != nil {
		t.Fatal(err)
	}
	has := func(s *quiretest.Server) bool {
		shas, err := s.Node.DB.UnreferencedChunks(1000)
		if err != nil {
			t.Fatal(err)
		}
		return slices.Contains(shas, sha)
	}
	if err := f.Node.Cluster.WaitApplied(ctx, leader.Node.Cluster.AppliedIndex()); err != nil {
		t.Fatal(err)
	}
	if !has(leader) || !has(f) {
		t.Fatal("the leftover chunk is not on both members")
	}
	waitFor(t, "the leader to sweep the leftover chunk", 30*time.Second, func() bool { return !has(leader) })
	if took := time.Since(put); took < grace {
		t.Fatalf("swept %v after it was written, before the grace of %v", took, grace)
	}
	waitFor(t, "the follower to apply the sweep", 20*time.Second, func() bool { return !has(f) })
	for _, s := range []*quiretest.Server{leader, f} {
		c := s.Do(http.MethodGet, "/documents/"+id+"/content", nil, s.Admin())
		if c.Status != http.StatusOK || quiretest.Str(t, c.JSON(t), "content") != "kept content" {
			t.Fatalf("content after the sweep: %d %s", c.Status, c.Body)
		}
	}
	if f.Node.SchedulerStarts() != 0 || leader.Node.SchedulerStarts() != 1 {
		t.Fatalf("scheduler starts: leader %d, follower %d", leader.Node.SchedulerStarts(), f.Node.SchedulerStarts())
	}
}
