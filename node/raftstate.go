package node

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"quire/cluster"
	"quire/server"
	"quire/storage"
)

// A member whose Raft state cannot be read (cluster.StateError: a
// damaged log segment, an unreadable snapshot, a disk error, Raft
// panicking on an entry it cannot read) does not crash-loop: Open keeps
// the node up without Raft. It serves reads from its store, refuses
// writes (503) and cluster traffic (its cluster port stays closed), and
// says why in the log, /readyz, /cluster/status and
// quire_raft_state_unreadable. quire cluster rejoin rebuilds its Raft
// state from the other members (cluster/DESIGN.md).

// unreadableState is the node's view of the cluster while its Raft
// state cannot be read: server.ClusterInfo, and refusals for joins and
// removals.
type unreadableState struct {
	n      *Node
	reason string
}

func (u unreadableState) Status() cluster.Status {
	applied, _ := u.n.DB.AppliedIndex()
	return cluster.Status{ID: u.n.cfg.Cluster.NodeID, State: "Unreadable", AppliedIndex: applied, Unreadable: u.reason}
}

func (u unreadableState) refusal() error {
	return &server.ClusterError{Status: http.StatusServiceUnavailable,
		Msg: "this node's Raft state cannot be read: ask another member, and rebuild this one with quire cluster rejoin"}
}

func (u unreadableState) JoinCluster(context.Context, server.ClusterJoinRequest) (*server.ClusterJoinResponse, error) {
	return nil, u.refusal()
}

func (u unreadableState) RemoveNode(context.Context, string) error { return u.refusal() }

func (u unreadableState) ReadmitNode(context.Context, string, string) error { return u.refusal() }

// unreadableApplier refuses every write of a member without Raft.
type unreadableApplier struct{ reason string }

func (a unreadableApplier) Apply(context.Context, *storage.Command) (storage.Result, error) {
	return storage.Result{}, a.refused()
}

func (a unreadableApplier) WriteState() storage.WriteState {
	return storage.WriteState{Writable: false, Kind: storage.KindIOError, Reason: a.refused().Reason}
}

func (a unreadableApplier) refused() *storage.WriteRefusedError {
	return &storage.WriteRefusedError{Kind: storage.KindIOError,
		Reason: "This cluster member's Raft state cannot be read, so it takes no writes: write through another member (the operator rebuilds this one with quire cluster rejoin)"}
}

// RaftStateUnreadable is why the member's Raft state could not be read
// at start ("" when it was, and on a single server).
func (n *Node) RaftStateUnreadable() string { return n.raftUnreadable }

// neverLeader is the leader source of a member without Raft.
func neverLeader() (bool, <-chan struct{}) { return false, nil }

// useUnreadableState makes the node a member without Raft after Open
// failed to read its Raft state.
func (n *Node) useUnreadableState(err error) {
	n.raftUnreadable = err.Error()
	n.applier = unreadableApplier{reason: n.raftUnreadable}
	n.cfg.Logger.Error("cluster: this node's Raft state cannot be read: it serves reads from its store and refuses writes and cluster traffic; "+
		"rebuild its Raft state from the other members with: quire cluster rejoin --data-dir "+n.cfg.DataDir+" --url https://<another member>",
		"nodeId", n.cfg.Cluster.NodeID, "err", err)
}

// MoveRaftStateAside renames the Raft log (wal/) and snapshots
// (snapshots/) of dataDir's member to <name>.unreadable-<UTC time>, kept
// for forensics; the cluster identity (tls/) and the store stay. The
// next start opens an empty Raft state, which the leader fills (a
// snapshot, or the log from its start). It returns the new names.
func MoveRaftStateAside(dataDir string, now time.Time) ([]string, error) {
	dir := ClusterDir(dataDir)
	stamp := now.UTC().Format("20060102T150405Z")
	var moved []string
	for _, name := range []string{"wal", "snapshots"} {
		from := filepath.Join(dir, name)
		if _, err := os.Stat(from); errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			return moved, err
		}
		to := filepath.Join(dir, name+".unreadable-"+stamp)
		if err := os.Rename(from, to); err != nil {
			return moved, fmt.Errorf("move %s aside: %w", from, err)
		}
		moved = append(moved, to)
	}
	return moved, nil
}

// promoteWhenCaughtUp runs on every member: a member the leader
// readmitted as a nonvoter (quire cluster rejoin) asks the leader for its
// vote back once its log reaches the configuration that readmitted it
// and keeps up with the commit index (cluster.Node.Promote decides). It
// asks the leader rather than trusting its own configuration: while a
// rebuilt member replays a long log, its latest configuration is an old
// one that lists it as a voter (issue 44: the loop ended there, and the
// member stayed a nonvoter for good). It ends once the leader answers
// that the member votes, or when the node closes.
func (n *Node) promoteWhenCaughtUp(done <-chan struct{}) {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		n.promoteChecks.Add(1)
		c := n.Cluster
		if c.Diverged() != "" {
			continue // a diverged member waits to be rebuilt: no vote
		}
		last := c.LastIndex()
		if last == 0 || c.IsLeader() {
			if c.IsLeader() {
				return // a leader votes
			}
			continue // no log yet: the leader has yet to reach this node
		}
		req := promoteRequest{NodeID: c.ID(), LastIndex: last}
		var rep promoteReply
		ctx, cancel := context.WithTimeout(context.Background(), leaderWait)
		err := n.onLeader(ctx, "/promote", req, func() error {
			var err error
			rep.Promoted, err = n.promoteNode(req)
			return err
		}, &rep)
		cancel()
		var ce *server.ClusterError
		switch {
		case err == nil:
			if rep.Promoted {
				n.cfg.Logger.Info("cluster: caught up after a rejoin: this node votes again", "nodeId", req.NodeID, "lastIndex", last)
			}
			return
		case errors.As(err, &ce) && ce.Status == http.StatusConflict:
			// Still behind: asked again at the next tick.
		default:
			n.cfg.Logger.Warn("cluster: asking for this node's vote back", "err", err)
		}
	}
}

// promoteRequest is a member's request for its vote back (/promote). A
// bare JSON string (the node id) is the form of earlier releases.
type promoteRequest struct {
	NodeID    string `json:"nodeId"`
	LastIndex uint64 `json:"lastIndex"`
}

type promoteReply struct {
	Promoted bool `json:"promoted"`
}

// promoteNode is the leader's side of a member's request for its vote.
func (n *Node) promoteNode(req promoteRequest) (bool, error) {
	promoted, err := n.Cluster.Promote(req.NodeID, req.LastIndex)
	var nl *cluster.NotLeaderError
	var lag *cluster.LaggingError
	switch {
	case err == nil:
		if promoted {
			n.cfg.Logger.Info("cluster: readmitted node is a voter again", "nodeId", req.NodeID, "lastIndex", req.LastIndex)
		}
		return promoted, nil
	case errors.As(err, &nl):
		return false, err
	case errors.As(err, &lag):
		return false, &server.ClusterError{Status: http.StatusConflict, Msg: err.Error()}
	case errors.Is(err, cluster.ErrNotNonvoter):
		return false, &server.ClusterError{Status: http.StatusNotFound, Msg: "node '" + req.NodeID + "' is not a member of the cluster"}
	}
	return false, &server.ClusterError{Status: http.StatusServiceUnavailable, Msg: "promoting the node failed: " + err.Error()}
}

// readmitNode is the leader's side of POST /cluster/nodes/{id}/rejoin.
func (n *Node) readmitNode(id, addr string) error {
	if id == n.Cluster.ID() {
		return &server.ClusterError{Status: http.StatusConflict, Msg: "node '" + id + "' leads the cluster: ask another member to readmit a node"}
	}
	err := n.Cluster.Readmit(id, addr)
	var nl *cluster.NotLeaderError
	switch {
	case err == nil:
		n.cfg.Logger.Info("cluster: node readmitted as a nonvoter", "nodeId", id, "raftAddress", addr)
		return nil
	case errors.As(err, &nl):
		return err
	}
	return &server.ClusterError{Status: http.StatusServiceUnavailable, Msg: "readmitting the node failed: " + err.Error()}
}

// ReadmitNode readmits a node whose Raft state was lost (POST
// /cluster/nodes/{nodeId}/rejoin); a follower has the leader do it.
func (a clusterAPI) ReadmitNode(ctx context.Context, id, addr string) error {
	n := a.n
	return n.onLeader(ctx, "/readmit", readmitRequest{NodeID: id, RaftAddress: addr}, func() error { return n.readmitNode(id, addr) }, nil)
}

type readmitRequest struct {
	NodeID      string `json:"nodeId"`
	RaftAddress string `json:"raftAddress"`
}

// MoveStoreAside renames dataDir's store (db/) and search index (index/)
// to <name>.diverged-<UTC time>, kept for forensics, marks the member as
// rebuilt (it never bootstraps: its empty store would otherwise make a
// --bootstrap command line start a cluster of its own) and clears its
// diverged mark. The next start opens an empty store, which the leader
// fills (a snapshot, or the log from its start), and builds the index
// from it. It returns the new names.
func MoveStoreAside(dataDir string, now time.Time) ([]string, error) {
	stamp := now.UTC().Format("20060102T150405Z")
	if err := os.MkdirAll(ClusterDir(dataDir), 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(ClusterDir(dataDir), rebuiltFile), []byte(stamp+"\n"), 0o600); err != nil {
		return nil, err
	}
	var moved []string
	for _, name := range []string{"db", "index"} {
		from := filepath.Join(dataDir, name)
		if _, err := os.Stat(from); errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			return moved, err
		}
		to := filepath.Join(dataDir, name+".diverged-"+stamp)
		if err := os.Rename(from, to); err != nil {
			return moved, fmt.Errorf("move %s aside: %w", from, err)
		}
		moved = append(moved, to)
	}
	return moved, cluster.ClearDiverged(ClusterDir(dataDir))
}

// rebuiltFile, in the cluster dir, marks a member whose store was moved
// aside by quire cluster rejoin: it never bootstraps.
const rebuiltFile = "REBUILT"
