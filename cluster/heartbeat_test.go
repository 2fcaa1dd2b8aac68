package cluster

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestHeartbeat_ANewTermNeverReachesALeaderBesideItsLoop is issue 44's
// divergence reduced to its cause (hashicorp/raft issue 695): a leader
// that gets a heartbeat of a newer term must not append a single entry
// under that term. Raft handles heartbeats on the transport's goroutine
// (a fast path, so disk I/O on the main loop cannot delay them); a
// heartbeat of a newer term changed the term and the state there while
// the leader loop, between two checks of its state, appended the next
// proposals with the new term: entries at the same index and term as
// the new leader's, but different, which the new leader's replication
// then takes for its own. That is how a paused leader, resumed with
// writes waiting in its sockets and the new leader's heartbeat in its
// Raft connection, applied its own writes instead of the cluster's.
//
// The test makes the heartbeat arrive while proposals keep coming
// (a node leading alone at term T, a heartbeat of term T+1 sent with
// Raft's own transport, posing as a node "ghost"), then reads the log:
// no entry may carry term T+1, a term this node never led. Without
// heartbeatGate it failed in every run (entries of term T+1 appended
// and applied by the node itself).
func TestHeartbeat_ANewTermNeverReachesALeaderBesideItsLoop(t *testing.T) {
	for round := range 3 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			m := newMember(t, "solo")
			m.start(t)
			t.Cleanup(func() { m.stop(t) })
			if err := m.n.Bootstrap(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 10*time.Second, "the node to lead", m.n.IsLeader)
			term := m.n.raft.CurrentTerm()

			for i := range 5 {
				if _, _, err := m.n.Propose(context.Background(), addDoc(fmt.Sprintf("before-%d", i), fmt.Sprintf("p/before/%d", i))); err != nil {
					t.Fatal(err)
				}
			}
			if !m.n.IsLeader() || m.n.raft.CurrentTerm() != term {
				t.Fatalf("the node lost its lead before the heartbeat")
			}

			tr, err := raft.NewTCPTransport("127.0.0.1:0", nil, 1, 5*time.Second, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			req := &raft.AppendEntriesRequest{
				RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("ghost"), Addr: []byte(tr.LocalAddr())},
				Term:      term + 1,
			}
			var resp raft.AppendEntriesResponse
			if err := tr.AppendEntries("solo", raft.ServerAddress(m.addr), req, &resp); err != nil {
				t.Fatalf("heartbeat: %v", err)
			}
			// The heartbeat was handled when its answer came. Proposals
			// that were on their way before it (a node resumed after a
			// pause has them waiting in its sockets) reach the leader
			// loop now, which was idle meanwhile: Raft's own Apply, as
			// Propose calls it once it saw this node lead.
			var wg sync.WaitGroup
			for w := range 8 {
				data, err := addDoc(fmt.Sprintf("after-%d", w), fmt.Sprintf("p/after/%d", w)).Encode()
				if err != nil {
					t.Fatal(err)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					m.n.raft.Apply(data, 5*time.Second).Error()
				}()
			}
			wg.Wait()

			first, err := m.n.logs.FirstIndex()
			if err != nil {
				t.Fatal(err)
			}
			last, err := m.n.logs.LastIndex()
			if err != nil {
				t.Fatal(err)
			}
			var bad []uint64
			for i := first; i <= last; i++ {
				var l raft.Log
				if err := m.n.logs.GetLog(i, &l); err != nil {
					t.Fatalf("log %d: %v", i, err)
				}
				if l.Term == term+1 {
					bad = append(bad, i)
				}
			}
			if len(bad) > 0 {
				t.Fatalf("the node appended %d entries under term %d, which it never led (indices %v...)", len(bad), term+1, bad[:min(len(bad), 5)])
			}
			t.Logf("log %d..%d: no entry of term %d", first, last, term+1)

			// The heartbeat took the main loop's way; one of the term the
			// node now follows keeps the fast path.
			if f, h := m.n.gate.fast.Load(), m.n.gate.held.Load(); f != 0 || h != 1 {
				t.Fatalf("heartbeats: %d on the fast path, %d held for the main loop; want 0 and 1", f, h)
			}
			waitFor(t, 10*time.Second, "the node to follow the ghost", func() bool {
				return m.n.raft.State() == raft.Follower && m.n.raft.CurrentTerm() == term+1
			})
			if err := tr.AppendEntries("solo", raft.ServerAddress(m.addr), req, &resp); err != nil {
				t.Fatalf("second heartbeat: %v", err)
			}
			// (Unless the node timed out on the silent ghost and started an
			// election in between: then the heartbeat is of an old term.)
			if f := m.n.gate.fast.Load(); f != 1 && m.n.raft.CurrentTerm() == term+1 {
				t.Fatalf("a heartbeat of the term the node follows took the main loop's way")
			}
		})
	}
}
