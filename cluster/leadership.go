package cluster

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
)

// leadership tells the node's schedulers whether this node leads.
//
// Raft's LeaderCh holds one value and keeps only the newest, and its
// observers drop observations a slow reader did not take: a reader that
// acts on each notification may miss a step down followed by a new term.
// So nothing here acts on a notification: the watcher keeps the state
// (leader or not) and closes a channel whenever it changes; a reader
// looks at the state after every wake-up. The watcher is woken by
// LeaderCh and by leader observations, and also looks at raft.State()
// every pollEvery, so a lost wake-up delays a change, never hides it.
type leadership struct {
	mu      sync.Mutex
	leader  bool
	changed chan struct{} // closed at the next change of leader

	// changes counts the leaders this node saw take over (a new leader
	// id, this node included).
	changes    atomic.Uint64
	lastLeader string
}

const pollEvery = 250 * time.Millisecond

func newLeadership() *leadership { return &leadership{changed: make(chan struct{})} }

// set records the state and wakes the readers when it changed.
func (l *leadership) set(leader bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.leader == leader {
		return
	}
	l.leader = leader
	close(l.changed)
	l.changed = make(chan struct{})
}

func (l *leadership) get() (bool, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.leader, l.changed
}

// sawLeader counts a new leader id.
func (l *leadership) sawLeader(id string) {
	if id == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if id != l.lastLeader {
		l.lastLeader = id
		l.changes.Add(1)
	}
}

// watchLeadership runs until the node closes.
func (n *Node) watchLeadership() {
	obs := make(chan raft.Observation, 16)
	o := raft.NewObserver(obs, false, func(o *raft.Observation) bool {
		_, ok := o.Data.(raft.LeaderObservation)
		return ok
	})
	n.raft.RegisterObserver(o)
	defer n.raft.DeregisterObserver(o)
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		select {
		case <-n.done:
			n.lead.set(false)
			return
		case <-n.raft.LeaderCh():
		case ob := <-obs:
			if lo, ok := ob.Data.(raft.LeaderObservation); ok {
				n.lead.sawLeader(string(lo.LeaderID))
			}
		case <-tick.C:
		}
		_, id := n.raft.LeaderWithID()
		n.lead.sawLeader(string(id))
		leads := n.raft.State() == raft.Leader && n.fsm.haltedErr() == nil
		if was, _ := n.lead.get(); leads && !was {
			// Every entry of its log at its election is at or below this
			// (Promote's bound for a member readmitted before).
			n.leadStart.Store(n.raft.LastIndex())
		}
		n.lead.set(leads)
	}
}

// Leadership reports whether this node leads, as last seen by the node's
// watcher, and a channel closed at the next change. Schedulers run while
// it is true and stop when it turns false; a reader looks again after
// each close (a change may be followed by another before it looks).
// A closed or halted node never leads.
func (n *Node) Leadership() (leader bool, changed <-chan struct{}) { return n.lead.get() }

// LeaderChanges counts the leaders this node saw take over since it
// started (a change to a new leader id; its first leader counts).
func (n *Node) LeaderChanges() uint64 { return n.lead.changes.Load() }

// snapshotTime is when Raft's file snapshot store took the snapshot id
// ("term-index-unixmillis"); zero if the id has another form.
func snapshotTime(id string) time.Time {
	i := strings.LastIndexByte(id, '-')
	if i < 0 {
		return time.Time{}
	}
	ms, err := strconv.ParseInt(id[i+1:], 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// OutcomeUnknown reports an error of Propose that says nothing about the
// command: leadership was lost while the entry was in flight, or the node
// closed. The entry may or may not commit; the caller cannot tell which,
// so it must neither report the command as failed nor record a failure
// in its place (see node's applier, which answers these as a refused
// write).
func OutcomeUnknown(err error) bool {
	return errors.Is(err, raft.ErrLeadershipLost) || errors.Is(err, raft.ErrRaftShutdown) ||
		errors.Is(err, raft.ErrEnqueueTimeout) || errors.Is(err, raft.ErrAbortedByRestore) || errors.Is(err, ErrClosed)
}
