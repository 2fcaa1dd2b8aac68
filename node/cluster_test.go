package node_test

import (
	"errors"
	"net/http"
	"os"
	"slices"
	"testing"
	"time"

	"quire/cluster"
	"quire/node"
	"quire/quiretest"
)

// clusterOpt makes a quiretest server a cluster member on a loopback
// Raft port.
func clusterOpt(id string, bootstrap bool) quiretest.Option {
	return func(c *quiretest.Config) {
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

// memberOptions gives the options of member id (bootstrap: it starts
// the cluster).
type memberOptions func(id string, bootstrap bool) []quiretest.Option

func plainMembers(id string, bootstrap bool) []quiretest.Option {
	return []quiretest.Option{clusterOpt(id, bootstrap)}
}

// formCluster starts the members ids: the first bootstraps, the others
// are provisioned at its CA and joined by whoever leads when each
// joins, retrying until a deadline (joinMember). started, when set, is
// called with each member as soon as it runs. It returns them in order
// once every member knows the same leader and the configuration lists
// them all as voters.
func formCluster(t *testing.T, ids []string, opt memberOptions, started func(id string, s *quiretest.Server)) []*quiretest.Server {
	t.Helper()
	first := quiretest.NewServer(t, opt(ids[0], true)...)
	if started != nil {
		started(ids[0], first)
	}
	waitFor(t, ids[0]+" to lead", 30*time.Second, func() bool { return first.Node.Cluster.IsLeader() })
	// Documents created without actions get none (quiretest.Config's
	// DefaultProcessing): cluster tests name the actions they are about.
	first.NoDefaultProcessing(t)
	srvs := []*quiretest.Server{first}
	for _, id := range ids[1:] {
		s := quiretest.StartServer(t, provision(t, first.DataDir, id), opt(id, false)...)
		if started != nil {
			started(id, s)
		}
		srvs = append(srvs, s)
		joinMember(t, srvs, id, s.Node.Cluster.Addr())
	}
	membersAgree(t, srvs, 60*time.Second)
	return srvs
}

// joinMember has whoever leads among srvs add id at addr as a voter. A
// busy machine can cost the leader its lease during a join (a
// two-voter configuration needs the new member's answers, which come
// late under load), so a join that meets no leader, a NotLeaderError or
// a lost leadership is made again to the next leader, for up to a
// minute; Join leaves a member with the same id and address alone, so
// a join that did commit is not made twice.
func joinMember(t *testing.T, srvs []*quiretest.Server, id, addr string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := errors.New("no leader")
		if l := leaderAmong(srvs); l != nil {
			if err = l.Node.Cluster.Join(id, addr); err == nil {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("join %s at %s: %v", id, addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// membersAgree waits until every member of srvs knows the same leader,
// one of them, whose configuration lists them all as voters; it returns
// that leader.
func membersAgree(t *testing.T, srvs []*quiretest.Server, within time.Duration) *quiretest.Server {
	t.Helper()
	var leader *quiretest.Server
	waitFor(t, "every member to know one leader that lists them all as voters", within, func() bool {
		leader = leaderAmong(srvs)
		if leader == nil {
			return false
		}
		voters := 0
		for _, sv := range leader.Node.Cluster.Status().Servers {
			if sv.Voter {
				voters++
			}
		}
		if voters != len(srvs) {
			return false
		}
		for _, s := range srvs {
			if _, lid := s.Node.Cluster.LeaderAddr(); lid != leader.Node.Cluster.ID() {
				return false
			}
		}
		return true
	})
	return leader
}

// leaderAndFollowers splits srvs into the leader all of them know and
// the others, in order.
func leaderAndFollowers(t *testing.T, srvs []*quiretest.Server) (leader *quiretest.Server, followers []*quiretest.Server) {
	t.Helper()
	leader = membersAgree(t, srvs, 60*time.Second)
	for _, s := range srvs {
		if s != leader {
			followers = append(followers, s)
		}
	}
	return leader, followers
}

// startCluster starts three nodes (formCluster: n1 bootstraps, n2 and n3
// join) and returns the one that leads and the two others.
func startCluster(t *testing.T) (leader *quiretest.Server, followers []*quiretest.Server) {
	t.Helper()
	return leaderAndFollowers(t, formCluster(t, []string{"n1", "n2", "n3"}, plainMembers, nil))
}

func TestCluster_FollowerForwardsWritesAndReadsItsOwn(t *testing.T) {
	t.Parallel() // in-process cluster of its own: see TestMain
	leader, fs := startCluster(t)
	f := fs[0]
	ftok, ltok := f.Admin(), leader.Admin()

	// A document created through a follower is readable at once on it
	// and on the leader (read-your-writes).
	for i := range 5 {
		term := leader.Node.Cluster.Status().Term
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
			if g.Status == http.StatusNotFound && s.srv == leader && (!leader.Node.Cluster.IsLeader() || leader.Node.Cluster.Status().Term != term) {
				// The lead moved during the write (a loaded machine): another
				// member applied it first. This one reads it once it applied
				// the write's index.
				t.Logf("the lead moved during create %d: the read on %s waits for the write's index", i, leader.Node.Cluster.ID())
				g = s.srv.DoHeaders(http.MethodGet, "/documents/"+id, nil, s.tok, map[string]string{"Quire-Min-Applied-Index": r.Header.Get("Quire-Applied-Index")})
			}
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
	// The same create again, or another body with the id, is FormKiQ's
	// 409 through either node (issue 48: a retry carries an
	// Idempotency-Key).
	for _, c := range []string{"x", "y"} {
		doc["content"] = c
		onF, onL = f.Do(http.MethodPost, "/documents", doc, ftok), leader.Do(http.MethodPost, "/documents", doc, ltok)
		if onF.Status != http.StatusConflict || onF.Status != onL.Status || string(onF.Body) != string(onL.Body) {
			t.Fatalf("duplicate document id (content %s): follower %d %s, leader %d %s", c, onF.Status, onF.Body, onL.Status, onL.Body)
		}
	}

	// Every node holds the same state.
	converged(t, append(slices.Clone(fs), leader))
	// What follows is about the leader and a follower as they are now
	// (the lead may have moved on a loaded machine).
	leader, fs = leaderAndFollowers(t, append(slices.Clone(fs), leader))
	f = fs[0]
	ftok = f.Admin()
	idx := leader.Node.Cluster.AppliedIndex()

	// GET /cluster/status (Admins) and /readyz.
	st := f.Do(http.MethodGet, "/cluster/status", nil, ftok)
	if st.Status != http.StatusOK {
		t.Fatalf("cluster status: %d %s", st.Status, st.Body)
	}
	m := st.JSON(t)
	if quiretest.Str(t, m, "nodeId") != f.Node.Cluster.ID() || quiretest.Str(t, m, "leaderId") != leader.Node.Cluster.ID() || quiretest.Str(t, m, "state") != "Follower" ||
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
