package console_test

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"net/http"
	"net/smtp"
	"strings"
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
	s := quiretest.NewServer(t, func(c *quiretest.Config) {
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

// TestConsole_HealthSMTPFingerprint: with scan to e-mail on and no
// certificate configured, the health page lists the self-signed STARTTLS
// certificate made at the first start with the SHA-256 fingerprint a
// scanner that pins is given (issue 48) — the one the listener presents.
func TestConsole_HealthSMTPFingerprint(t *testing.T) {
	t.Parallel()
	s := quiretest.NewServer(t, func(c *quiretest.Config) { c.IntakeSMTP = node.IntakeSMTPConfig{Listen: "127.0.0.1:0"} })
	presented := smtpCertFingerprint(t, s.Node.SMTPAddr())
	e := &env{s: s, admin: s.Admin()}
	if r := s.Do("POST", "/groups", map[string]any{"group": map[string]any{"name": "Admins"}}, e.admin); r.Status != http.StatusOK && r.Status != http.StatusConflict {
		t.Fatalf("Admins group: %d %s", r.Status, r.Body)
	}
	e.user(t, "ada", "Admins", "temporary-1", true)
	b := newBrowser(t, "en-US")
	steps := append([]step{{"open the console", navigate(s.URL + "/console/")}}, signIn("ada", password)...)
	steps = append(steps,
		step{"the STARTTLS certificate and the fingerprint the listener presents", chromedp.Tasks{navigate(s.URL + "/console/#/admin/health"),
			textOf("#health-certs", "Scan to e-mail (STARTTLS)"), textOf("#health-certs", presented)}},
	)
	b.run(steps...)
}

// smtpCertFingerprint is the SHA-256 of the certificate the SMTP listener
// at addr presents after STARTTLS, as the console writes it (AB:CD:…).
func smtpCertFingerprint(t *testing.T, addr string) string {
	t.Helper()
	c, err := smtp.Dial(addr)
	if err != nil {
		t.Fatalf("dial the SMTP intake %s: %v", addr, err)
	}
	defer c.Close()
	if err := c.StartTLS(&tls.Config{InsecureSkipVerify: true}); err != nil { // the pin is what is checked
		t.Fatalf("STARTTLS: %v", err)
	}
	st, ok := c.TLSConnectionState()
	if !ok || len(st.PeerCertificates) == 0 {
		t.Fatal("no certificate after STARTTLS")
	}
	sum := sha256.Sum256(st.PeerCertificates[0].Raw)
	h := strings.ToUpper(hex.EncodeToString(sum[:]))
	var pairs []string
	for i := 0; i < len(h); i += 2 {
		pairs = append(pairs, h[i:i+2])
	}
	return strings.Join(pairs, ":")
}
