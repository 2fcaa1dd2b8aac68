package cluster

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// ghostFollower is a voter made of Raft's own TCP transport that keeps a
// log of indices only: it takes every append that continues its log and
// refuses one that does not, like a follower. failAt makes it refuse the
// n-th append that carries entries even though it continues its log (a
// follower whose disk failed a write answers so).
type ghostFollower struct {
	tr      *raft.NetworkTransport
	last    atomic.Uint64 // its last index
	appends atomic.Int64  // appends with entries taken
	failAt  int64
	seen    atomic.Int64 // appends with entries received
	failed  atomic.Bool
	done    chan struct{}
}

func newGhostFollower(t *testing.T, failAt int64) *ghostFollower {
	t.Helper()
	tr, err := raft.NewTCPTransport("127.0.0.1:0", nil, 3, 5*time.Second, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	g := &ghostFollower{tr: tr, failAt: failAt, done: make(chan struct{})}
	go g.serve()
	t.Cleanup(func() { close(g.done); tr.Close() })
	return g
}

func (g *ghostFollower) serve() {
	for {
		select {
		case rpc := <-g.tr.Consumer():
			req, ok := rpc.Command.(*raft.AppendEntriesRequest)
			if !ok {
				rpc.Respond(nil, fmt.Errorf("ghost: only appends"))
				continue
			}
			resp := &raft.AppendEntriesResponse{RPCHeader: req.RPCHeader, Term: req.Term, LastLog: g.last.Load()}
			if len(req.Entries) > 0 && g.seen.Add(1) == g.failAt {
				g.failed.Store(true)
				// Answered late, so that the leader has sent the
				// next appends when the refusal reaches it.
				time.Sleep(50 * time.Millisecond)
				rpc.Respond(resp, nil)
				continue
			}
			if req.PrevLogEntry <= g.last.Load() {
				if n := len(req.Entries); n > 0 {
					g.last.Store(req.Entries[n-1].Index)
					g.appends.Add(1)
				}
				resp.LastLog, resp.Success = g.last.Load(), true
			}
			rpc.Respond(resp, nil)
		case <-g.done:
			return
		}
	}
}

// TestReplication_AFollowersRefusalNeverStopsItsReplication: after a
// follower refuses one append, the leader must go on sending it the
// log. hashicorp/raft's pipelined replication (v1.8.0, its issue 612,
// unfixed) could stop for good there: the decoder of the pipeline
// returns on the refusal while a second answer is already in flight,
// that answer waits for a reader that is gone, the next send waits for
// the decoder, and the pipeline's close waits for the send. Heartbeats
// run apart and keep arriving, so the follower never calls an election
// that would heal it: a replica that silently misses every write after
// that point, until the leader changes. The node runs Raft without
// pipelining (MaxRPCsInFlight 1), so every append is answered before
// the next is sent.
//
// Each round a ghost voter refuses one append in the middle of a stream
// of concurrent writes, then must receive the writes that follow; with
// pipelining on, the replication to it stopped in some rounds.
func TestReplication_AFollowersRefusalNeverStopsItsReplication(t *testing.T) {
	for round := range 4 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			m := newMember(t, "lead")
			m.start(t)
			t.Cleanup(func() {
				// A stopped replication also stops Raft's shutdown, which
				// waits for it: fail instead of hanging the package.
				stopped := make(chan struct{})
				go func() { m.stop(t); close(stopped) }()
				select {
				case <-stopped:
				case <-time.After(30 * time.Second):
					t.Errorf("the node did not shut down in 30 s (its replication to the ghost is stuck)")
				}
			})
			if _, err := m.n.trans.AppendEntriesPipeline("ghost", "127.0.0.1:1"); err != raft.ErrPipelineReplicationNotSupported {
				t.Errorf("the node's transport pipelines appends (err %v); want raft.ErrPipelineReplicationNotSupported", err)
			}
			if err := m.n.Bootstrap(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 10*time.Second, "the node to lead", m.n.IsLeader)
			g := newGhostFollower(t, 8)
			if err := m.n.raft.AddVoter("ghost", g.tr.LocalAddr(), 0, 10*time.Second).Error(); err != nil {
				t.Fatal(err)
			}

			// Writes from 8 writers, so that appends are in flight when
			// the ghost refuses one; each needs the ghost's answer (two
			// voters), so a stopped replication stops them all.
			var wg sync.WaitGroup
			var failed atomic.Int64
			for w := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 12 {
						ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
						_, _, err := m.n.Propose(ctx, addDoc(fmt.Sprintf("w%d-%d", w, i), fmt.Sprintf("p/%d/%d", w, i)))
						cancel()
						if err != nil {
							failed.Add(1)
							return
						}
					}
				}()
			}
			wg.Wait()
			if !g.failed.Load() {
				t.Fatalf("the ghost never refused an append (it got %d with entries)", g.seen.Load())
			}
			if n := failed.Load(); n > 0 {
				t.Fatalf("%d writers' writes were not committed: replication to the follower stopped after its refusal (it took %d appends, last index %d)", n, g.appends.Load(), g.last.Load())
			}
			last := m.n.raft.LastIndex()
			waitFor(t, 10*time.Second, "the ghost to hold the leader's log", func() bool { return g.last.Load() >= last })
		})
	}
}
