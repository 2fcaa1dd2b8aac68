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

// promoteWhenCaughtUp runs on a member the leader readmitted as a
// nonvoter (quire cluster rejoin): once its log holds and applied what
// the leader committed, it asks the leader for its vote back. It ends
// when the node is a voter, or closes.
func (n *Node) promoteWhenCaughtUp(done <-chan struct{}) {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		st := n.Cluster.Status()
		self := false
		for _, s := range st.Servers {
			if s.ID == st.ID {
				self = true
				if s.Voter {
					return
				}
			}
		}
		if !self || !n.Cluster.CaughtUp() {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), leaderWait)
		err := n.onLeader(ctx, "/promote", st.ID, func() error { return n.promoteNode(st.ID) }, nil)
		cancel()
		if err != nil {
			n.cfg.Logger.Warn("cluster: asking for this node's vote back", "err", err)
			continue
		}
		n.cfg.Logger.Info("cluster: caught up after a rejoin: this node votes again", "nodeId", st.ID)
		return
	}
}

// promoteNode is the leader's side of a readmitted node's request.
func (n *Node) promoteNode(id string) error {
	err := n.Cluster.Promote(id)
	var nl *cluster.NotLeaderError
	switch {
	case err == nil:
		n.cfg.Logger.Info("cluster: readmitted node is a voter again", "nodeId", id)
		return nil
	case errors.As(err, &nl):
		return err
	case errors.Is(err, cluster.ErrNotNonvoter):
		return &server.ClusterError{Status: http.StatusNotFound, Msg: "node '" + id + "' is not a nonvoter of the cluster"}
	}
	return &server.ClusterError{Status: http.StatusServiceUnavailable, Msg: "promoting the node failed: " + err.Error()}
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
