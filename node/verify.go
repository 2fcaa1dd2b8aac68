package node

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"quire/cluster"
	"quire/server"
	"quire/storage"
)

// Replicas proven equal (cluster/DESIGN.md "Replicas proven equal"): the
// leader proposes a digest mark, every member hashes its store at the
// mark's index (cluster/digest.go), and the leader compares the digests.
// A member whose digest differs from the one more than half of the
// members hold is demoted to nonvoter (it no longer votes or counts in a
// majority) and told so: it marks itself diverged, refuses to serve, and
// waits to be rebuilt (quire cluster rejoin).

// DefaultVerifyEvery is how often the leader verifies the replicas in the
// background.
const DefaultVerifyEvery = 10 * time.Minute

// digestWait bounds how long a verification waits for a member's digest
// (the walk of a large store takes a while: the bench-scale row
// "replica digest walk" measures it at a million documents).
const digestWait = 5 * time.Minute

// verifyLoop verifies the replicas every cfg.Cluster.VerifyEvery while
// this node leads.
func (n *Node) verifyLoop(stop <-chan struct{}) {
	every := n.cfg.Cluster.VerifyEvery
	if every == 0 {
		every = DefaultVerifyEvery
	}
	if every < 0 {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if !n.Cluster.IsLeader() {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), digestWait)
		if _, err := n.verifyReplicas(ctx); err != nil {
			n.cfg.Logger.Warn("cluster: verifying the replicas", "err", err)
		}
		cancel()
	}
}

// verifyReplicas runs one verification on the leader and acts on it.
func (n *Node) verifyReplicas(ctx context.Context) (*cluster.VerifyReport, error) {
	c := n.Cluster
	if c.Diverged() != "" {
		return nil, &server.ClusterError{Status: http.StatusServiceUnavailable, Msg: "this member is diverged: " + c.Diverged()}
	}
	idx, err := c.MarkDigest(ctx)
	if err != nil {
		return nil, markErr(err, c.IsLeader())
	}
	st := c.Status()
	rep := &cluster.VerifyReport{Index: idx, At: time.Now().UTC(), Version: storage.DigestVersion}
	type res struct {
		i int
		d storage.Digest
		e error
	}
	ch := make(chan res, len(st.Servers))
	for i, s := range st.Servers {
		rep.Members = append(rep.Members, cluster.MemberDigest{NodeID: s.ID})
		go func() {
			var d storage.Digest
			var err error
			if s.ID == c.ID() {
				d, err = c.Digest(ctx, idx)
			} else {
				err, _ = n.forwardAdmin(ctx, s.Address, "/digest", digestRequest{Index: idx}, &d)
			}
			ch <- res{i, d, err}
		}()
	}
	for range st.Servers {
		r := <-ch
		rep.Members[r.i].Digest = r.d
		if r.e != nil {
			rep.Members[r.i].Err = r.e.Error()
		}
	}
	rep.Judge()
	c.SetVerifyReport(rep)
	n.verifyCount.Add(1)
	go n.shareVerifyReport(rep, st.Servers)
	if rep.Undecided {
		n.cfg.Logger.Error("cluster: the replicas differ and no digest is held by a majority", "index", idx)
	}
	for _, m := range rep.Members {
		if m.NotComparable != "" {
			n.cfg.Logger.Warn("cluster: a member's digest was taken by another algorithm version: not compared (finish the rolling upgrade)", "nodeId", m.NodeID, "index", idx, "why", m.NotComparable)
		}
	}
	for _, id := range rep.Divergent {
		var mine storage.Digest
		for _, m := range rep.Members {
			if m.NodeID == id {
				mine = m.Digest
			}
		}
		var maj storage.Digest
		for _, m := range rep.Members {
			if m.Equal {
				maj = m.Digest
				break
			}
		}
		reason := fmt.Sprintf("at index %d its digest %.16s differs from the majority's %.16s (%v differ: %d documents against %d)",
			idx, mine.SHA256, maj.SHA256, storage.DifferingKinds(mine, maj), mine.Documents, maj.Documents)
		n.cfg.Logger.Error("cluster: a member's store differs from the cluster's: demoting it", "nodeId", id, "reason", reason)
		if id == c.ID() {
			if err := c.SetDiverged(reason); err != nil {
				n.cfg.Logger.Error("cluster: mark this member diverged", "err", err)
			}
			if err := c.Demote(id); err != nil {
				n.cfg.Logger.Error("cluster: demote this member", "err", err)
			}
			continue
		}
		if err := c.Demote(id); err != nil {
			n.cfg.Logger.Error("cluster: demote a diverged member", "nodeId", id, "err", err)
		}
		for _, s := range st.Servers {
			if s.ID == id {
				if err, _ := n.forwardAdmin(ctx, s.Address, "/diverged", divergedRequest{Reason: reason}, nil); err != nil {
					n.cfg.Logger.Error("cluster: tell a member it diverged", "nodeId", id, "err", err)
				}
			}
		}
	}
	return rep, nil
}

// markErr is what a verification answers when its digest mark failed.
// A mark whose outcome is unknown (the lead lost while it replicated,
// Raft's queue full, the node closing) is only a verification not made:
// on a node that no longer leads it is a NotLeaderError, which onLeader
// takes to the next leader; otherwise a 503 to try again. It was a 500
// (POST /cluster/verify in a partition test under load).
func markErr(err error, leading bool) error {
	if !cluster.OutcomeUnknown(err) {
		return err
	}
	if !leading && !errors.Is(err, cluster.ErrClosed) {
		return &cluster.NotLeaderError{}
	}
	return &server.ClusterError{Status: http.StatusServiceUnavailable, Msg: "the verification could not be made (" + err.Error() + "): try again"}
}

// shareVerifyReport sends the report to every other member (/verified),
// so that /cluster/status shows the replicas' digests on any member.
// Best effort, in the background: a member that missed it shows the
// previous one until the next verification.
func (n *Node) shareVerifyReport(rep *cluster.VerifyReport, servers []cluster.Server) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for _, s := range servers {
		if s.ID == n.Cluster.ID() {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err, _ := n.forwardAdmin(ctx, s.Address, "/verified", rep, nil); err != nil {
				n.cfg.Logger.Debug("cluster: send the verification report to a member", "nodeId", s.ID, "err", err)
			}
		}()
	}
	wg.Wait()
}

// testDigestVersion, when set (export_test.go), gives the digest
// algorithm version a member reports for its id (0: its own).
var testDigestVersion func(nodeID string) int

type digestRequest struct {
	Index uint64 `json:"index"`
}

type divergedRequest struct {
	Reason string `json:"reason"`
}

// serveDigest is a member's side of a verification: its digest at the
// mark, once it applied it and walked its store.
func (n *Node) serveDigest(ctx context.Context, req digestRequest) (storage.Digest, error) {
	ctx, cancel := context.WithTimeout(ctx, digestWait)
	defer cancel()
	d, err := n.Cluster.Digest(ctx, req.Index)
	if err == nil && testDigestVersion != nil {
		if v := testDigestVersion(n.Cluster.ID()); v != 0 && v != d.Version {
			// A test makes this member look like one whose code takes
			// another version's digest: another sum of the same store.
			sum := sha256.Sum256(fmt.Appendf(nil, "%s version %d", d.SHA256, v))
			d.Version, d.SHA256 = v, hex.EncodeToString(sum[:])
		}
	}
	if errors.Is(err, cluster.ErrNoDigest) {
		return d, &server.ClusterError{Status: http.StatusNotFound, Msg: err.Error()}
	}
	return d, err
}

// verifyNow is POST /cluster/verify: the leader verifies now (a follower
// asks the leader).
func (n *Node) verifyNow(ctx context.Context) (*cluster.VerifyReport, error) {
	var rep cluster.VerifyReport
	var local *cluster.VerifyReport
	err := n.onLeader(ctx, "/verify", struct{}{}, func() error {
		var err error
		local, err = n.verifyReplicas(ctx)
		return err
	}, &rep)
	if err != nil {
		return nil, err
	}
	if local != nil {
		return local, nil
	}
	return &rep, nil
}
