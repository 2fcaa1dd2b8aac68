package node_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"quire/cli"
	"quire/cluster"
	"quire/node"
	"quire/quiretest"
	"quire/storage"
)

// Replicas proven equal, end to end (issue 44): the leader compares a
// digest of every member's store at one index (POST /cluster/verify,
// here through a follower); a member whose store was changed outside the
// log is found, demoted to nonvoter, refuses to serve and says why
// (/readyz, /cluster/status, every API route 503, the metric); quire
// cluster rejoin moves its store aside and the leader rebuilds it; then
// every digest is equal again and the member votes.
func TestCluster_VerifyFindsADivergedReplicaAndRejoinRepairsIt(t *testing.T) {
	leader, fs := startCluster(t)
	all := []*quiretest.Server{leader, fs[0], fs[1]}
	for i := range 10 {
		if r := leader.Do(http.MethodPost, "/documents", map[string]any{"documentId": fmt.Sprintf("00000000-0000-4000-8000-%012d", i), "path": fmt.Sprintf("v/%d.txt", i), "content": "x"}, leader.Admin()); r.Status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
	}
	verify := func(s *quiretest.Server) cluster.VerifyReport {
		t.Helper()
		r := s.Do(http.MethodPost, "/cluster/verify", nil, s.Admin())
		var rep cluster.VerifyReport
		if r.Status != http.StatusOK || json.Unmarshal(r.Body, &rep) != nil {
			t.Fatalf("verify on %s: %d %s", s.Node.Cluster.ID(), r.Status, r.Body)
		}
		return rep
	}
	rep := verify(fs[0])
	if len(rep.Members) != 3 || len(rep.Divergent) != 0 || rep.Majority == "" {
		t.Fatalf("verify of equal replicas: %+v", rep)
	}
	for _, m := range rep.Members {
		if !m.Equal || m.Digest.Documents != 10 || m.Digest.Index != rep.Index {
			t.Fatalf("member %s: %+v", m.NodeID, m)
		}
	}

	// n3's store gets a document the log never held.
	bad := fs[1]
	rogue := storage.MustCommand(storage.OpAddDocuments, "default", "rogue", time.Now(), storage.AddDocuments{Docs: []storage.NewDocument{{Document: storage.Document{DocumentID: "11111111-1111-4111-8111-111111111111", Path: "rogue.txt"}}}})
	if _, err := bad.Node.DB.Apply(context.Background(), rogue); err != nil {
		t.Fatal(err)
	}
	rep = verify(leader)
	badID := bad.Node.Cluster.ID()
	if len(rep.Divergent) != 1 || rep.Divergent[0] != badID {
		t.Fatalf("verify after n3's store changed: divergent %v, want [%s]: %+v", rep.Divergent, badID, rep)
	}
	waitFor(t, badID+" to be demoted", 20*time.Second, func() bool {
		for _, p := range leader.Node.Cluster.Status().Servers {
			if p.ID == badID {
				return !p.Voter
			}
		}
		return false
	})
	if r := bad.Do(http.MethodGet, "/readyz", nil, ""); r.Status != http.StatusServiceUnavailable || !bytes.Contains(r.Body, []byte("differs from the cluster")) {
		t.Fatalf("/readyz on the diverged member: %d %s", r.Status, r.Body)
	}
	if r := bad.Do(http.MethodGet, "/documents", nil, bad.Admin()); r.Status != http.StatusServiceUnavailable || !bytes.Contains(r.Body, []byte("quire cluster rejoin")) {
		t.Fatalf("a read on the diverged member: %d %s", r.Status, r.Body)
	}
	if r := bad.Do(http.MethodGet, "/cluster/status", nil, bad.Admin()); r.Status != http.StatusOK || !bytes.Contains(r.Body, []byte(`"diverged"`)) {
		t.Fatalf("/cluster/status on the diverged member: %d %s", r.Status, r.Body)
	}
	if v := metricValue(t, bad, "quire_cluster_replica_diverged"); v != 1 {
		t.Fatalf("quire_cluster_replica_diverged on the diverged member: %v", v)
	}
	// Counted on the member that made the verification: the leader then,
	// which may no longer be the one the cluster started with (a lead
	// lost on a loaded machine moves the verification to the next).
	made := 0
	for _, s := range all {
		if s == bad || metricValue(t, s, "quire_cluster_verified_index") != float64(rep.Index) {
			continue
		}
		made++
		if v := metricValue(t, s, "quire_cluster_divergent_members"); v != 1 {
			t.Fatalf("quire_cluster_divergent_members on %s, which verified at %d: %v", s.Node.Cluster.ID(), rep.Index, v)
		}
	}
	if made != 1 {
		t.Fatalf("%d members report the verification at index %d in quire_cluster_verified_index; want 1", made, rep.Index)
	}

	// quire cluster rejoin rebuilds it; it starts with its usual
	// command line.
	id, addr, dir := badID, bad.Node.Cluster.Addr(), bad.DataDir
	bad.Close()
	var out, errb bytes.Buffer
	if code := cli.Main([]string{"cluster", "rejoin", "--data-dir", dir, "--url", leader.URL, "--token", leader.Admin()}, &out, &errb); code != 0 {
		t.Fatalf("quire cluster rejoin: %d %s %q", code, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "rebuilt from the leader") {
		t.Fatalf("rejoin did not rebuild the store: %s", out.String())
	}
	g := quiretest.StartServer(t, dir, func(c *quiretest.Config) {
		c.Cluster = node.ClusterConfig{NodeID: id, RaftListen: addr, Bootstrap: true}
	})
	all[2] = g
	waitFor(t, id+" to vote again", 60*time.Second, func() bool {
		for _, p := range leader.Node.Cluster.Status().Servers {
			if p.ID == id {
				return p.Voter
			}
		}
		return false
	})
	rep = verify(g)
	if len(rep.Divergent) != 0 || rep.Undecided {
		t.Fatalf("verify after the rebuild: %+v", rep)
	}
	for _, m := range rep.Members {
		if !m.Equal {
			t.Fatalf("after the rebuild %s differs: %+v", m.NodeID, m)
		}
	}
	if r := g.Do(http.MethodGet, "/documents/11111111-1111-4111-8111-111111111111", nil, g.Admin()); r.Status != http.StatusNotFound {
		t.Fatalf("the rogue document on the rebuilt member: %d %s", r.Status, r.Body)
	}
	if r := g.Do(http.MethodGet, "/documents/00000000-0000-4000-8000-000000000003", nil, g.Admin()); r.Status != http.StatusOK {
		t.Fatalf("a document on the rebuilt member: %d %s", r.Status, r.Body)
	}
	if v := metricValue(t, g, "quire_cluster_replica_diverged"); v != 0 {
		t.Fatalf("quire_cluster_replica_diverged after the rebuild: %v", v)
	}
}

// TestCluster_LeaderVerifiesInTheBackgroundAndEveryMemberShowsIt: with
// cluster.verify_interval (here 300 ms) the leader verifies the replicas
// by itself, every member's GET /cluster/status shows the latest
// report with each member's digest, only the leader counts it in the
// metric, and a member whose store changed outside the log is found and
// demoted without anyone asking.
func TestCluster_LeaderVerifiesInTheBackgroundAndEveryMemberShowsIt(t *testing.T) {
	often := func(id string, bootstrap bool) []quiretest.Option {
		return append(plainMembers(id, bootstrap), func(c *quiretest.Config) { c.Cluster.VerifyEvery = 300 * time.Millisecond })
	}
	leader, fs := leaderAndFollowers(t, formCluster(t, []string{"n1", "n2", "n3"}, often, nil))
	all := []*quiretest.Server{leader, fs[0], fs[1]}
	const docs = 5
	for i := range docs {
		if r := leader.Do(http.MethodPost, "/documents", map[string]any{"path": fmt.Sprintf("bg/%d.txt", i), "content": "x"}, leader.Admin()); r.Status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
	}
	type status struct {
		Diverged string                `json:"diverged"`
		Verify   *cluster.VerifyReport `json:"verify"`
	}
	statusOf := func(s *quiretest.Server) (status, bool) {
		var st status
		r := s.Do(http.MethodGet, "/cluster/status", nil, s.Admin())
		return st, r.Status == http.StatusOK && json.Unmarshal(r.Body, &st) == nil
	}
	var last status
	for _, s := range all {
		waitFor(t, s.Node.Cluster.ID()+"'s status to show every member's digest of all documents", 30*time.Second, func() bool {
			st, ok := statusOf(s)
			last = st
			if !ok || st.Verify == nil || len(st.Verify.Members) != 3 || len(st.Verify.Divergent) != 0 {
				return false
			}
			for _, m := range st.Verify.Members {
				if !m.Equal || m.Digest.Documents != docs || len(m.Digest.SHA256) != 64 || m.Digest.Index != st.Verify.Index {
					return false
				}
			}
			return true
		})
	}
	t.Logf("latest report: index %d, majority %.16s", last.Verify.Index, last.Verify.Majority)
	if v := metricValue(t, leader, "quire_cluster_verified_index"); v <= 0 {
		t.Errorf("quire_cluster_verified_index on the leader: %v", v)
	}
	for _, f := range fs {
		if v := metricValue(t, f, "quire_cluster_verified_index"); v != 0 {
			t.Errorf("quire_cluster_verified_index on follower %s (it verified nothing): %v", f.Node.Cluster.ID(), v)
		}
	}

	// A follower's store gets a document the log never held: the next
	// background verification finds it, demotes it and tells it.
	bad := fs[1]
	badID := bad.Node.Cluster.ID()
	rogue := storage.MustCommand(storage.OpAddDocuments, "default", "rogue", time.Now(), storage.AddDocuments{Docs: []storage.NewDocument{{Document: storage.Document{DocumentID: "22222222-2222-4222-8222-222222222222", Path: "rogue.txt"}}}})
	if _, err := bad.Node.DB.Apply(context.Background(), rogue); err != nil {
		t.Fatal(err)
	}
	waitFor(t, badID+" to be found diverged by a background verification", 30*time.Second, func() bool {
		st, ok := statusOf(bad)
		return ok && st.Diverged != ""
	})
	waitFor(t, "the leader's report to name "+badID, 30*time.Second, func() bool {
		st, ok := statusOf(leader)
		return ok && st.Verify != nil && len(st.Verify.Divergent) == 1 && st.Verify.Divergent[0] == badID
	})
	// The demotion is a configuration change: it may reach the
	// configuration of the member asked (whoever leads now) after the
	// report named it.
	waitFor(t, badID+" to vote no more after a background verification found it diverged", 20*time.Second, func() bool {
		l := leaderAmong(all)
		if l == nil {
			return false
		}
		for _, p := range l.Node.Cluster.Status().Servers {
			if p.ID == badID {
				return !p.Voter
			}
		}
		return false
	})
}

// TestCluster_AMemberOfAnotherDigestVersionIsNotComparedNorDemoted: in a
// rolling upgrade that changes how the digest is computed, a member
// whose code takes another version's digest holds the same data under
// another sum. The leader compares only digests of its own version: the
// member is reported as not comparable (in POST /cluster/verify, every
// member's /cluster/status and quire cluster verify), neither equal nor
// divergent; it is not demoted, not told it diverged, and no metric
// counts it divergent.
func TestCluster_AMemberOfAnotherDigestVersionIsNotComparedNorDemoted(t *testing.T) {
	leader, fs := startCluster(t)
	for i := range 5 {
		if r := leader.Do(http.MethodPost, "/documents", map[string]any{"path": fmt.Sprintf("dv/%d.txt", i), "content": "x"}, leader.Admin()); r.Status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
	}
	other := fs[1]
	otherID := other.Node.Cluster.ID()
	newer := storage.DigestVersion + 1
	defer node.SetTestDigestVersion(func(id string) int {
		if id == otherID {
			return newer
		}
		return 0
	})()
	want := fmt.Sprintf("not comparable (digest version %d, leader's %d)", newer, storage.DigestVersion)

	r := fs[0].Do(http.MethodPost, "/cluster/verify", nil, fs[0].Admin())
	var rep cluster.VerifyReport
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &rep) != nil {
		t.Fatalf("verify through a follower: %d %s", r.Status, r.Body)
	}
	if rep.Version != storage.DigestVersion || len(rep.Divergent) != 0 || rep.Undecided || rep.Majority == "" ||
		len(rep.NotComparable) != 1 || rep.NotComparable[0] != otherID {
		t.Fatalf("verify with %s on digest version %d: %+v", otherID, newer, rep)
	}
	for _, m := range rep.Members {
		switch {
		case m.NodeID == otherID && (m.Equal || m.NotComparable != want || m.Digest.Version != newer || m.Digest.SHA256 == rep.Majority):
			t.Errorf("member %s of digest version %d: %+v, want %q", m.NodeID, newer, m, want)
		case m.NodeID != otherID && (!m.Equal || m.NotComparable != "" || m.Digest.Version != storage.DigestVersion || m.Digest.Documents != 5):
			t.Errorf("member %s of the leader's digest version: %+v", m.NodeID, m)
		}
	}

	// Not demoted, not told it diverged, not counted.
	for _, p := range leader.Node.Cluster.Status().Servers {
		if !p.Voter {
			t.Errorf("%s no longer votes after a verification", p.ID)
		}
	}
	if d := other.Node.Cluster.Diverged(); d != "" {
		t.Errorf("%s was marked diverged: %s", otherID, d)
	}
	if g := other.Do(http.MethodGet, "/documents", nil, other.Admin()); g.Status != http.StatusOK {
		t.Errorf("a read on %s: %d %s", otherID, g.Status, g.Body)
	}
	if v := metricValue(t, leader, "quire_cluster_divergent_members"); v != 0 {
		t.Errorf("quire_cluster_divergent_members on the leader: %v", v)
	}
	if v := metricValue(t, other, "quire_cluster_replica_diverged"); v != 0 {
		t.Errorf("quire_cluster_replica_diverged on %s: %v", otherID, v)
	}

	// Every member's status says so (the leader sends its report).
	for _, s := range []*quiretest.Server{leader, fs[0], other} {
		waitFor(t, s.Node.Cluster.ID()+"'s status to show "+otherID+" not comparable", 20*time.Second, func() bool {
			var st struct {
				Diverged string                `json:"diverged"`
				Verify   *cluster.VerifyReport `json:"verify"`
			}
			g := s.Do(http.MethodGet, "/cluster/status", nil, s.Admin())
			if g.Status != http.StatusOK || json.Unmarshal(g.Body, &st) != nil || st.Diverged != "" || st.Verify == nil || st.Verify.Index < rep.Index {
				return false
			}
			for _, m := range st.Verify.Members {
				if m.NodeID == otherID {
					return m.NotComparable == want && !m.Equal && len(st.Verify.Divergent) == 0
				}
			}
			return false
		})
	}

	// quire cluster verify prints it and does not fail.
	var out, errb bytes.Buffer
	if code := cli.Main([]string{"cluster", "verify", "--url", other.URL, "--token", other.Admin()}, &out, &errb); code != 0 {
		t.Fatalf("quire cluster verify: %d %s %q", code, out.String(), errb.String())
	}
	for _, s := range []string{want, "not compared: [" + otherID + "]"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("quire cluster verify does not say %q:\n%s", s, out.String())
		}
	}
	for _, p := range leader.Node.Cluster.Status().Servers {
		if !p.Voter {
			t.Errorf("%s no longer votes after quire cluster verify", p.ID)
		}
	}
}
