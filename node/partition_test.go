package node_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"quire/quiretest"
	"quire/storage"
)

// apiClient makes requests with a deadline of its own (quiretest's Do
// waits a minute), so a write that hangs is recorded, not waited for.
var apiClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}

// apiCall sends a JSON request to s within timeout. err is set when no
// answer came (a timeout or a broken connection): the outcome of a
// write is then unknown.
func apiCall(s *quiretest.Server, method, path string, body any, tok string, timeout time.Duration) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.URL+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", tok)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := apiClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// taggedDoc is a document created with several tags and metadata in one
// command: it is either entirely in a store or not at all.
type taggedDoc struct{ id string }

func newTaggedDoc() taggedDoc { return taggedDoc{id: uuid.NewString()} }

var docTags = []storage.Tag{{Key: "a", Value: "1"}, {Key: "b", Value: "2"}, {Key: "c", Values: []string{"x", "y"}}}

func (d taggedDoc) body() map[string]any {
	return map[string]any{
		"documentId": d.id, "path": "p/" + d.id + ".txt", "content": "c-" + d.id, "contentType": "text/plain",
		"tags": []map[string]any{
			{"key": "a", "value": "1"}, {"key": "b", "value": "2"}, {"key": "c", "values": []string{"x", "y"}},
		},
		"metadata": []map[string]any{{"key": "m", "value": "v"}},
	}
}

// state says whether the document is in db whole ("present"), nowhere
// ("absent": its id occurs in no key or value of the store), or
// anything else (half-applied: a bug).
func (d taggedDoc) state(t *testing.T, db *storage.DB) string {
	t.Helper()
	var buf bytes.Buffer
	if _, _, err := db.Backup(&buf); err != nil {
		t.Fatalf("backup: %v", err)
	}
	doc, err := db.GetDocument("default", d.id)
	if err != nil {
		if !isNotFound(err) {
			t.Fatalf("get %s: %v", d.id, err)
		}
		if bytes.Contains(buf.Bytes(), []byte(d.id)) {
			return "half-applied: no document record, but its id occurs in the store"
		}
		return "absent"
	}
	tags, err := db.GetTags("default", d.id)
	if err != nil {
		return fmt.Sprintf("half-applied: document without tags (%v)", err)
	}
	var got []string
	for _, tg := range tags {
		if tg.Key == "a" || tg.Key == "b" || tg.Key == "c" {
			got = append(got, tg.Key+"="+tg.Value+strings.Join(tg.Values, ","))
		}
	}
	want := []string{"a=1", "b=2", "c=x,y"}
	if !slices.Equal(got, want) {
		return fmt.Sprintf("half-applied: tags %v, want %v", got, want)
	}
	if len(doc.Metadata) != 1 || doc.Metadata[0].Key != "m" {
		return fmt.Sprintf("half-applied: metadata %+v", doc.Metadata)
	}
	return "present"
}

func isNotFound(err error) bool {
	var nf *storage.NotFoundError
	return errors.As(err, &nf) || errors.Is(err, storage.ErrNotFound)
}

// leaderAmong is the member that leads, among the live servers (nil:
// none).
func leaderAmong(srvs []*quiretest.Server) *quiretest.Server {
	for _, s := range srvs {
		if s.Node != nil && s.Node.Cluster.IsLeader() {
			return s
		}
	}
	return nil
}

// converged waits until every server in srvs applied what the leader
// did, and fails unless their stores hash the same. The hashes are
// compared at one applied index: the leader's pipeline may still be
// writing (every document gets the site's default actions), so a hash
// taken while the index moved is taken again, until the deadline.
func converged(t *testing.T, srvs []*quiretest.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	last := "the applied index never held still"
	for {
		if ctx.Err() != nil {
			t.Fatalf("replicas not equal at one index within 60 s: %s", last)
		}
		// A loaded machine may cost the leader its lease right after a
		// heal (it is catching a member up): the barrier is then made on
		// the next.
		leader := leaderAmong(srvs)
		if leader == nil {
			last = "no leader"
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if err := leader.Node.Cluster.Barrier(ctx); err != nil {
			last = "barrier: " + err.Error()
			time.Sleep(20 * time.Millisecond)
			continue
		}
		target := leader.Node.Cluster.AppliedIndex()
		want, keys, err := leader.Node.DB.StateHash()
		if err != nil {
			t.Fatal(err)
		}
		if leader.Node.Cluster.AppliedIndex() != target {
			continue // written meanwhile: hash again
		}
		moved, mismatch := false, ""
		for _, s := range srvs {
			if s == leader {
				continue
			}
			if err := s.Node.Cluster.WaitApplied(ctx, target); err != nil {
				t.Fatalf("%s: wait for index %d: %v", s.Node.Cluster.ID(), target, err)
			}
			got, n, err := s.Node.DB.StateHash()
			if err != nil {
				t.Fatal(err)
			}
			if s.Node.Cluster.AppliedIndex() != target {
				moved = true // it applied newer entries meanwhile: not comparable
				break
			}
			if got != want && mismatch == "" {
				mismatch = fmt.Sprintf("%s holds %d keys hashing %s at index %d; the leader %s %d keys hashing %s", s.Node.Cluster.ID(), n, got, target, leader.Node.Cluster.ID(), keys, want)
			}
		}
		if moved {
			last = "a member moved past index " + fmt.Sprint(target) + " while hashing"
			continue
		}
		if mismatch != "" {
			t.Fatal(mismatch)
		}
		return
	}
}

// writeAcked creates d through s, retrying while the cluster has no
// leader (503), until within passes; it fails t unless a 201 came.
func writeAcked(t *testing.T, s *quiretest.Server, tok string, d taggedDoc, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		st, body, err := apiCall(s, http.MethodPost, "/documents", d.body(), tok, 15*time.Second)
		if st == http.StatusCreated {
			return
		}
		if err != nil || st != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("write through %s: %d %s %v", s.Node.Cluster.ID(), st, body, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// serversAt is where history writers write to in-process members: each
// one's API with a token it accepts (toks[i], signed with its keys).
func serversAt(srvs []*quiretest.Server, toks []string) writeTo {
	return func(i int) (*http.Client, string, string) { return apiClient, srvs[i].URL, toks[i] }
}

// adminTokens are the members' own admin tokens.
func adminTokens(srvs []*quiretest.Server) []string {
	toks := make([]string, len(srvs))
	for i, s := range srvs {
		toks[i] = s.Admin()
	}
	return toks
}

// historyHolds waits until srvs converged (converged: the same state
// hash), then checks the history on every member through its API and
// has the leader verify the replica digests.
func historyHolds(t *testing.T, h *history, srvs []*quiretest.Server, toks []string) {
	t.Helper()
	converged(t, srvs)
	ms := make([]historyMember, len(srvs))
	for i, s := range srvs {
		ms[i] = historyMember{base: s.URL, tok: toks[i]}
	}
	count := h.checkOn(t, apiClient, ms)
	rep := verifyEqual(t, apiClient, srvs[0].URL, toks[0])
	t.Logf("%s; replica digests equal at %d", h.summary(count), rep.Index)
}

func TestPartition_MinorityLeaderCannotAcknowledgeAndHealingLosesNothing(t *testing.T) {
	t.Parallel() // in-process cluster of its own: see TestMain
	f := newFabric(t)
	srvs := startFabricCluster(t, f)
	toks := map[*quiretest.Server]string{}
	tokList := adminTokens(srvs)
	for i, s := range srvs {
		toks[s] = tokList[i]
	}
	var acked []taggedDoc
	for _, s := range srvs {
		d := newTaggedDoc()
		writeAcked(t, s, toks[s], d, 10*time.Second)
		acked = append(acked, d)
	}
	// Writers on every member through the partition and the healing
	// (the history at the end).
	var h history
	stop := h.write(serversAt(srvs, tokList), []int{0, 1, 2}, 15*time.Second, 20*time.Millisecond)
	defer stop()

	old := leaderAmong(srvs)
	if old == nil {
		t.Fatal("no leader")
	}
	oldID := old.Node.Cluster.ID()
	var majority []*quiretest.Server
	for _, s := range srvs {
		if s != old {
			majority = append(majority, s)
		}
	}
	startIndex := old.Node.Cluster.Status().LastLogIndex
	f.isolate(oldID, linkBlackhole)

	// Writes to the isolated leader: none may be acknowledged. They enter
	// its log while it still believes it leads and fail when it steps
	// down (or, once it knows no leader, after the forwarding retries).
	var (
		mu       sync.Mutex
		refused  []taggedDoc // answered, not 2xx: never committed
		unknown  []taggedDoc // no answer in time: either way, but whole
		statuses []string
		wg       sync.WaitGroup
	)
	for range 4 {
		d := newTaggedDoc()
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, body, err := apiCall(old, http.MethodPost, "/documents", d.body(), toks[old], 20*time.Second)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				unknown = append(unknown, d)
			} else {
				refused = append(refused, d)
			}
			statuses = append(statuses, fmt.Sprintf("%d %s %v", st, bytes.TrimSpace(body), err))
			if st >= 200 && st < 300 {
				t.Errorf("the isolated leader acknowledged a write: %d %s", st, body)
			}
		}()
	}

	// The majority elects a leader and acknowledges writes through both
	// of its members.
	var next *quiretest.Server
	waitFor(t, "the majority to elect a leader", 20*time.Second, func() bool { next = leaderAmong(majority); return next != nil })
	for _, s := range majority {
		for range 3 {
			d := newTaggedDoc()
			writeAcked(t, s, toks[s], d, 15*time.Second)
			acked = append(acked, d)
		}
	}
	waitFor(t, "the isolated leader to step down", 20*time.Second, func() bool { return !old.Node.Cluster.IsLeader() })
	wg.Wait()
	t.Logf("writes to the isolated leader: %q", statuses)
	st := old.Node.Cluster.Status()
	t.Logf("isolated %s: last log index %d (was %d), commit index %d", oldID, st.LastLogIndex, startIndex, st.CommitIndex)
	// A write answered 503 came after the step-down (no leader known);
	// any other answer means the minority leader proposed it: it is in
	// its log, never committed.
	if n503 := len(slices.DeleteFunc(slices.Clone(statuses), func(s string) bool { return !strings.HasPrefix(s, "503 ") })); n503 < len(statuses) && st.LastLogIndex <= st.CommitIndex {
		t.Fatalf("the isolated leader answered %q but holds no uncommitted entry (last %d, commit %d)", statuses, st.LastLogIndex, st.CommitIndex)
	}
	for _, d := range acked[len(srvs):] {
		if got := d.state(t, old.Node.DB); got != "absent" {
			t.Fatalf("the isolated node holds a write made by the majority: %s", got)
		}
	}

	// Healed: the old leader rejoins as a follower of the majority's
	// leader and every store is the same.
	f.healAll()
	waitFor(t, oldID+" to follow again", 20*time.Second, func() bool {
		s := old.Node.Cluster.Status()
		return s.State == "Follower" && s.LeaderID != "" && s.LeaderID != oldID
	})
	// The writers go on through the healing, then stop: the stores are
	// compared once nothing more is written.
	h.waitAcked(t, "writes after the healing", 10, 30*time.Second)
	stop()
	converged(t, srvs)
	for _, s := range srvs {
		for _, d := range acked {
			if got := d.state(t, s.Node.DB); got != "present" {
				t.Fatalf("%s: acknowledged document %s is %s", s.Node.Cluster.ID(), d.id, got)
			}
		}
		// The isolated leader's writes never reached a majority: Raft
		// dropped them from its log when it rejoined.
		for _, d := range refused {
			if got := d.state(t, s.Node.DB); got != "absent" {
				t.Fatalf("%s: refused document %s is %s", s.Node.Cluster.ID(), d.id, got)
			}
		}
		for _, d := range unknown {
			if got := d.state(t, s.Node.DB); got != "absent" && got != "present" {
				t.Fatalf("%s: unanswered document %s is %s", s.Node.Cluster.ID(), d.id, got)
			}
		}
	}
	// Reads through every node's API agree.
	for _, s := range srvs {
		for _, d := range acked {
			if st, body, err := apiCall(s, http.MethodGet, "/documents/"+d.id+"/tags/c", nil, toks[s], 10*time.Second); st != http.StatusOK || err != nil {
				t.Fatalf("%s: tag c of %s: %d %s %v", s.Node.Cluster.ID(), d.id, st, body, err)
			}
		}
	}
	historyHolds(t, &h, srvs, tokList)
}

func TestPartition_FollowerCutOffCatchesUp(t *testing.T) {
	t.Parallel() // in-process cluster of its own: see TestMain
	f := newFabric(t)
	srvs := startFabricCluster(t, f)
	leader := leaderAmong(srvs)
	if leader == nil {
		t.Fatal("no leader")
	}
	var cut, other *quiretest.Server
	for _, s := range srvs {
		if s != leader {
			if cut == nil {
				cut = s
			} else {
				other = s
			}
		}
	}
	cutID := cut.Node.Cluster.ID()
	toks := adminTokens(srvs)
	var h history
	stop := h.write(serversAt(srvs, toks), []int{0, 1, 2}, 15*time.Second, 20*time.Millisecond)
	defer stop()
	h.waitAcked(t, "writes before the cut", 10, 30*time.Second)
	f.isolate(cutID, linkRefuse)
	// Once it knows no leader (its main loop left the follower state),
	// nothing reaches it: its commit index stays put. (Its store may
	// still be applying entries committed before the cut: the writers
	// were writing.)
	waitFor(t, cutID+" to lose the leader", 20*time.Second, func() bool {
		_, lid := cut.Node.Cluster.LeaderAddr()
		return lid == ""
	})
	before := cut.Node.Cluster.Status().CommitIndex

	// The other two are a majority: writes through both are acknowledged
	// (a leader change is possible on a loaded machine: retried on 503).
	var acked []taggedDoc
	for i := range 6 {
		s := leader
		if i%2 == 1 {
			s = other
		}
		d := newTaggedDoc()
		writeAcked(t, s, s.Admin(), d, 15*time.Second)
		acked = append(acked, d)
	}
	if got := cut.Node.Cluster.Status().CommitIndex; got != before {
		t.Fatalf("the cut-off follower committed entries (%d → %d): the link was not cut", before, got)
	}
	for _, d := range acked {
		if got := d.state(t, cut.Node.DB); got != "absent" {
			t.Fatalf("the cut-off follower holds %s: %s", d.id, got)
		}
	}

	f.healAll()
	h.waitAcked(t, "writes after the healing", 10, 30*time.Second)
	stop()
	converged(t, srvs)
	for _, d := range acked {
		if got := d.state(t, cut.Node.DB); got != "present" {
			t.Fatalf("after healing, %s on %s is %s", d.id, cutID, got)
		}
	}
	// It serves the documents through its API, and forwards writes again.
	tok := cut.Admin()
	for _, d := range acked {
		if st, body, err := apiCall(cut, http.MethodGet, "/documents/"+d.id, nil, tok, 10*time.Second); st != http.StatusOK || err != nil {
			t.Fatalf("read %s on %s: %d %s %v", d.id, cutID, st, body, err)
		}
	}
	d := newTaggedDoc()
	writeAcked(t, cut, tok, d, 15*time.Second)
	if got := d.state(t, cut.Node.DB); got != "present" {
		t.Fatalf("a write through the healed follower is %s there", got)
	}
	historyHolds(t, &h, srvs, toks)
}

// TestPartition_OneWayToLeaderAnswers: with only the follower → leader
// direction blackholed, the follower still follows (the leader's
// connections carry Raft both ways) but cannot forward: a write through it
// is answered 503 (or 504 "outcome unknown" when the cut broke the
// connection it was written to) within the leader wait, never held for
// ever (the 40 s client timeout), and is not applied anywhere. After healing it forwards again.
func TestPartition_OneWayToLeaderAnswers(t *testing.T) {
	t.Parallel() // in-process cluster of its own: see TestMain
	f := newFabric(t)
	srvs := startFabricCluster(t, f)
	toks := adminTokens(srvs)
	var h history
	stop := h.write(serversAt(srvs, toks), []int{0, 1, 2}, 15*time.Second, 20*time.Millisecond)
	defer stop()
	h.waitAcked(t, "writes before the cut", 10, 30*time.Second)
	var follower *quiretest.Server
	for attempt := 1; ; attempt++ {
		var leader *quiretest.Server
		waitFor(t, "a leader", 20*time.Second, func() bool { leader = leaderAmong(srvs); return leader != nil })
		for _, s := range srvs {
			if s != leader {
				follower = s
				break
			}
		}
		term := leader.Node.Cluster.Status().Term
		f.setLink(follower.Node.Cluster.ID(), leader.Node.Cluster.ID(), linkBlackhole)
		d := newTaggedDoc()
		start := time.Now()
		st, body, err := apiCall(follower, http.MethodPost, "/documents", d.body(), follower.Admin(), 40*time.Second)
		took := time.Since(start)
		if err != nil {
			t.Fatalf("no answer after %v: %v", took, err)
		}
		// A loaded machine can cost the leader its lease meanwhile; the
		// follower then reaches the next leader, and the write is
		// rightly acknowledged: the cut is made again to whoever leads.
		changed := !leader.Node.Cluster.IsLeader() || leader.Node.Cluster.Status().Term != term
		if st == http.StatusCreated && changed && attempt < 3 {
			t.Logf("attempt %d: the leader changed during the write (201 after %v): again", attempt, took)
			f.healAll()
			continue
		}
		// 503 when the follower knows the write was never sent; 504
		// "outcome unknown" when the cut broke a kept-alive forward
		// connection the request had just been written to (net/http then
		// sends it again on a new connection, whose dial the blackhole
		// stalls): the follower cannot know whether those bytes arrived,
		// so it must not say "not applied". Either way it answers within
		// its leader wait and the write is on no member.
		unknown := st == http.StatusGatewayTimeout && strings.Contains(string(body), `"outcome":"unknown"`)
		if st != http.StatusServiceUnavailable && !unknown {
			t.Fatalf("write through a follower that cannot reach the leader: %d %s (after %v; leader changed: %v)", st, body, took, changed)
		}
		for _, s := range srvs {
			if got := d.state(t, s.Node.DB); got != "absent" {
				t.Fatalf("the refused write is %s on %s", got, s.Node.Cluster.ID())
			}
		}
		break
	}
	f.healAll()
	writeAcked(t, follower, follower.Admin(), newTaggedDoc(), 20*time.Second)
	h.waitAcked(t, "writes after the healing", 10, 30*time.Second)
	stop()
	historyHolds(t, &h, srvs, toks)
}
