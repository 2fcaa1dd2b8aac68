package node_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"quire/node"
	"quire/quiretest"
)

// healthCert is a row of GET /system/health's certificates.
type healthCert struct {
	Kind     string `json:"kind"`
	NodeID   string `json:"nodeId"`
	Self     bool   `json:"self"`
	SeenAt   string `json:"seenAt"`
	Subject  string `json:"subject"`
	NotAfter string `json:"notAfter"`
	DaysLeft int    `json:"daysLeft"`
	State    string `json:"state"`
}

type healthOut struct {
	Cluster struct {
		Clustered bool   `json:"clustered"`
		NodeID    string `json:"nodeId"`
		LeaderID  string `json:"leaderId"`
		Members   []struct {
			NodeID string `json:"nodeId"`
			Leader bool   `json:"leader"`
			Voter  bool   `json:"voter"`
		} `json:"members"`
	} `json:"cluster"`
	Certificates []healthCert `json:"certificates"`
}

func health(t *testing.T, s *quiretest.Server) healthOut {
	t.Helper()
	r := s.Do(http.MethodGet, "/system/health", nil, s.Admin())
	if r.Err != nil || r.Status != http.StatusOK {
		t.Fatalf("GET /system/health: %d %s %v", r.Status, r.Body, r.Err)
	}
	var out healthOut
	if err := json.Unmarshal(r.Body, &out); err != nil {
		t.Fatalf("%v: %s", err, r.Body)
	}
	return out
}

// certOf finds the row of kind (and node id, for cluster-node).
func certOf(out healthOut, kind, nodeID string) *healthCert {
	for i, c := range out.Certificates {
		if c.Kind == kind && c.NodeID == nodeID {
			return &out.Certificates[i]
		}
	}
	return nil
}

// TestSystemHealth_ClusterAndListener: on a cluster member serving
// HTTPS, GET /system/health names the members and the leader, and the
// expiry of the listener's certificate (the self-signed one: about 397
// days), the cluster CA's (10 years), this node's own cluster
// certificate (a year) and each peer's as it presented it to this node
// in a mutual TLS handshake (with when).
func TestSystemHealth_ClusterAndListener(t *testing.T) {
	t.Parallel() // in-process cluster of its own: see TestMain
	n1 := httpsClient(t, quiretest.NewServer(t, joinOpt("n1", true, "", "")))
	waitFor(t, "n1 to lead", 20*time.Second, func() bool { return n1.Node.Cluster.IsLeader() })
	out := health(t, n1)
	c := out.Cluster
	if !c.Clustered || c.NodeID != "n1" || c.LeaderID != "n1" || len(c.Members) != 1 || !c.Members[0].Leader || !c.Members[0].Voter {
		t.Errorf("cluster: %+v", c)
	}
	if l := certOf(out, "listener", ""); l == nil || l.State != "ok" || l.DaysLeft < 390 || l.NotAfter == "" {
		t.Errorf("listener certificate: %+v", out.Certificates)
	}
	if ca := certOf(out, "cluster-ca", ""); ca == nil || ca.State != "ok" || ca.DaysLeft < 3600 {
		t.Errorf("cluster CA certificate: %+v", out.Certificates)
	}
	if own := certOf(out, "cluster-node", "n1"); own == nil || !own.Self || own.State != "ok" || own.DaysLeft < 360 || own.DaysLeft > 366 || own.SeenAt != "" {
		t.Errorf("n1's own cluster certificate: %+v", out.Certificates)
	}
	if len(out.Certificates) != 3 {
		t.Errorf("%d certificates, want the listener's, the CA's and n1's: %+v", len(out.Certificates), out.Certificates)
	}

	// A second member: each lists the other's certificate once they
	// have talked over the cluster port.
	tok, err := node.IssueJoinToken(n1.DataDir, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	n2 := joinNode(t, "n2", n1.URL, tok)
	for _, p := range []struct {
		s          *quiretest.Server
		self, peer string
	}{{n1, "n1", "n2"}, {n2, "n2", "n1"}} {
		waitFor(t, p.self+" to list "+p.peer+"'s certificate", 20*time.Second, func() bool { return certOf(health(t, p.s), "cluster-node", p.peer) != nil })
		out := health(t, p.s)
		peer, own := certOf(out, "cluster-node", p.peer), certOf(out, "cluster-node", p.self)
		if peer.Self || peer.SeenAt == "" || peer.State != "ok" || peer.DaysLeft < 360 || peer.Subject == "" {
			t.Errorf("%s's view of %s's certificate: %+v", p.self, p.peer, peer)
		}
		if own == nil || !own.Self {
			t.Errorf("%s's own certificate: %+v", p.self, out.Certificates)
		}
	}
}
