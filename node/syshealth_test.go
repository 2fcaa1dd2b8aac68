package node_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"quire/quiretest"
)

// TestSystemHealth_ClusterAndListener: on a cluster member serving
// HTTPS, GET /system/health names the members and the leader, and the
// listener's certificate with its expiry (the self-signed one: about 397
// days).
func TestSystemHealth_ClusterAndListener(t *testing.T) {
	n1 := httpsClient(t, quiretest.NewServer(t, joinOpt("n1", true, "", "")))
	waitFor(t, "n1 to lead", 20*time.Second, func() bool { return n1.Node.Cluster.IsLeader() })
	r := n1.Do(http.MethodGet, "/system/health", nil, n1.Admin())
	if r.Err != nil || r.Status != http.StatusOK {
		t.Fatalf("GET /system/health: %d %s %v", r.Status, r.Body, r.Err)
	}
	var out struct {
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
		Certificates []struct {
			Kind     string `json:"kind"`
			NotAfter string `json:"notAfter"`
			DaysLeft int    `json:"daysLeft"`
			State    string `json:"state"`
		} `json:"certificates"`
	}
	if err := json.Unmarshal(r.Body, &out); err != nil {
		t.Fatalf("%v: %s", err, r.Body)
	}
	c := out.Cluster
	if !c.Clustered || c.NodeID != "n1" || c.LeaderID != "n1" || len(c.Members) != 1 || !c.Members[0].Leader || !c.Members[0].Voter {
		t.Errorf("cluster: %s", r.Body)
	}
	if len(out.Certificates) != 1 || out.Certificates[0].Kind != "listener" || out.Certificates[0].State != "ok" ||
		out.Certificates[0].DaysLeft < 390 || out.Certificates[0].NotAfter == "" {
		t.Errorf("certificates: %s", r.Body)
	}
}
