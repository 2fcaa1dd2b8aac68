package node

import (
	"cmp"
	"context"
	"sync"
	"sync/atomic"
	"time"

	"quire/guard"
	"quire/storage"
)

// Everything that decides or schedules for the whole store runs on one
// node: the action pipeline, the retention sweeps, the rescan of content
// type detections, the resumption of folder moves and the chunk sweep.
// In a cluster that is the leader; a single server is always its own
// leader and goes through the same code (leaderLoop with a source that
// always says yes). Their outcomes are commands, applied through the
// node's applier like any write.
//
// When the node stops leading, the schedulers stop at once: running
// actions are cancelled and stay RUNNING in the store, pending folder
// moves stay pending. The next leader starts its schedulers after a
// Raft barrier (its store then holds every committed entry), reads the
// action queue from the store and so runs the RUNNING actions again
// (counting an attempt, as after a crash), and resumes the moves. Actions
// therefore run at least once: a leader change may run one twice (a
// webhook is delivered again), and its outcome is recorded once, by
// whichever run finishes first (OpFinishAction refuses an action that is
// no longer RUNNING in that attempt).

// leaderSource says whether this node leads now, and gives a channel
// closed at the next change (nil: never changes).
type leaderSource func() (bool, <-chan struct{})

// alwaysLeader is a single server's source.
func alwaysLeader() (bool, <-chan struct{}) { return true, nil }

// leaderLoop starts the schedulers when the node becomes leader and
// stops them when it stops leading.
type leaderLoop struct {
	n   *Node
	src leaderSource

	leading atomic.Bool
	starts  atomic.Uint64 // times the schedulers started

	// sweepStop ends the cluster's chunk sweep of the current term.
	sweepStop context.CancelFunc
	sweepWG   sync.WaitGroup

	stop chan struct{}
	done chan struct{}
}

func newLeaderLoop(n *Node, src leaderSource) *leaderLoop {
	return &leaderLoop{n: n, src: src, stop: make(chan struct{}), done: make(chan struct{})}
}

// start follows leadership in the background. A single server starts
// its schedulers here, before it serves (a failure is Start's).
func (l *leaderLoop) start() error {
	if l.n.Cluster == nil {
		leader, changed := l.src()
		if leader {
			if err := l.lead(changed); err != nil {
				return err
			}
		}
		go l.run(changed)
		return nil
	}
	now := make(chan struct{})
	close(now)
	go l.run(now)
	return nil
}

func (l *leaderLoop) run(changed <-chan struct{}) {
	defer close(l.done)
	for {
		select {
		case <-l.stop:
			return
		case <-changed:
		}
		var leader bool
		leader, changed = l.src()
		switch {
		case leader && !l.leading.Load():
			if err := l.lead(changed); err != nil {
				l.n.cfg.Logger.Error("cluster: start the leader's schedulers", "err", err)
				// Looked at again soon: leadership may be gone, or the
				// store may answer again.
				retry := make(chan struct{})
				go func(c <-chan struct{}) {
					select {
					case <-c:
					case <-l.stop:
					case <-time.After(time.Second):
					}
					close(retry)
				}(changed)
				changed = retry
			}
		case !leader && l.leading.Load():
			l.stepDown()
		}
	}
}

// lead starts the schedulers. In a cluster it first waits for a barrier:
// the store must hold every committed entry before anything reads the
// queue or decides from the store.
func (l *leaderLoop) lead(changed <-chan struct{}) error {
	n := l.n
	if n.Cluster != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		go func() {
			select {
			case <-changed:
			case <-l.stop:
			case <-ctx.Done():
			}
			cancel()
		}()
		if err := n.Cluster.Barrier(ctx); err != nil {
			return err
		}
	}
	if err := n.Pipeline.Start(); err != nil {
		return err
	}
	if n.Server != nil {
		n.Server.SetLeader(true)
	}
	if n.Cluster != nil {
		ctx, cancel := context.WithCancel(context.Background())
		l.sweepStop = cancel
		l.sweepWG.Add(1)
		go func() {
			defer l.sweepWG.Done()
			guard.Do(n.cfg.Logger, guard.Background, func() { n.sweepChunksWhileLeading(ctx) })
		}()
	}
	l.leading.Store(true)
	l.starts.Add(1)
	n.cfg.Logger.Info("this node runs the schedulers (pipeline, retention, folder moves, chunk sweep)")
	return nil
}

// stepDown stops the schedulers at once: running actions are cancelled
// (they stay RUNNING for the next leader).
func (l *leaderLoop) stepDown() {
	n := l.n
	l.leading.Store(false)
	if l.sweepStop != nil {
		l.sweepStop()
		l.sweepWG.Wait()
		l.sweepStop = nil
	}
	if n.Server != nil {
		n.Server.SetLeader(false)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n.Pipeline.Stop(ctx)
	n.cfg.Logger.Info("this node no longer leads: its schedulers stopped")
}

// close stops following leadership; what runs is left to the node's
// shutdown (the pipeline gets the shutdown's grace).
func (l *leaderLoop) close() {
	close(l.stop)
	<-l.done
	if l.sweepStop != nil {
		l.sweepStop()
		l.sweepWG.Wait()
	}
}

// Leading reports whether this node runs the schedulers now (always on a
// single server once started; on the cluster's leader only).
func (n *Node) Leading() bool { return n.leader != nil && n.leader.leading.Load() }

// DefaultChunkSweepGrace is how long a chunk must stay unreferenced
// before a cluster's leader sweeps it (ClusterConfig.ChunkSweepGrace).
const DefaultChunkSweepGrace = 24 * time.Hour

// SchedulerStarts counts the times this node started its schedulers.
func (n *Node) SchedulerStarts() uint64 {
	if n.leader == nil {
		return 0
	}
	return n.leader.starts.Load()
}

// sweepChunksWhileLeading is the cluster's chunk sweep, run by the leader.
//
// A single server sweeps once at start, before it serves: no upload can
// be in flight then. A cluster has no such moment: uploads run on every
// member, each chunk arriving as a PutChunks command long before the
// command that references it. So the rule is: a chunk is swept only if
// it was unreferenced at two looks of the leader ChunkSweepGrace apart
// (24 h by default). An upload that is still writing when the sweep runs wrote its
// chunks less than the grace ago, so they are not swept, unless the upload
// takes longer than the grace, or its content deduplicates against an
// unreferenced leftover chunk between the two looks; its commit then
// fails (missing chunk) and the client uploads again. The sweep itself is
// a command (OpSweepChunks), applied in log order on every member, and it
// re-checks references when it applies: a chunk that became referenced
// in between is kept.
func (n *Node) sweepChunksWhileLeading(ctx context.Context) {
	const limit = 10000
	grace := cmp.Or(n.cfg.Cluster.ChunkSweepGrace, DefaultChunkSweepGrace)
	prev := map[string]bool{}
	for {
		shas, err := n.DB.UnreferencedChunks(limit)
		if err != nil {
			n.cfg.Logger.Warn("cluster: list unreferenced chunks", "err", err)
		}
		var sweep []string
		cur := make(map[string]bool, len(shas))
		for _, s := range shas {
			cur[s] = true
			if prev[s] {
				sweep = append(sweep, s)
			}
		}
		for len(sweep) > 0 && ctx.Err() == nil {
			k := min(len(sweep), 1000)
			cmd := storage.MustCommand(storage.OpSweepChunks, "", "", time.Now().UTC(), storage.SweepChunks{SHAs: sweep[:k]})
			if _, err := n.applier.Apply(ctx, cmd); err != nil {
				n.cfg.Logger.Warn("cluster: sweep unreferenced chunks", "err", err)
				break
			}
			for _, s := range sweep[:k] {
				delete(cur, s) // gone: a chunk written again is new
			}
			n.cfg.Logger.Info("cluster: swept chunks unreferenced for longer than the grace", "count", k)
			sweep = sweep[k:]
		}
		prev = cur
		select {
		case <-ctx.Done():
			return
		case <-time.After(grace):
		}
	}
}
