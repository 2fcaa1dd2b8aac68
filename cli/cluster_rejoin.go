package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"

	"quire/auth"
	"quire/cluster"
	"quire/config"
	"quire/node"
)

// cmdClusterRejoin rebuilds the Raft state of a member that cannot read
// it (its log or snapshots are damaged: /readyz, quire doctor and
// quire_raft_state_unreadable say so), from the other members. With the
// member's Raft port closed (the process stopped, or running without
// Raft), it asks another member at --url to have the leader readmit the
// node as a nonvoter at its Raft address, then moves the node's raft/wal
// and raft/snapshots aside (renamed with the time, kept for forensics).
// The node keeps its cluster certificate (raft/tls) and its store; at
// its next start its log is empty, the leader sends it a snapshot or the
// log, and once it caught up it asks for its vote back.
func cmdClusterRejoin(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("cluster rejoin", flag.ContinueOnError)
	fs.SetOutput(stderr)
	u := fs.String("url", "", "base URL of another member's API, e.g. https://10.0.0.2:8080 (required)")
	token := fs.String("token", "", "admin token (or QUIRE_TOKEN); default: one signed with --data-dir's keys")
	caFile := fs.String("ca-file", "", "PEM certificate to trust for an https --url (default: the system's roots; the member's <data-dir>/tls/cert.pem for a self-signed one)")
	rebuild := fs.Bool("rebuild-store", false, "move the store and search index aside too, so the member gets all its data from the leader (done anyway for a member found to differ from the cluster)")
	l, err := config.Load(fs, args, config.Options{Flags: []string{"data-dir", "raft-listen"}})
	if err != nil {
		return err
	}
	dataDir := l.DataDir
	id, err := cluster.LoadIdentity(cluster.TLSDir(node.ClusterDir(dataDir)))
	if err != nil {
		return fmt.Errorf("cluster rejoin: %s holds no cluster identity (is it a member's data dir?): %w", dataDir, err)
	}
	// The token is signed with this data dir's keys (the cluster's) when
	// none is given; its API certificate is not the member's at --url, so
	// unlike the other cluster commands it is not trusted by default.
	tok := firstNonEmpty(*token, os.Getenv("QUIRE_TOKEN"))
	if tok == "" {
		if tok, err = auth.SignToken(dataDir, "", "quire-cluster", []string{"Admins"}, 5*time.Minute); err != nil {
			return fmt.Errorf("cluster rejoin: sign an admin token with %s's keys (or give --token): %w", dataDir, err)
		}
	}
	none := ""
	c, err := apiFlags{url: u, token: &tok, caFile: caFile, dataDir: &none}.client()
	if err != nil {
		return err
	}
	var st clusterStatus
	if err := c.do(http.MethodGet, "/cluster/status", &st); err != nil {
		return err
	}
	if st.NodeID == id.NodeID {
		return fmt.Errorf("cluster rejoin: --url is node %s itself: ask another member", id.NodeID)
	}
	addr := l.Config.Cluster.RaftListen
	for _, p := range st.Peers {
		if p.NodeID == id.NodeID && addr == "" {
			addr = p.RaftAddress
		}
	}
	if addr == "" {
		return fmt.Errorf("cluster rejoin: node %s is not in the cluster's configuration: give its Raft address with --raft-listen", id.NodeID)
	}
	// A member whose Raft runs holds its Raft port: its state is
	// readable, and moving it aside under it would lose its log.
	if ln, err := net.Listen("tcp", addr); err != nil {
		return fmt.Errorf("cluster rejoin: %s is in use (%v): stop node %s first (its Raft state is in use)", addr, err, id.NodeID)
	} else {
		ln.Close()
	}
	var status int
	if err := c.send(http.MethodPost, "/cluster/nodes/"+url.PathEscape(id.NodeID)+"/rejoin", map[string]string{"raftAddress": addr}, &status); err != nil {
		return err
	}
	now := time.Now()
	moved, err := node.MoveRaftStateAside(dataDir, now)
	if err != nil {
		return errors.Join(fmt.Errorf("cluster rejoin: node %s was readmitted, but its Raft state could not be moved aside: move %s/wal and snapshots away by hand before it starts", id.NodeID, node.ClusterDir(dataDir)), err)
	}
	if reason, diverged := cluster.IsDiverged(node.ClusterDir(dataDir)); diverged || *rebuild {
		// A member whose data differs from the cluster's starts from an
		// empty store: replaying the log skips what its store claims to
		// hold, so only a new store repairs it.
		if diverged {
			fmt.Fprintf(stdout, "node %s was found to differ from the cluster (%s): its store is rebuilt from the leader\n", id.NodeID, reason)
		}
		more, err := node.MoveStoreAside(dataDir, now)
		moved = append(moved, more...)
		if err != nil {
			return errors.Join(fmt.Errorf("cluster rejoin: node %s was readmitted, but its store could not be moved aside: move %s/db and %s/index away by hand before it starts", id.NodeID, dataDir, dataDir), err)
		}
	}
	for _, m := range moved {
		fmt.Fprintf(stdout, "kept %s\n", m)
	}
	fmt.Fprintf(stdout, "node %s readmitted at %s as a nonvoter; (re)start it with its usual command line: it catches up from the leader and votes again once it has\n", id.NodeID, addr)
	return nil
}
