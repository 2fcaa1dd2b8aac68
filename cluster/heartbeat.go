package cluster

import (
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"
)

// heartbeatGate is Raft's transport with its heartbeat fast path kept
// only where it cannot change the node's term or state.
//
// hashicorp/raft (v1.8.0, issue 695 upstream, unfixed) handles a
// heartbeat on the transport's goroutine, beside its main loop, so that
// disk I/O on the main loop does not delay it. A heartbeat of a newer
// term sets the term and the follower state there. A leader whose loop
// is between two looks at its state (waiting in its select) then takes
// the next proposals and appends them under the new term: entries with
// the index and term of the new leader's own entries but other content.
// The new leader's replication takes them for its own (same index, same
// term: no conflict), the node commits and applies them, and never
// applies the cluster's entries at those indices. That is issue 44's
// replica that missed seven committed writes for good (a leader resumed
// after SIGSTOP with writes waiting in its sockets and the new leader's
// heartbeat in its Raft connection). TestHeartbeat_ANewTermNever...
// reproduces it in process.
//
// The gate lets the fast path handle a heartbeat only when the node is a
// follower and the heartbeat's term is not older than its own: a
// follower's main loop appends nothing of its own, so a term it takes
// there cannot reach an entry (and a new member, or one behind a term,
// keeps answering heartbeats while its main loop stores the log: holding
// those back let a leader's lease run out during joins under load). Any
// other heartbeat (an older term, a leader or candidate receiving it,
// Raft not running yet) goes to the main loop with the other RPCs, where
// a leader's step-down is ordered with its own work. A follower that
// checks, then turns candidate before the fast path runs, is no leader:
// it appends nothing.
type heartbeatGate struct {
	*raft.NetworkTransport
	ch   chan raft.RPC
	done chan struct{}
	once sync.Once
	raft atomic.Pointer[raft.Raft]
	// fast and held count the heartbeats let through the fast path and
	// those sent to the main loop (tests).
	fast, held atomic.Int64
}

// newHeartbeatGate wraps t; setRaft must be called once Raft runs (until
// then every heartbeat takes the main loop's way).
func newHeartbeatGate(t *raft.NetworkTransport) *heartbeatGate {
	g := &heartbeatGate{NetworkTransport: t, ch: make(chan raft.RPC), done: make(chan struct{})}
	go func() {
		in := t.Consumer()
		for {
			select {
			case rpc := <-in:
				select {
				case g.ch <- rpc:
				case <-g.done:
					return
				}
			case <-g.done:
				return
			}
		}
	}()
	return g
}

func (g *heartbeatGate) setRaft(r *raft.Raft) { g.raft.Store(r) }

// Consumer is where Raft's main loop takes RPCs: the transport's and
// the heartbeats the gate holds back from the fast path.
func (g *heartbeatGate) Consumer() <-chan raft.RPC { return g.ch }

// SetHeartbeatHandler installs Raft's fast path behind the gate.
func (g *heartbeatGate) SetHeartbeatHandler(fast func(raft.RPC)) {
	if fast == nil {
		g.NetworkTransport.SetHeartbeatHandler(nil)
		return
	}
	g.NetworkTransport.SetHeartbeatHandler(func(rpc raft.RPC) {
		if g.fastPathSafe(rpc) {
			g.fast.Add(1)
			fast(rpc)
			return
		}
		g.held.Add(1)
		// The transport waits for the answer on rpc's channel, which the
		// main loop gives.
		select {
		case g.ch <- rpc:
		case <-g.done:
			rpc.Respond(nil, raft.ErrTransportShutdown)
		}
	})
}

func (g *heartbeatGate) fastPathSafe(rpc raft.RPC) bool {
	r := g.raft.Load()
	req, ok := rpc.Command.(*raft.AppendEntriesRequest)
	if r == nil || !ok {
		return false
	}
	return r.State() == raft.Follower && req.Term >= r.CurrentTerm()
}

// Close stops the gate and the transport.
func (g *heartbeatGate) Close() error {
	g.once.Do(func() { close(g.done) })
	return g.NetworkTransport.Close()
}
