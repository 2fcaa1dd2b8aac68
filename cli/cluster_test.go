package cli

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quire/cluster"
	"quire/node"
	"quire/quiretest"
)

func TestCluster_CommandLine(t *testing.T) {
	plain, used := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(used, "db"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(used, "db", "MANIFEST"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		inStderr string
	}{
		{"no subcommand", []string{"cluster"}, 2, "usage: quire cluster"},
		{"unknown", []string{"cluster", "frob"}, 2, `unknown command "frob"`},
		{"token outside a member", []string{"cluster", "token", "--data-dir", plain}, 1, "cluster member"},
		{"token ttl too long", []string{"cluster", "token", "--data-dir", plain, "--ttl", "48h"}, 1, "quire:"},
		{"status needs a url", []string{"cluster", "status", "--token", "x"}, 1, "--url is required"},
		{"status needs a token", []string{"cluster", "status", "--url", "https://127.0.0.1:1"}, 1, "admin token"},
		{"remove needs a node", []string{"cluster", "remove", "--url", "https://127.0.0.1:1", "--token", "x"}, 1, "NODE_ID"},
		{"join needs https", []string{"cluster", "join", "--data-dir", plain, "--node-id", "n2", "--raft-listen", "127.0.0.1:7002",
			"--join", "http://127.0.0.1:8080", "--join-token", "t"}, 1, "cluster.join"},
		{"join needs a node id", []string{"cluster", "join", "--data-dir", plain}, 1, "--node-id"},
		{"join needs a new data dir", []string{"cluster", "join", "--data-dir", used, "--node-id", "n2", "--raft-listen", "127.0.0.1:7002",
			"--join", "https://127.0.0.1:1", "--join-token", "t"}, 1, "already holds a store"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := Main(tc.args, &out, &errb); code != tc.code || !strings.Contains(errb.String(), tc.inStderr) {
				t.Fatalf("code %d stderr %q, want %d and %q", code, errb.String(), tc.code, tc.inStderr)
			}
		})
	}
}

// quire cluster token, join, status and leave against running members.
func TestCluster_JoinStatusLeaveThroughTheCLI(t *testing.T) {
	opt := func(id string, bootstrap bool, raft string) quiretest.Option {
		return func(c *quiretest.Config) {
			c.TLS = node.TLSConfig{SelfSigned: true}
			c.PublicURL = "https://" + c.Listen
			c.Cluster = node.ClusterConfig{NodeID: id, RaftListen: raft, Bootstrap: bootstrap}
		}
	}
	n1 := quiretest.NewServer(t, opt("n1", true, "127.0.0.1:0"))
	deadline := time.Now().Add(20 * time.Second)
	for !n1.Node.Cluster.IsLeader() {
		if time.Now().After(deadline) {
			t.Fatal("n1 does not lead")
		}
		time.Sleep(20 * time.Millisecond)
	}
	run := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if code := Main(args, &out, &errb); code != 0 {
			t.Fatalf("quire %s: %d %s", strings.Join(args, " "), code, errb.String())
		}
		return out.String()
	}
	tok := strings.TrimSpace(run("cluster", "token", "--data-dir", n1.DataDir, "--ttl", "5m"))
	if _, err := cluster.ParseJoinToken(tok); err != nil {
		t.Fatalf("token %q: %v", tok, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	raft := ln.Addr().String()
	ln.Close()
	d2 := t.TempDir()
	n1URL := "https://" + n1.Node.Addr()
	if out := run("cluster", "join", "--data-dir", d2, "--node-id", "n2", "--raft-listen", raft, "--join", n1URL, "--join-token", tok); !strings.Contains(out, "node n2 is a member") {
		t.Fatalf("cluster join: %q", out)
	}
	// The token is spent: a second join with it is refused.
	var out, errb bytes.Buffer
	if code := Main([]string{"cluster", "join", "--data-dir", t.TempDir(), "--node-id", "n3", "--raft-listen", "127.0.0.1:1",
		"--join", n1URL, "--join-token", tok}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "403") {
		t.Fatalf("join with a spent token: %d %q", code, errb.String())
	}
	n2 := quiretest.StartServer(t, d2, opt("n2", false, raft))
	n2URL := "https://" + n2.Node.Addr()
	for {
		if _, lid := n2.Node.Cluster.LeaderAddr(); lid == "n1" {
			break
		}
		if time.Now().After(deadline.Add(20 * time.Second)) {
			t.Fatal("n2 does not know the leader")
		}
		time.Sleep(20 * time.Millisecond)
	}
	st := run("cluster", "status", "--url", n2URL, "--data-dir", d2)
	if !strings.Contains(st, "node n2") || !strings.Contains(st, "leader n1") || !strings.Contains(st, raft) {
		t.Fatalf("cluster status: %q", st)
	}
	// n2's data dir signs tokens n1 accepts: the keys were handed over.
	if p, err := n1.Node.Auth.Authenticate(n2.Admin()); err != nil || !p.Admin {
		t.Fatalf("n2's token on n1: %v %v", p, err)
	}
	if out := run("cluster", "leave", "--url", n2URL, "--data-dir", d2); !strings.Contains(out, "node n2 left") {
		t.Fatalf("cluster leave: %q", out)
	}
	if s := n1.Node.Cluster.Status(); len(s.Servers) != 1 || s.Servers[0].ID != "n1" {
		t.Fatalf("members after n2 left: %+v", s.Servers)
	}
}
