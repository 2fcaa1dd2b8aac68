package server

import (
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"quire/cluster"
)

// ClusterInfo is what the server asks of the node's cluster member
// (*cluster.Node); nil on a single server.
type ClusterInfo interface {
	Status() cluster.Status
}

// handleGetClusterStatus serves GET /cluster/status (Admins): this
// node's view of the Raft cluster. 404 on a server that is not a
// cluster member.
func (s *Server) handleGetClusterStatus(r *reqCtx) error {
	if s.deps.Cluster == nil {
		return errStatus(http.StatusNotFound, "this server is not a cluster member")
	}
	st := s.deps.Cluster.Status()
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
	return r.JSON(out)
}

// clusterReady is /readyz's cluster part: a member is ready while it
// knows a leader and has not halted.
func (s *Server) clusterReady() (bool, fiber.Map) {
	if s.deps.Cluster == nil {
		return true, nil
	}
	st := s.deps.Cluster.Status()
	ok := st.LeaderID != "" && st.Halted == ""
	return ok, fiber.Map{"ready": ok, "state": st.State, "leaderId": st.LeaderID, "appliedIndex": st.AppliedIndex}
}
