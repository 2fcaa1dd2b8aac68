package node_test

import (
	"context"
	"net/http"
	"os"
	"testing"
	"time"

	"quire/cluster"
	"quire/node"
	"quire/quiretest"
)

// clusterOpt makes a quiretest server a cluster member on a loopback
// Raft port.
func clusterOpt(id string, bootstrap bool) quiretest.Option {
	return func(c *node.Config) {
		c.Cluster = node.ClusterConfig{NodeID: id, RaftListen: "127.0.0.1:0", Bootstrap: bootstrap}
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// provision gives a new data dir the certificate of node id, traded for
// a join token at the first node's CA (what POST /cluster/join does).
func provision(t *testing.T, firstDataDir, id string) string {
	t.Helper()
	ca, err := cluster.LoadCA(cluster.TLSDir(node.ClusterDir(firstDataDir)))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := ca.IssueJoinToken(time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tlsDir := cluster.TLSDir(node.ClusterDir(dir))
	if err := os.MkdirAll(tlsDir, 0o700); err != nil {
		t.Fatal(err)
	}
	csr, err := cluster.NewNodeKey(tlsDir, id)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ca.Redeem(tok, csr)
	if err != nil {
		t.Fatal(err)
	}
	if err := cluster.SaveNodeCert(tlsDir, b, ca.Fingerprint()); err != nil {
		t.Fatal(err)
	}
	return dir
}

// startCluster starts three nodes: n1 bootstraps and leads, n2 and n3
// join it.
func startCluster(t *testing.T) (leader *quiretest.Server, followers []*quiretest.Server) {
	t.Helper()
	leader = quiretest.NewServer(t, clusterOpt("n1", true))
	waitFor(t, "n1 to lead", 20*time.Second, func() bool { return leader.Node.Cluster.IsLeader() })
	for _, id := range []string{"n2", "n3"} {
		f := quiretest.StartServer(t, provision(t, leader.DataDir, id), clusterOpt(id, false))
		if err := leader.Node.Cluster.Join(id, f.Node.Cluster.Addr()); err != nil {
			t.Fatalf("join %s: %v", id, err)
		}
		waitFor(t, id+" to know the leader", 20*time.Second, func() bool {
			_, lid := f.Node.Cluster.LeaderAddr()
			return lid == "n1"
		})
		followers = append(followers, f)
	}
	return leader, followers
}

func TestCluster_FollowerForwardsWritesAndReadsItsOwn(t *testing.T) {
	leader, fs := startCluster(t)
	f := fs[0]
	ftok, ltok := f.Admin(), leader.Admin()

	// A document created through a follower is readable at once on it
	// and on the leader (read-your-writes).
	for i := range 5 {
		r := f.Do(http.MethodPost, "/documents", map[string]any{"path": "f/doc.txt", "content": "hello", "contentType": "text/plain"}, ftok)
		if r.Status != http.StatusCreated {
			t.Fatalf("create %d through the follower: %d %s", i, r.Status, r.Body)
		}
		id := quiretest.Str(t, r.JSON(t), "documentId")
		for _, s := range []struct {
			name string
			srv  *quiretest.Server
			tok  string
		}{{"follower", f, ftok}, {"leader", leader, ltok}} {
			g := s.srv.Do(http.MethodGet, "/documents/"+id, nil, s.tok)
			if g.Status != http.StatusOK {
				t.Fatalf("read %s on the %s: %d %s", id, s.name, g.Status, g.Body)
			}
			if p := quiretest.Str(t, g.JSON(t), "path"); p == "" {
				t.Fatalf("read %s on the %s: no path", id, s.name)
			}
		}
		c := f.Do(http.MethodGet, "/documents/"+id+"/content", nil, ftok)
		if c.Status != http.StatusOK || quiretest.Str(t, c.JSON(t), "content") != "hello" {
			t.Fatalf("content on the follower: %d %s", c.Status, c.Body)
		}
	}

	// Errors of the applier come back typed: same status and body as on
	// the leader.
	attr := map[string]any{"attribute": map[string]any{"key": "category"}}
	if r := f.Do(http.MethodPost, "/attributes", attr, ftok); r.Status != http.StatusCreated {
		t.Fatalf("create attribute through the follower: %d %s", r.Status, r.Body)
	}
	onF, onL := f.Do(http.MethodPost, "/attributes", attr, ftok), leader.Do(http.MethodPost, "/attributes", attr, ltok)
	if onF.Status != http.StatusBadRequest || onF.Status != onL.Status || string(onF.Body) != string(onL.Body) {
		t.Fatalf("duplicate attribute: follower %d %s, leader %d %s", onF.Status, onF.Body, onL.Status, onL.Body)
	}
	doc := map[string]any{"documentId": "5b7e9d36-0f4c-4b0e-9a8e-000000000001", "content": "x"}
	if r := leader.Do(http.MethodPost, "/documents", doc, ltok); r.Status != http.StatusCreated {
		t.Fatalf("create on the leader: %d %s", r.Status, r.Body)
	}
	// The same create again answers the first (a client-chosen id acts as
	// an Idempotency-Key); another body with the id conflicts.
	if r := f.Do(http.MethodPost, "/documents", doc, ftok); r.Status != http.StatusCreated {
		t.Fatalf("the same create again through the follower: %d %s, want the first answer", r.Status, r.Body)
	}
	doc["content"] = "y"
	onF, onL = f.Do(http.MethodPost, "/documents", doc, ftok), leader.Do(http.MethodPost, "/documents", doc, ltok)
	if onF.Status != http.StatusConflict || onF.Status != onL.Status || string(onF.Body) != string(onL.Body) {
		t.Fatalf("duplicate document id: follower %d %s, leader %d %s", onF.Status, onF.Body, onL.Status, onL.Body)
	}

	// Every node holds the same state.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	idx := leader.Node.Cluster.AppliedIndex()
	want, _, err := leader.Node.DB.StateHash()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range fs {
		if err := s.Node.Cluster.WaitApplied(ctx, idx); err != nil {
			t.Fatal(err)
		}
		if got, _, err := s.Node.DB.StateHash(); err != nil || got != want {
			t.Fatalf("%s state hash %s (%v), leader's %s", s.Node.Cluster.ID(), got, err, want)
		}
	}

	// GET /cluster/status (Admins) and /readyz.
	st := f.Do(http.MethodGet, "/cluster/status", nil, ftok)
	if st.Status != http.StatusOK {
		t.Fatalf("cluster status: %d %s", st.Status, st.Body)
	}
	m := st.JSON(t)
	if quiretest.Str(t, m, "nodeId") != "n2" || quiretest.Str(t, m, "leaderId") != "n1" || quiretest.Str(t, m, "state") != "Follower" ||
		len(quiretest.List(t, m, "peers")) != 3 || quiretest.Num(t, m, "appliedIndex") < float64(idx) {
		t.Fatalf("cluster status: %s", st.Body)
	}
	if r := f.Do(http.MethodGet, "/cluster/status", nil, f.Token("u", "default")); r.Status != http.StatusUnauthorized {
		t.Fatalf("cluster status for a non-admin: %d %s", r.Status, r.Body)
	}
	if r := f.Do(http.MethodGet, "/readyz", nil, ""); r.Status != http.StatusOK || !quiretest.Bool(t, quiretest.Obj(t, r.JSON(t)["cluster"]), "ready") {
		t.Fatalf("readyz on a follower with a leader: %d %s", r.Status, r.Body)
	}

	// Without a majority the leader steps down: /readyz is 503 on it.
	for _, s := range fs {
		s.Close()
	}
	waitFor(t, "the lone node to lose its leader", 20*time.Second, func() bool {
		r := leader.Do(http.MethodGet, "/readyz", nil, "")
		return r.Status == http.StatusServiceUnavailable
	})
	r := leader.Do(http.MethodGet, "/readyz", nil, "")
	if quiretest.Bool(t, quiretest.Obj(t, r.JSON(t)["cluster"]), "ready") {
		t.Fatalf("readyz without a leader: %d %s", r.Status, r.Body)
	}
}
