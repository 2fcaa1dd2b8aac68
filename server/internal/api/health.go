package api

import (
	"time"

	"github.com/gofiber/fiber/v2"
)

// ReadyLag is how far behind storage the index may be for /readyz (and
// for "ready" in GET /system/health).
const ReadyLag = 5 * time.Second

// ClusterReady is /readyz's cluster part (and GET /system/health's): a
// member is ready while it knows a leader and has not halted.
func ClusterReady(c ClusterInfo) (bool, fiber.Map) {
	if c == nil {
		return true, nil
	}
	st := c.Status()
	ok := st.LeaderID != "" && st.Halted == "" && st.Unreadable == "" && st.Diverged == ""
	out := fiber.Map{"ready": ok, "state": st.State, "leaderId": st.LeaderID, "appliedIndex": st.AppliedIndex}
	switch {
	case st.Diverged != "":
		out["reason"] = "this member's data differs from the cluster's (" + st.Diverged + "): it serves nothing and does not vote; rebuild it with quire cluster rejoin"
	case st.Unreadable != "":
		out["reason"] = "the Raft state cannot be read (" + st.Unreadable + "): this node serves reads from its store and refuses writes and cluster traffic; rebuild its Raft state with quire cluster rejoin"
	case st.Halted != "":
		out["reason"] = "halted: " + st.Halted
	case st.LeaderID == "":
		out["reason"] = "no cluster leader known"
	}
	return ok, out
}
