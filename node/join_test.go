package node_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quire/cluster"
	"quire/node"
	"quire/quiretest"
	"quire/server"
	"quire/storage"
)

// joinOpt makes a quiretest server a cluster member serving HTTPS
// (self-signed): n bootstraps, or joins at joinURL with token.
func joinOpt(id string, bootstrap bool, joinURL, token string) quiretest.Option {
	return func(c *quiretest.Config) {
		c.TLS = node.TLSConfig{SelfSigned: true}
		c.PublicURL = "https://" + c.Listen
		c.Cluster = node.ClusterConfig{NodeID: id, RaftListen: "127.0.0.1:0", Bootstrap: bootstrap, Join: joinURL, JoinToken: token}
	}
}

// httpsClient points s at its HTTPS listener, trusting its self-signed
// certificate.
func httpsClient(t *testing.T, s *quiretest.Server) *quiretest.Server {
	t.Helper()
	pemBytes, err := os.ReadFile(filepath.Join(s.DataDir, "tls", "cert.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemBytes) {
		t.Fatal("no certificate in cert.pem")
	}
	s.URL = "https://" + s.Node.Addr()
	s.Client = &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	return s
}

func voters(s *quiretest.Server) []string {
	var ids []string
	for _, p := range s.Node.Cluster.Status().Servers {
		if p.Voter {
			ids = append(ids, p.ID)
		}
	}
	return ids
}

// joinNode starts a node with a new data dir that joins at joinURL.
func joinNode(t *testing.T, id, joinURL, token string) *quiretest.Server {
	t.Helper()
	s := httpsClient(t, quiretest.StartServer(t, t.TempDir(), joinOpt(id, false, joinURL, token)))
	waitFor(t, id+" to know a leader", 20*time.Second, func() bool {
		_, lid := s.Node.Cluster.LeaderAddr()
		return lid != ""
	})
	return s
}

// joinedCluster bootstraps n1 and joins n2 and n3 through it over
// HTTPS, each with its own join token; n1 leads.
func joinedCluster(t *testing.T) []*quiretest.Server {
	t.Helper()
	n1 := httpsClient(t, quiretest.NewServer(t, joinOpt("n1", true, "", "")))
	waitFor(t, "n1 to lead", 20*time.Second, func() bool { return n1.Node.Cluster.IsLeader() })
	nodes := []*quiretest.Server{n1}
	for _, id := range []string{"n2", "n3"} {
		tok, err := node.IssueJoinToken(n1.DataDir, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, joinNode(t, id, n1.URL, tok))
	}
	return nodes
}

// postJoin calls POST /cluster/join the way a joining node does (TLS
// pinned to the CA fingerprint, JoinALPN), with any body.
func postJoin(t *testing.T, base, fingerprint string, body any) *quiretest.Response {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: cluster.JoinClientConfig(fingerprint)}}
	defer c.CloseIdleConnections()
	resp, err := c.Post(base+"/cluster/join", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatalf("POST /cluster/join: %v", err)
	}
	defer resp.Body.Close()
	rb, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return &quiretest.Response{Status: resp.StatusCode, Header: resp.Header, Body: rb}
}

// joinRequest is a well-formed join request for a new node id.
func joinRequest(t *testing.T, id, token string) server.ClusterJoinRequest {
	t.Helper()
	csr, err := cluster.NewNodeKey(t.TempDir(), id)
	if err != nil {
		t.Fatal(err)
	}
	return server.ClusterJoinRequest{Token: token, NodeID: id, RaftAddress: "127.0.0.1:1",
		CSR: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: csr}))}
}

func TestJoin_ThreeNodesFormOverHTTPAndShareOneIdentity(t *testing.T) {
	t.Parallel() // in-process cluster of its own: see TestMain
	n1 := httpsClient(t, quiretest.NewServer(t, joinOpt("n1", true, "", "")))
	waitFor(t, "n1 to lead", 20*time.Second, func() bool { return n1.Node.Cluster.IsLeader() })

	tok2, err := node.IssueJoinToken(n1.DataDir, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	n2 := joinNode(t, "n2", n1.URL, tok2)
	// n3 joins through n2, a follower: it has the leader admit n3.
	tok3, err := node.IssueJoinToken(n1.DataDir, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	n3 := joinNode(t, "n3", n2.URL, tok3)
	if v := voters(n1); len(v) != 3 {
		t.Fatalf("voters after two joins: %v", v)
	}

	// One identity: a token minted with n1's keys works on n3, one from
	// n3's data dir on n1 (quire token on any member's data dir).
	if r := n3.Do(http.MethodGet, "/documents", nil, n1.Admin()); r.Status != http.StatusOK {
		t.Fatalf("n1's token on n3: %d %s", r.Status, r.Body)
	}
	if r := n1.Do(http.MethodGet, "/documents", nil, n3.Admin()); r.Status != http.StatusOK {
		t.Fatalf("n3's token on n1: %d %s", r.Status, r.Body)
	}
	// Every member holds the CA keys: a token issued on n3's data dir
	// is redeemed by the leader.
	if _, err := node.IssueJoinToken(n3.DataDir, time.Hour); err != nil {
		t.Fatalf("join token on n3's data dir: %v", err)
	}

	// A signed download URL made by n2 works on n3.
	r := n1.Do(http.MethodPost, "/documents", map[string]any{"path": "a.txt", "content": "shared", "contentType": "text/plain"}, n1.Admin())
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	id := quiretest.Str(t, r.JSON(t), "documentId")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	idx := n1.Node.Cluster.AppliedIndex()
	for _, s := range []*quiretest.Server{n2, n3} {
		if err := s.Node.Cluster.WaitApplied(ctx, idx); err != nil {
			t.Fatal(err)
		}
	}
	u := n2.Do(http.MethodGet, "/documents/"+id+"/url", nil, n2.Admin())
	if u.Status != http.StatusOK {
		t.Fatalf("download url on n2: %d %s", u.Status, u.Body)
	}
	signed, err := url.Parse(quiretest.Str(t, u.JSON(t), "url"))
	if err != nil {
		t.Fatal(err)
	}
	if d := n3.Do(http.MethodGet, signed.RequestURI(), nil, ""); d.Status != http.StatusOK || string(d.Body) != "shared" {
		t.Fatalf("n2's download url on n3: %d %s", d.Status, d.Body)
	}
	// Control: the same URL with its signature changed is refused.
	q := signed.Query()
	q.Set("signature", strings.Repeat("A", len(q.Get("signature"))))
	signed.RawQuery = q.Encode()
	if d := n3.Do(http.MethodGet, signed.RequestURI(), nil, ""); d.Status != http.StatusForbidden {
		t.Fatalf("tampered download url on n3: %d %s", d.Status, d.Body)
	}

	// Refusals: none adds a voter. The requests come over the pinned TLS
	// a joining node uses, at the leader and at a follower.
	ca, err := cluster.LoadCA(cluster.TLSDir(node.ClusterDir(n1.DataDir)))
	if err != nil {
		t.Fatal(err)
	}
	fp := ca.Fingerprint()
	other, err := cluster.CreateCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := other.IssueJoinToken(time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	short, err := ca.IssueJoinToken(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	info, err := cluster.ParseJoinToken(short)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the short token to expire", 5*time.Second, func() bool { return time.Now().After(info.Expires) })
	fresh, err := node.IssueJoinToken(n1.DataDir, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	withCSR := func(mod func(*server.ClusterJoinRequest)) server.ClusterJoinRequest {
		req := joinRequest(t, "n4", fresh)
		mod(&req)
		return req
	}
	for _, tc := range []struct {
		name   string
		at     *quiretest.Server
		body   any
		status int
	}{
		{"reused token at the leader", n1, joinRequest(t, "n4", tok2), http.StatusForbidden},
		{"reused token at a follower", n3, joinRequest(t, "n4", tok3), http.StatusForbidden},
		{"expired token", n2, joinRequest(t, "n4", short), http.StatusForbidden},
		{"another cluster's token", n1, joinRequest(t, "n4", foreign), http.StatusForbidden},
		{"garbage token", n1, joinRequest(t, "n4", "quirejoin1.e30.AAAA"), http.StatusForbidden},
		{"no token", n1, joinRequest(t, "n4", ""), http.StatusUnauthorized},
		{"bad node id", n1, withCSR(func(r *server.ClusterJoinRequest) { r.NodeID = "-x" }), http.StatusBadRequest},
		{"csr for another id", n1, withCSR(func(r *server.ClusterJoinRequest) { r.NodeID = "n5" }), http.StatusBadRequest},
		{"unspecified raft address", n1, withCSR(func(r *server.ClusterJoinRequest) { r.RaftAddress = "0.0.0.0:7001" }), http.StatusBadRequest},
		{"no csr", n1, withCSR(func(r *server.ClusterJoinRequest) { r.CSR = "" }), http.StatusBadRequest},
		{"an existing member's id", n2, withCSR(func(r *server.ClusterJoinRequest) {
			*r = joinRequest(t, "n2", fresh)
		}), http.StatusConflict},
		{"not JSON", n1, "{", http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r *quiretest.Response
			if s, ok := tc.body.(string); ok {
				c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: cluster.JoinClientConfig(fp)}}
				resp, err := c.Post(tc.at.URL+"/cluster/join", "application/json", strings.NewReader(s))
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				r = &quiretest.Response{Status: resp.StatusCode, Body: b}
			} else {
				r = postJoin(t, tc.at.URL, fp, tc.body)
			}
			if r.Status != tc.status {
				t.Fatalf("status %d %s, want %d", r.Status, r.Body, tc.status)
			}
			var m map[string]any
			if err := json.Unmarshal(r.Body, &m); err != nil || (m["message"] == nil && m["errors"] == nil) {
				t.Fatalf("not a FormKiQ error body: %s", r.Body)
			}
			if v := voters(n1); len(v) != 3 {
				t.Fatalf("voters after a refused join: %v", v)
			}
		})
	}
	// The refusals above did not spend the fresh token... it was only
	// refused for its request, so it still admits a node; and without
	// the join protocol (a plain HTTPS client) the endpoint answers 400.
	if r := n1.Do(http.MethodPost, "/cluster/join", joinRequest(t, "n4", fresh), ""); r.Status != http.StatusBadRequest {
		t.Fatalf("join without the join protocol: %d %s", r.Status, r.Body)
	}
	// A joining node pinned to another cluster's CA never talks to this one.
	foreignNode := t.TempDir()
	err = node.JoinCluster(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil)), foreignNode,
		node.ClusterConfig{NodeID: "n9", Join: n1.URL, JoinToken: foreign}, "127.0.0.1:1")
	if err == nil || !strings.Contains(err.Error(), "not a member of the cluster the join token names") {
		t.Fatalf("join pinned to another CA: %v", err)
	}
	if v := voters(n1); len(v) != 3 {
		t.Fatalf("voters: %v", v)
	}
	// A data dir that holds data of its own does not join (the log
	// replayed onto it would leave it different from the others).
	used := quiretest.NewServer(t)
	if r := used.Do(http.MethodPost, "/documents", map[string]any{"content": "mine"}, used.Admin()); r.Status != http.StatusCreated {
		t.Fatalf("create on a single server: %d %s", r.Status, r.Body)
	}
	used.Close()
	spare, err := node.IssueJoinToken(n1.DataDir, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	_, err = node.Open(node.Config{DataDir: used.DataDir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		MinFreeBytes: int64(storage.MinReserve()), MinFreePercent: -1,
		Cluster: node.ClusterConfig{NodeID: "n8", RaftListen: "127.0.0.1:0", Join: n1.URL, JoinToken: spare}})
	if err == nil || !strings.Contains(err.Error(), "empty data dir") {
		t.Fatalf("join with data: %v", err)
	}
	if v := voters(n1); len(v) != 3 {
		t.Fatalf("voters after a join with data: %v", v)
	}
	n4 := joinNode(t, "n4", n3.URL, fresh)
	if v := voters(n1); len(v) != 4 {
		t.Fatalf("voters after n4 joined with the token refused for bad requests: %v", v)
	}

	// DELETE /cluster/nodes/{id} through a follower: the leader removes n4.
	if r := n2.Do(http.MethodDelete, "/cluster/nodes/n4", nil, n2.Token("u", "default")); r.Status != http.StatusUnauthorized {
		t.Fatalf("remove by a non-admin: %d %s", r.Status, r.Body)
	}
	if r := n2.Do(http.MethodDelete, "/cluster/nodes/n4", nil, n2.Admin()); r.Status != http.StatusOK {
		t.Fatalf("remove n4: %d %s", r.Status, r.Body)
	}
	if v := voters(n1); len(v) != 3 {
		t.Fatalf("voters after removing n4: %v", v)
	}
	if r := n2.Do(http.MethodDelete, "/cluster/nodes/n4", nil, n2.Admin()); r.Status != http.StatusNotFound {
		t.Fatalf("remove n4 again: %d %s", r.Status, r.Body)
	}
	n4.Close()
}

// A join token is spent for the whole cluster, not in the memory of the
// leader that redeemed it: after that leader is gone, the new leader
// refuses the token (403), at itself and through a follower.
func TestJoin_SpentTokenStaysSpentAfterAFailover(t *testing.T) {
	t.Parallel() // in-process cluster of its own: see TestMain
	n1 := httpsClient(t, quiretest.NewServer(t, joinOpt("n1", true, "", "")))
	waitFor(t, "n1 to lead", 20*time.Second, func() bool { return n1.Node.Cluster.IsLeader() })
	tok2, err := node.IssueJoinToken(n1.DataDir, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	n2 := joinNode(t, "n2", n1.URL, tok2)
	tok3, err := node.IssueJoinToken(n1.DataDir, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	n3 := joinNode(t, "n3", n1.URL, tok3)
	ca, err := cluster.LoadCA(cluster.TLSDir(node.ClusterDir(n1.DataDir)))
	if err != nil {
		t.Fatal(err)
	}
	fp := ca.Fingerprint()

	// The leader that redeemed both tokens stops abruptly.
	if err := n1.Node.Cluster.Close(); err != nil {
		t.Fatal(err)
	}
	var leader, follower *quiretest.Server
	waitFor(t, "a new leader", 20*time.Second, func() bool {
		switch {
		case n2.Node.Cluster.IsLeader():
			leader, follower = n2, n3
		case n3.Node.Cluster.IsLeader():
			leader, follower = n3, n2
		}
		return leader != nil
	})
	for _, tc := range []struct {
		name string
		at   *quiretest.Server
		tok  string
	}{
		{"n2's token at the new leader", leader, tok2},
		{"n3's token through the follower", follower, tok3},
	} {
		r := postJoin(t, tc.at.URL, fp, joinRequest(t, "n4", tc.tok))
		if r.Status != http.StatusForbidden {
			t.Fatalf("%s: %d %s, want 403", tc.name, r.Status, r.Body)
		}
	}
	if v := voters(leader); len(v) != 3 {
		t.Fatalf("voters after the refused joins: %v", v)
	}
}
