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
	if v := metricValue(t, leader, "quire_cluster_divergent_members"); v != 1 {
		t.Fatalf("quire_cluster_divergent_members on the leader: %v", v)
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
	g := quiretest.StartServer(t, dir, func(c *node.Config) {
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
