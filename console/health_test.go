package console_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"quire/node"
	"quire/quiretest"
)

// TestConsole_HealthCluster: on a cluster member (one node, bootstrapped)
// the health page names the members and lists the cluster CA's and this
// node's own cluster certificate with their expiry.
func TestConsole_HealthCluster(t *testing.T) {
	t.Parallel()
	s := quiretest.NewServer(t, func(c *node.Config) {
		c.Cluster = node.ClusterConfig{NodeID: "n1", RaftListen: "127.0.0.1:0", Bootstrap: true}
	})
	deadline := time.Now().Add(30 * time.Second)
	for !s.Node.Cluster.IsLeader() {
		if time.Now().After(deadline) {
			t.Fatal("n1 did not lead within 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	e := &env{s: s, admin: s.Admin()}
	if r := s.Do("POST", "/groups", map[string]any{"group": map[string]any{"name": "Admins"}}, e.admin); r.Status != http.StatusOK && r.Status != http.StatusConflict {
		t.Fatalf("Admins group: %d %s", r.Status, r.Body)
	}
	e.user(t, "ada", "Admins", "temporary-1", true)

	var axe chromedp.Action = chromedp.ActionFunc(func(context.Context) error { return nil })
	if src := axeFile(); src != "" {
		axe = axeClean(src, "health of a cluster member")
	}
	b := newBrowser(t, "en-US")
	steps := append([]step{{"open the console", navigate(s.URL + "/console/")}}, signIn("ada", password)...)
	steps = append(steps,
		step{"the health page of a cluster member", chromedp.Tasks{navigate(s.URL + "/console/#/admin/health"), textOf("#health", "Node n1 leads the cluster"),
			textOf("#health-members", "n1")}},
		step{"its cluster certificates and their expiry", chromedp.Tasks{textOf("#health-certs", "Cluster CA"), textOf("#health-certs", "Cluster node n1 (this node)"),
			wait(`document.querySelectorAll("#health-certs tr.cert-ok").length === 2`), axe,
			js(`document.getElementById("health-certs").scrollIntoView({block: "end"})`, nil), shot("admin-health-cluster")}},
	)
	b.run(steps...)
}
