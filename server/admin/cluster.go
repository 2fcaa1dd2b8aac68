package admin

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"quire/auth"
	"quire/cluster"
	"quire/server/internal/api"
	"quire/storage"
)

// HandleGetClusterStatus serves GET /cluster/status (Admins): this
// node's view of the Raft cluster. 404 on a server that is not a
// cluster member.
func (s *Handlers) HandleGetClusterStatus(r *api.Request) error {
	if s.Deps.Cluster == nil {
		return api.ErrStatus(http.StatusNotFound, "this server is not a cluster member")
	}
	st := s.Deps.Cluster.Status()
	peers := make([]fiber.Map, 0, len(st.Servers))
	for _, p := range st.Servers {
		peers = append(peers, fiber.Map{"nodeId": p.ID, "raftAddress": p.Address, "voter": p.Voter, "leader": p.ID == st.LeaderID})
	}
	out := fiber.Map{
		"nodeId": st.ID, "raftAddress": st.Address, "state": st.State,
		"leaderId": st.LeaderID, "leaderRaftAddress": st.LeaderAddr, "term": st.Term,
		"lastLogIndex": st.LastLogIndex, "commitIndex": st.CommitIndex, "appliedIndex": st.AppliedIndex,
		"lastSnapshotIndex": st.LastSnapshotIndex, "peers": peers,
	}
	if !st.LastContact.IsZero() {
		out["lastContact"] = st.LastContact.UTC().Format(time.RFC3339Nano)
	}
	if st.Halted != "" {
		out["halted"] = st.Halted
	}
	if st.Unreadable != "" {
		out["raftStateUnreadable"] = st.Unreadable
	}
	if st.Diverged != "" {
		out["diverged"] = st.Diverged
	}
	if st.Verify != nil {
		out["verify"] = st.Verify
	}
	return r.JSON(out)
}

// ClusterVerifier is a member's node that verifies the replicas (POST
// /cluster/verify) and says whether this member was found to differ.
type ClusterVerifier interface {
	VerifyReplicas(ctx context.Context) (*cluster.VerifyReport, error)
	Diverged() string
}

// HandleVerifyCluster serves POST /cluster/verify (Admins): the leader
// takes a digest of every member's store at one index now and compares
// them (cluster/DESIGN.md, "Replicas proven equal"); a member that
// differs is demoted and refuses to serve.
func (s *Handlers) HandleVerifyCluster(r *api.Request) error {
	v, ok := s.Deps.Cluster.(ClusterVerifier)
	if !ok {
		return api.ErrStatus(http.StatusNotFound, "this server is not a cluster member")
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.UserContext()), 5*time.Minute)
	defer cancel()
	rep, err := v.VerifyReplicas(ctx)
	if err != nil {
		return err
	}
	return r.JSON(rep)
}

// ClusterJoinRequest is the body of POST /cluster/join: what a new node
// presents to become a member.
type ClusterJoinRequest struct {
	// Token is the join token (quire cluster token on a member).
	Token string `json:"token"`
	// NodeID is the new node's id; it must be the CN of CSR.
	NodeID string `json:"nodeId"`
	// RaftAddress is the new node's cluster port, host:port, that the
	// members dial.
	RaftAddress string `json:"raftAddress"`
	// CSR is the new node's PKCS#10 certificate request, PEM.
	CSR string `json:"csr"`
}

// ClusterIdentity is the secrets every member shares, handed to a new
// node at join: Quire's token signing key and URL signing key
// (auth.Keys) and the cluster CA's key and join-token key
// (cluster.CAKeys).
type ClusterIdentity struct {
	auth.Keys
	cluster.CAKeys
}

// ClusterJoinResponse is the answer of POST /cluster/join.
type ClusterJoinResponse struct {
	NodeID        string          `json:"nodeId"`
	Certificate   string          `json:"certificate"`   // the node's, PEM, issued by the cluster CA
	CACertificate string          `json:"caCertificate"` // the cluster CA's, PEM
	LeaderID      string          `json:"leaderId"`      // the member that admitted the node
	Identity      ClusterIdentity `json:"identity"`
}

// ClusterError is a refusal of a cluster operation with its HTTP status
// ({"message"} body).
type ClusterError struct {
	Status int
	Msg    string
}

func (e *ClusterError) Error() string { return e.Msg }

// ClusterJoiner is what a cluster member's node offers beside its
// status: admitting a node (POST /cluster/join) and removing one
// (DELETE /cluster/nodes/{nodeId}); a follower has the leader do both.
// Refusals of the join token wrap cluster.ErrJoinToken.
type ClusterJoiner interface {
	JoinCluster(ctx context.Context, req ClusterJoinRequest) (*ClusterJoinResponse, error)
	RemoveNode(ctx context.Context, nodeID string) error
}

// ClusterReadmitter is what a member offers to readmit a node whose
// Raft state was lost (POST /cluster/nodes/{nodeId}/rejoin): the leader
// takes the node out of the configuration and adds it back at
// raftAddress as a nonvoter; the node asks for its vote back once it
// caught up. A follower has the leader do it.
type ClusterReadmitter interface {
	ReadmitNode(ctx context.Context, nodeID, raftAddress string) error
}

// HandleRejoinClusterNode serves POST /cluster/nodes/{nodeId}/rejoin
// (Admins), body {"raftAddress":"host:port"}: quire cluster rejoin asks
// it of another member before it moves the node's unreadable Raft state
// aside.
func (s *Handlers) HandleRejoinClusterNode(r *api.Request) error {
	re, ok := s.Deps.Cluster.(ClusterReadmitter)
	if s.Deps.Cluster == nil || !ok {
		return api.ErrStatus(http.StatusNotFound, "this server is not a cluster member")
	}
	id := strings.Clone(r.Params("nodeId"))
	if !cluster.ValidNodeID(id) {
		return api.Invalid("nodeId", "invalid 'nodeId'")
	}
	var req struct {
		RaftAddress string `json:"raftAddress"`
	}
	if err := r.ReadBody(&req, 4<<10); err != nil {
		return err
	}
	if host, port, err := net.SplitHostPort(req.RaftAddress); err != nil || host == "" || port == "" || port == "0" {
		return api.Invalid("raftAddress", "invalid 'raftAddress': want host:port")
	} else if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return api.Invalid("raftAddress", "invalid 'raftAddress': members dial it, not "+host)
	}
	if err := re.ReadmitNode(r.UserContext(), id, req.RaftAddress); err != nil {
		var ce *ClusterError
		if errors.As(err, &ce) {
			return api.ErrStatus(ce.Status, ce.Msg)
		}
		return err
	}
	s.Log.Info("cluster node readmitted as a nonvoter", "nodeId", id, "raftAddress", req.RaftAddress, "by", r.User())
	return r.JSON(fiber.Map{"message": "node '" + id + "' readmitted as a nonvoter: start it; it becomes a voter once it caught up"})
}

// HandleClusterJoin serves POST /cluster/join (no token: the join token
// in the body is the credential). Only over the HTTPS connection a
// joining node opens with cluster.JoinClientConfig (ALPN
// cluster.JoinALPN, the server's cluster certificate pinned by the CA
// fingerprint the token carries), so the token never crosses the network
// in clear and the node knows it talks to its cluster.
func (s *Handlers) HandleClusterJoin(c *fiber.Ctx) error {
	joiner, ok := s.Deps.Cluster.(ClusterJoiner)
	if s.Deps.Cluster == nil || !ok {
		return api.ErrStatus(http.StatusNotFound, "this server is not a cluster member")
	}
	if cs := c.Context().TLSConnectionState(); cs == nil || cs.NegotiatedProtocol != cluster.JoinALPN {
		api.Drain(c)
		return api.ErrStatus(http.StatusBadRequest, "join over HTTPS with the cluster's join protocol: quire serve --join or quire cluster join")
	}
	r := &api.Request{Ctx: c, Now: s.Now().UTC()}
	var req ClusterJoinRequest
	if err := r.ReadBody(&req, 64<<10); err != nil {
		return err
	}
	if strings.TrimSpace(req.Token) == "" {
		return api.ErrStatus(http.StatusUnauthorized, "a join token is required")
	}
	var items []storage.ValidationItem
	if !cluster.ValidNodeID(req.NodeID) {
		items = append(items, storage.ValidationItem{Key: "nodeId", Msg: "invalid 'nodeId': 1 to 64 letters, digits, '.', '_' or '-'"})
	}
	if host, port, err := net.SplitHostPort(req.RaftAddress); err != nil || host == "" || port == "" || port == "0" {
		items = append(items, storage.ValidationItem{Key: "raftAddress", Msg: "invalid 'raftAddress': want host:port"})
	} else if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		items = append(items, storage.ValidationItem{Key: "raftAddress", Msg: "invalid 'raftAddress': members dial it, not " + host})
	}
	if req.CSR == "" {
		items = append(items, storage.ValidationItem{Key: "csr", Msg: "'csr' is required"})
	}
	if err := api.CheckErrors(items); err != nil {
		return err
	}
	out, err := joiner.JoinCluster(r.UserContext(), req)
	if err != nil {
		if errors.Is(err, cluster.ErrJoinToken) {
			s.Log.Warn("cluster join refused", "remote", c.IP(), "nodeId", req.NodeID, "reason", err)
			return api.ErrStatus(http.StatusForbidden, "join token refused")
		}
		var ce *ClusterError
		if errors.As(err, &ce) {
			s.Log.Warn("cluster join refused", "remote", c.IP(), "nodeId", req.NodeID, "status", ce.Status, "reason", ce.Msg)
			return api.ErrStatus(ce.Status, ce.Msg)
		}
		return err
	}
	s.Log.Info("cluster join", "remote", c.IP(), "nodeId", out.NodeID, "raftAddress", req.RaftAddress, "leaderId", out.LeaderID)
	return c.JSON(out)
}

// HandleDeleteClusterNode serves DELETE /cluster/nodes/{nodeId}
// (Admins): the leader removes the node from the cluster (a follower
// asks the leader). Removing the node answering is how a node leaves.
func (s *Handlers) HandleDeleteClusterNode(r *api.Request) error {
	joiner, ok := s.Deps.Cluster.(ClusterJoiner)
	if s.Deps.Cluster == nil || !ok {
		return api.ErrStatus(http.StatusNotFound, "this server is not a cluster member")
	}
	id := strings.Clone(r.Params("nodeId"))
	if !cluster.ValidNodeID(id) {
		return api.Invalid("nodeId", "invalid 'nodeId'")
	}
	if err := joiner.RemoveNode(r.UserContext(), id); err != nil {
		var ce *ClusterError
		if errors.As(err, &ce) {
			return api.ErrStatus(ce.Status, ce.Msg)
		}
		return err
	}
	s.Log.Info("cluster node removed", "nodeId", id, "by", r.User())
	return r.JSON(fiber.Map{"message": "node '" + id + "' removed"})
}
