package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"quire/config"
	"quire/node"
)

// cmdClusterJoin makes a new (stopped) node's data dir a member: it
// trades the join token for the node's certificate and the cluster's
// keys at --join, and the leader adds the node at --raft-listen. Start
// it afterwards with quire serve and the same node id and Raft address.
// quire serve --join does the same at its first start.
func cmdClusterJoin(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("cluster join", flag.ContinueOnError)
	fs.SetOutput(stderr)
	l, err := config.Load(fs, args, config.Options{Flags: []string{"data-dir", "node-id", "raft-listen", "join", "join-token"}})
	if err != nil {
		return err
	}
	c := l.Config.Cluster
	if c.NodeID == "" || c.Join == "" {
		return errors.New("cluster join: --node-id, --raft-listen, --join and --join-token are required")
	}
	// A node joins with a new data dir (serve --join checks the store
	// itself; here the server is not running and there is none yet).
	if ents, err := os.ReadDir(filepath.Join(l.DataDir, "db")); err == nil && len(ents) > 0 {
		return fmt.Errorf("cluster join: %s already holds a store: a node joins with a new data dir", l.DataDir)
	}
	log := newLogger(stderr, l.Config.Log.Level, l.Config.Log.Format)
	cc := node.ClusterConfig{NodeID: c.NodeID, RaftListen: c.RaftListen, Join: c.Join, JoinToken: c.JoinToken}
	if err := node.JoinCluster(context.Background(), log, l.DataDir, cc, c.RaftListen); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "node %s is a member; start it: quire serve --data-dir %s --node-id %s --raft-listen %s\n", c.NodeID, l.DataDir, c.NodeID, c.RaftListen)
	return nil
}
