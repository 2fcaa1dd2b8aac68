// Package cluster replicates Quire's store with Raft
// (github.com/hashicorp/raft): every storage.Command is proposed to the
// log and applied on every node by the FSM, with the log index stored in
// the command's own Badger transaction. See DESIGN.md.
package cluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"

	"quire/storage"
)

// Config configures a Node.
type Config struct {
	// ID names the node in the cluster; it never changes. Required.
	ID string
	// Dir holds Raft's files: the log and stable store (wal/) and the
	// snapshots (snapshots/). Required; not the store's directory.
	Dir string
	// DB is the node's store. Required. The node does not close it.
	DB *storage.DB

	// Listen is the TCP address Raft listens on (host:port) and Advertise
	// the one peers dial (default: the listener's address). Ignored when
	// Stream is set.
	Listen, Advertise string
	// Dial opens the TCP connections to peers, for Raft and for
	// forwarding (nil: a net.Dialer); with TLS the handshake runs over the
	// connection it returns. Ignored when Stream is set. Tests route each
	// pair of nodes through a proxy they can cut (node/partition_test.go).
	Dial DialFunc
	// Listener, when set, is the cluster port already open (a node that
	// must name its address before it opens: one that joins); Listen is
	// then ignored. The node closes it with itself (the caller, when Open
	// fails).
	Listener net.Listener
	// Stream replaces the plain TCP stream layer: NewStreamLayer over a
	// TLS listener and dialer is the mTLS seam.
	Stream raft.StreamLayer
	// TLS, when set (and Stream is not), makes Raft listen and dial over
	// mutual TLS with this identity (NewTLSStreamLayer); its node id must
	// be ID.
	TLS *Identity

	// Logger receives the node's logs (default slog.Default()), Raft's own
	// among them (component raft) from RaftLogLevel up (default "warn", or
	// "debug" when Logger takes DEBUG),
	// what a healthy cluster says in its ordinary course at DEBUG
	// (raftlog.go). RaftLogOutput, when set, takes Raft's lines instead
	// (tests).
	Logger        *slog.Logger
	RaftLogOutput io.Writer
	RaftLogLevel  string

	// Raft timing (0: Raft's defaults, 1 s heartbeat and election
	// timeouts, 500 ms leader lease, 50 ms commit timeout).
	HeartbeatTimeout, ElectionTimeout, LeaderLeaseTimeout, CommitTimeout time.Duration
	// Snapshots: taken every SnapshotInterval when more than
	// SnapshotThreshold entries were applied since the last one, keeping
	// TrailingLogs entries in the log for slow followers (0: 2 min, 8192,
	// 1024: fewer than Raft's 10240 because a content entry holds up to
	// a few MiB). SnapshotRetain snapshots are kept on disk (0: 1: Raft
	// only ever needs the newest, and each is a full copy of the store).
	SnapshotInterval  time.Duration
	SnapshotThreshold uint64
	TrailingLogs      uint64
	SnapshotRetain    int
	// LogSegmentSize is the size of the WAL's segment files (0: raft-wal's
	// 64 MiB). A compacted log gives disk space back a whole segment at a
	// time, and entries of a segment not yet deleted stay readable.
	LogSegmentSize int

	// ApplyTimeout bounds how long Propose waits to enqueue a command when
	// its context has no deadline (0: 30 s).
	ApplyTimeout time.Duration
	// OnRestore runs after the store was replaced by a snapshot, in the
	// FSM's goroutine: the node tells its search index to catch up.
	OnRestore func()
	// OnPropose, when set, is told how long each Propose that reached
	// Raft took, from the write gate to the applier's answer (metrics).
	OnPropose func(took time.Duration, err error)
}

// Node is one member of a Raft cluster replicating a storage.DB. It is a
// storage.Applier: Apply proposes the command and returns the applier's
// result once this node applied it.
type Node struct {
	cfg   Config
	log   *slog.Logger
	db    *storage.DB
	raft  *raft.Raft
	trans *raft.NetworkTransport
	gate  *heartbeatGate // trans as Raft sees it (heartbeat.go)
	// stopFSM ends the FSM's background work (digest walks) at Close.
	stopFSM context.CancelFunc
	stream  raft.StreamLayer
	logs    *wal.WAL
	meta    *metadb.BoltMetaDB // the WAL's, which WAL.Close leaves open
	snaps   *raft.FileSnapshotStore
	fsm     *fsm
	lead    *leadership

	started atomic.Pointer[raft.Raft] // n.raft once it runs, for the TLS peer check
	added   addedPeers                // when this node, leading, added each member (raftlog.go)

	// leadStart is this node's last log index when it was last seen to
	// become leader; readmitted maps a node id to the index of the
	// configuration entry that readmitted it under this leader (Promote).
	leadStart  atomic.Uint64
	readmitted sync.Map
	diverged   atomic.Pointer[string]       // digest.go
	lastVerify atomic.Pointer[VerifyReport] // the latest verification this node made
	// sharedVerify is the latest verification the leader sent this
	// member (SetSharedVerifyReport).
	sharedVerify atomic.Pointer[VerifyReport]

	closeOnce sync.Once
	closeErr  error
	done      chan struct{}
}

// NotLeaderError is returned by the operations that only the leader
// runs; it names the leader when one is known.
type NotLeaderError struct{ LeaderID, LeaderAddr string }

func (e *NotLeaderError) Error() string {
	if e.LeaderAddr == "" {
		return "cluster: not the leader, and no leader is known"
	}
	return fmt.Sprintf("cluster: not the leader; the leader is %s at %s", e.LeaderID, e.LeaderAddr)
}

// ErrClosed is returned once the node is closed.
var ErrClosed = errors.New("cluster: node closed")

// StateError is Open's error when the node's own Raft state cannot be
// read: the log and stable store (wal/), the snapshots (snapshots/), or
// Raft itself failing (or panicking, as it does on a log entry it
// cannot read) while it loads them. The store is not at fault; the node
// can serve reads from it, and its Raft state is rebuilt from the other
// members (quire cluster rejoin, DESIGN.md "A node whose Raft state
// cannot be read").
type StateError struct {
	Dir string // Config.Dir
	Err error
}

func (e *StateError) Error() string {
	return fmt.Sprintf("cluster: the Raft state in %s cannot be read: %v", e.Dir, e.Err)
}

func (e *StateError) Unwrap() error { return e.Err }

// Open starts a node: it loads the log, catches the store up with the
// newest local snapshot when a crash left it behind, and joins whatever
// cluster the log knows. A new node knows none: Bootstrap it, or have the
// leader Join it.
func Open(cfg Config) (*Node, error) {
	if cfg.ID == "" || cfg.Dir == "" || cfg.DB == nil {
		return nil, errors.New("cluster: ID, Dir and DB are required")
	}
	if cfg.TLS != nil && cfg.TLS.NodeID != cfg.ID {
		return nil, fmt.Errorf("cluster: the TLS certificate names node %q, this node is %q", cfg.TLS.NodeID, cfg.ID)
	}
	lg := cmp.Or(cfg.Logger, slog.Default()).With("component", "cluster", "node", cfg.ID)
	n := &Node{cfg: cfg, log: lg, db: cfg.DB, done: make(chan struct{}), lead: newLeadership()}
	raftBase := cmp.Or(cfg.Logger, slog.Default())
	if cfg.RaftLogOutput != nil {
		raftBase = slog.New(slog.NewTextHandler(cfg.RaftLogOutput, &slog.HandlerOptions{Level: slog.LevelDebug - 4}))
	}
	raftLevel := cfg.RaftLogLevel
	if raftLevel == "" {
		// Raft's INFO is chatty: its DEBUG and INFO lines only when the
		// process logs at DEBUG.
		raftLevel = "warn"
		if raftBase.Enabled(context.Background(), slog.LevelDebug) {
			raftLevel = "debug"
		}
	}
	var hl hclog.Logger = newRaftLog(raftBase.With("node", cfg.ID), raftLevel, n.added.recent)
	n.loadDiverged()
	ok := false
	defer func() {
		if !ok {
			n.closeParts()
		}
	}()

	walDir, snapDir := filepath.Join(cfg.Dir, "wal"), filepath.Join(cfg.Dir, "snapshots")
	for _, d := range []string{walDir, snapDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	var err error
	n.meta = &metadb.BoltMetaDB{}
	segSize := wal.WithSegmentSize(cmp.Or(cfg.LogSegmentSize, wal.DefaultSegmentSize))
	stateErr := func(err error) error { return &StateError{Dir: cfg.Dir, Err: err} }
	if n.logs, err = openWAL(func() (*wal.WAL, error) {
		return wal.Open(walDir, wal.WithLogger(hl.Named("wal")), wal.WithMetaStore(n.meta), segSize)
	}); err != nil {
		return nil, stateErr(fmt.Errorf("open the log: %w", err))
	}
	if n.snaps, err = raft.NewFileSnapshotStoreWithLogger(snapDir, cmp.Or(cfg.SnapshotRetain, 1), hl.Named("snapshots")); err != nil {
		return nil, stateErr(fmt.Errorf("open the snapshots: %w", err))
	}
	if err := n.openFSM(); err != nil {
		var se *snapshotError
		if errors.As(err, &se) {
			return nil, stateErr(err)
		}
		return nil, err
	}

	stream := cfg.Stream
	if stream == nil {
		ln := cfg.Listener
		if ln == nil {
			if ln, err = net.Listen("tcp", cfg.Listen); err != nil {
				return nil, fmt.Errorf("cluster: listen: %w", err)
			}
		}
		var adv net.Addr
		if cfg.Advertise != "" {
			if adv, err = net.ResolveTCPAddr("tcp", cfg.Advertise); err != nil {
				ln.Close()
				return nil, fmt.Errorf("cluster: advertise address: %w", err)
			}
		}
		if cfg.TLS != nil {
			auth := cfg.TLS.Authorize
			if auth == nil {
				auth = n.peerIsMember
			}
			stream, err = newTLSStreamLayer(ln, adv, cfg.TLS, auth, cfg.Dial, lg)
		} else {
			stream, err = NewStreamLayer(ln, adv, cfg.Dial)
		}
		if err != nil {
			ln.Close()
			return nil, err
		}
	}
	n.stream = stream
	// MaxRPCsInFlight 1: no pipelined replication. hashicorp/raft's
	// pipeline (v1.8.0, its issue 612, unfixed) can stop replicating to a
	// follower for good after that follower refuses one append: the
	// pipeline's decoder returns on the refusal while the next answer is
	// in flight, that answer waits for a reader that is gone, the next
	// send waits for the decoder, and the pipeline's close waits for the
	// send. Heartbeats go on apart, so the follower never calls the
	// election that would heal it, and the leader's shutdown waits
	// forever. Synchronous appends still carry up to MaxAppendEntries
	// entries each. TestReplication_AFollowersRefusalNeverStops... stopped
	// the replication in its first round with pipelining on.
	n.trans = raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream: stream, MaxPool: 3, Timeout: 10 * time.Second, Logger: hl.Named("transport"),
		MaxRPCsInFlight: 1,
	})
	n.gate = newHeartbeatGate(n.trans)

	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(cfg.ID)
	rc.Logger = hl
	// The store is durable and knows its own index: Raft must not reload
	// the newest snapshot over it at every start (openFSM did what is
	// needed), only replay the entries after it, which the FSM skips up to
	// the store's index.
	rc.NoSnapshotRestoreOnStart = true
	setDur := func(dst *time.Duration, v time.Duration) {
		if v > 0 {
			*dst = v
		}
	}
	setDur(&rc.HeartbeatTimeout, cfg.HeartbeatTimeout)
	setDur(&rc.ElectionTimeout, cfg.ElectionTimeout)
	setDur(&rc.LeaderLeaseTimeout, cfg.LeaderLeaseTimeout)
	setDur(&rc.CommitTimeout, cfg.CommitTimeout)
	rc.SnapshotInterval = cmp.Or(cfg.SnapshotInterval, 2*time.Minute)
	rc.SnapshotThreshold = cmp.Or(cfg.SnapshotThreshold, 8192)
	rc.TrailingLogs = cmp.Or(cfg.TrailingLogs, 1024)
	if n.raft, err = newRaft(rc, n.fsm, n.logs, n.snaps, n.gate); err != nil {
		return nil, stateErr(err)
	}
	n.gate.setRaft(n.raft)
	n.started.Store(n.raft)
	go n.watchLeadership()
	ok = true
	return n, nil
}

// openWAL is wal.Open with a panic turned into an error: Open reads
// every segment's metadata and the tail, and must not take the process
// down on a damaged file.
func openWAL(open func() (*wal.WAL, error)) (w *wal.WAL, err error) {
	defer func() {
		if p := recover(); p != nil {
			w, err = nil, fmt.Errorf("the log panicked while opening: %v", p)
		}
	}()
	return open()
}

// newRaft is raft.NewRaft with its panic turned into an error. NewRaft
// reads the last entry and every entry after the newest snapshot (for
// configuration changes) in the caller's goroutine, and panics on one it
// cannot read ("failed to get log", as raft-wal v0.4.0 left a truncated
// log: issue 28). Its background goroutines start only after those
// reads.
func newRaft(rc *raft.Config, fsm raft.FSM, logs *wal.WAL, snaps raft.SnapshotStore, trans raft.Transport) (r *raft.Raft, err error) {
	defer func() {
		if p := recover(); p != nil {
			r, err = nil, fmt.Errorf("raft panicked while loading its log: %v", p)
		}
	}()
	r, err = raft.NewRaft(rc, fsm, logs, logs, snaps, trans)
	if err != nil {
		return nil, fmt.Errorf("start raft: %w", err)
	}
	return r, nil
}

// snapshotError marks openFSM's failures to read a local snapshot.
type snapshotError struct{ err error }

func (e *snapshotError) Error() string { return e.err.Error() }
func (e *snapshotError) Unwrap() error { return e.err }

// peerIsMember is the TLS peer check of a node with mutual TLS (unless
// Config.TLS.Authorize replaces it): a peer's certificate must name a
// server of the latest Raft configuration. A node whose configuration is
// empty (new, not yet reached by the leader that is adding it) accepts
// any certificate of the cluster CA: the leader's first connection must
// get through. Connections before Raft runs are refused (peers retry).
// errRaftNotRunning refuses a peer's Raft traffic while this node's Raft
// has not started: it cannot tell members yet. A joining node meets it
// with the leader's first appends (logged at DEBUG, as expected).
var errRaftNotRunning = errors.New("raft is not running yet")

func (n *Node) peerIsMember(id string) error {
	r := n.started.Load()
	if r == nil {
		return errRaftNotRunning
	}
	servers := r.GetConfiguration().Configuration().Servers
	if len(servers) == 0 {
		return nil
	}
	for _, s := range servers {
		if string(s.ID) == id {
			return nil
		}
	}
	return fmt.Errorf("node %s is not a member of the cluster", id)
}

// openFSM builds the FSM at the store's applied index, first loading the
// newest local snapshot when the store is behind it: a crash between
// receiving a leader's snapshot and loading it, or during the load.
func (n *Node) openFSM() error {
	applied, err := n.db.AppliedIndex()
	incomplete := errors.Is(err, storage.ErrRestoreIncomplete)
	if err != nil && !incomplete {
		return fmt.Errorf("cluster: applied index: %w", err)
	}
	n.fsm = newFSM(n.db, n.log, applied)
	n.fsm.ctx, n.stopFSM = context.WithCancel(context.Background())
	n.fsm.onRestore = n.cfg.OnRestore
	n.fsm.onHalt = func(error) { go n.Close() } // not from the FSM goroutine: Shutdown waits for it
	metas, err := n.snaps.List()
	if err != nil {
		return &snapshotError{fmt.Errorf("cluster: list snapshots: %w", err)}
	}
	if len(metas) == 0 {
		if incomplete {
			return errors.New("cluster: the store holds an unfinished snapshot load and no snapshot is left to load again")
		}
		return nil
	}
	_, rc, err := n.snaps.Open(metas[0].ID)
	if err != nil {
		return &snapshotError{fmt.Errorf("cluster: open snapshot %s: %w", metas[0].ID, err)}
	}
	snapApplied, err := readSnapshotHeader(rc)
	rc.Close()
	if err != nil {
		return &snapshotError{fmt.Errorf("cluster: snapshot %s: %w", metas[0].ID, err)}
	}
	if !incomplete && applied >= snapApplied {
		return nil
	}
	n.log.Warn("the store is behind the newest snapshot: loading it", "applied", applied, "snapshot", snapApplied)
	if _, rc, err = n.snaps.Open(metas[0].ID); err != nil {
		return &snapshotError{err}
	}
	return n.fsm.Restore(rc)
}

// Addr is the Raft address peers reach this node at.
func (n *Node) Addr() string { return string(n.trans.LocalAddr()) }

// ForwardListener accepts the connections members open to this node's
// forwarding service (ForwardALPN on the cluster port, over the same
// mutual TLS and member check as Raft's). Nil without Config.TLS.
func (n *Node) ForwardListener() net.Listener {
	if ts, ok := n.stream.(*tlsStream); ok {
		return &sideListener{l: ts.tl, closed: make(chan struct{})}
	}
	return nil
}

// DialForward opens a connection to the forwarding service of the member
// at the Raft address addr (the leader's, from LeaderAddr), presenting
// this node's certificate and checking the peer's like Raft does.
func (n *Node) DialForward(ctx context.Context, addr string) (net.Conn, error) {
	ts, ok := n.stream.(*tlsStream)
	if !ok {
		return nil, errors.New("cluster: forwarding needs mutual TLS (Config.TLS)")
	}
	conf := ts.id.clientConfig(ts.authorize)
	conf.NextProtos = []string{ForwardALPN}
	c, err := ts.dialTLS(ctx, "tcp", addr, conf)
	if err != nil {
		return nil, err
	}
	if c.ConnectionState().NegotiatedProtocol != ForwardALPN {
		c.Close()
		return nil, fmt.Errorf("cluster: %s does not offer forwarding", addr)
	}
	return c, nil
}

// ID is the node's id.
func (n *Node) ID() string { return n.cfg.ID }

// Bootstrap makes this node a cluster of one (it becomes leader). A node
// that already has state (bootstrapped before, or joined) is left alone.
func (n *Node) Bootstrap() error {
	f := n.raft.BootstrapCluster(raft.Configuration{Servers: []raft.Server{{
		Suffrage: raft.Voter, ID: raft.ServerID(n.cfg.ID), Address: n.trans.LocalAddr(),
	}}})
	if err := f.Error(); err != nil && !errors.Is(err, raft.ErrCantBootstrap) {
		return fmt.Errorf("cluster: bootstrap: %w", err)
	}
	return nil
}

// Join adds the node id at addr as a voter; only the leader can. A member
// with the same id and address is left as it is; one with the same id or
// address is removed first (a node that came back at a new address).
func (n *Node) Join(id, addr string) error {
	same, err := n.clearSlot(id, addr, true)
	if err != nil || same {
		return err
	}
	n.added.add(id)
	return n.raftErr(n.raft.AddVoter(raft.ServerID(id), raft.ServerAddress(addr), 0, 0).Error())
}

// clearSlot, on the leader, removes the members holding node id or
// address addr. With keepSame, a member with both is left alone and same
// reports it.
func (n *Node) clearSlot(id, addr string, keepSame bool) (same bool, err error) {
	if !n.IsLeader() {
		return false, n.notLeader()
	}
	cf := n.raft.GetConfiguration()
	if err := cf.Error(); err != nil {
		return false, n.raftErr(err)
	}
	for _, s := range cf.Configuration().Servers {
		if keepSame && s.ID == raft.ServerID(id) && s.Address == raft.ServerAddress(addr) {
			return true, nil
		}
		if s.ID == raft.ServerID(id) || s.Address == raft.ServerAddress(addr) {
			if err := n.raft.RemoveServer(s.ID, 0, 0).Error(); err != nil {
				return false, n.raftErr(err)
			}
		}
	}
	return false, nil
}

// Readmit takes node id out of the configuration when it is there and
// adds it back at addr as a nonvoter: a member whose Raft state was lost
// (moved aside by quire cluster rejoin) starts with an empty log and
// must not vote, and so help elect a leader missing entries its old log
// held, before it caught up. The member asks for its vote back with
// Promote once it has. Only the leader can.
func (n *Node) Readmit(id, addr string) error {
	if _, err := n.clearSlot(id, addr, false); err != nil {
		return err
	}
	n.added.add(id)
	f := n.raft.AddNonvoter(raft.ServerID(id), raft.ServerAddress(addr), 0, 0)
	if err := f.Error(); err != nil {
		return n.raftErr(err)
	}
	n.readmitted.Store(id, f.Index())
	return nil
}

// ErrNotNonvoter is Promote's answer for a node that is not a nonvoter
// of the configuration.
var ErrNotNonvoter = errors.New("cluster: not a nonvoter of the cluster")

// LaggingError is Promote's answer for a nonvoter whose log does not yet
// reach Need: it asks again once it does.
type LaggingError struct{ Have, Need uint64 }

func (e *LaggingError) Error() string {
	return fmt.Sprintf("cluster: the node's log reaches index %d, it must reach %d before it votes", e.Have, e.Need)
}

// PromoteLag is how far behind the leader's commit index a readmitted
// node's log may be when it gets its vote back: a node that keeps up
// with the writes is always a few entries behind.
const PromoteLag = 256

// Promote makes the nonvoter id a voter again (a readmitted member that
// caught up); lastIndex is the newest index of the node's own log. Only
// the leader can, and only for a node whose log reaches the
// configuration that made it a nonvoter (so it holds every entry
// committed before it lost its state: DESIGN.md "Rejoin") and is within
// PromoteLag of the commit index; otherwise a *LaggingError. A node that
// is a voter already is left alone (promoted false): the node's own view
// of the configuration while it replays the log may be an old one that
// lists it as a voter, so it asks the leader, whose view is the latest.
func (n *Node) Promote(id string, lastIndex uint64) (promoted bool, err error) {
	if !n.IsLeader() {
		return false, n.notLeader()
	}
	cf := n.raft.GetConfiguration()
	if err := cf.Error(); err != nil {
		return false, n.raftErr(err)
	}
	for _, s := range cf.Configuration().Servers {
		if s.ID != raft.ServerID(id) {
			continue
		}
		if s.Suffrage == raft.Voter {
			return false, nil
		}
		// The entry that readmitted the node: under this leader its
		// index was recorded; under an earlier one it is in this leader's
		// log since its election, at or below leadStart. (Raft's
		// configuration future carries no index.)
		if leads, _ := n.lead.get(); !leads {
			return false, &LaggingError{Have: lastIndex, Need: n.raft.LastIndex()}
		}
		need := n.leadStart.Load()
		if v, ok := n.readmitted.Load(id); ok {
			need = max(need, v.(uint64))
		}
		if c := n.raft.CommitIndex(); c > PromoteLag && c-PromoteLag > need {
			need = c - PromoteLag
		}
		if lastIndex < need {
			return false, &LaggingError{Have: lastIndex, Need: need}
		}
		return true, n.raftErr(n.raft.AddVoter(s.ID, s.Address, 0, 0).Error())
	}
	return false, ErrNotNonvoter
}

// LastIndex is the newest index of this node's log (or of its newest
// snapshot, when the log is empty after one).
func (n *Node) LastIndex() uint64 { return n.raft.LastIndex() }

// IsVoter reports whether this node's latest configuration lists it as a
// voter (while it replays the log, that may be an old configuration).
func (n *Node) IsVoter() bool {
	cf := n.raft.GetConfiguration()
	if cf.Error() != nil {
		return false
	}
	for _, s := range cf.Configuration().Servers {
		if s.ID == raft.ServerID(n.cfg.ID) {
			return s.Suffrage == raft.Voter
		}
	}
	return false
}

// TransferLeadership hands the lead to another voter (Raft's leadership
// transfer: a new term, no election timeout). Only the leader can.
func (n *Node) TransferLeadership() error {
	if !n.IsLeader() {
		return n.notLeader()
	}
	return n.raftErr(n.raft.LeadershipTransfer().Error())
}

// Remove takes node id out of the cluster; only the leader can. The
// leader may remove itself: it steps down once the change is committed.
func (n *Node) Remove(id string) error {
	if !n.IsLeader() {
		return n.notLeader()
	}
	return n.raftErr(n.raft.RemoveServer(raft.ServerID(id), 0, 0).Error())
}

// Leave takes this node out of the cluster and closes it. Only the
// leader can remove a member: on a follower Leave returns a
// NotLeaderError, and the caller asks the leader to Remove this node
// (forwarding is the next slice's).
func (n *Node) Leave() error {
	if err := n.Remove(n.cfg.ID); err != nil {
		return err
	}
	return n.Close()
}

// IsLeader reports whether this node is the leader.
func (n *Node) IsLeader() bool { return n.raft.State() == raft.Leader }

// LeaderAddr returns the leader's Raft address and id ("" when none is
// known).
func (n *Node) LeaderAddr() (addr, id string) {
	a, i := n.raft.LeaderWithID()
	return string(a), string(i)
}

// Server is a member of the cluster.
type Server struct {
	ID, Address string
	Voter       bool
}

// Status is what a node knows of the cluster.
type Status struct {
	ID, Address          string
	State                string // Leader, Follower, Candidate, Shutdown
	LeaderID, LeaderAddr string
	Term                 uint64
	// LastLogIndex is the newest entry in this node's log, CommitIndex the
	// newest it knows committed, AppliedIndex the newest the store holds.
	LastLogIndex, CommitIndex, AppliedIndex uint64
	LastSnapshotIndex                       uint64
	// LastSnapshotAt is when the newest snapshot on disk was taken (zero:
	// none).
	LastSnapshotAt time.Time
	// LeaderChanges counts the leaders this node saw take over.
	LeaderChanges uint64
	LastContact   time.Time // with the leader (zero on the leader)
	Servers       []Server
	// Halted is set when the node stopped applying the log.
	Halted string
	// Unreadable is set when the node's Raft state could not be read at
	// start (a StateError): Raft does not run (node package).
	Unreadable string
	// Diverged is set when this member was found to hold other data than
	// the cluster's majority (digest.go); Verify is the latest
	// verification of the replicas this node made (as leader) or the
	// leader sent it, whichever has the higher index.
	Diverged string
	Verify   *VerifyReport
}

// Status reports the node's view of the cluster.
func (n *Node) Status() Status {
	la, li := n.raft.LeaderWithID()
	st := Status{
		ID: n.cfg.ID, Address: n.Addr(), State: n.raft.State().String(),
		LeaderID: string(li), LeaderAddr: string(la),
		Term: n.raft.CurrentTerm(), LastLogIndex: n.raft.LastIndex(), CommitIndex: n.raft.CommitIndex(),
		AppliedIndex: n.fsm.appliedIndex(), LeaderChanges: n.LeaderChanges(),
	}
	if !n.IsLeader() {
		st.LastContact = n.raft.LastContact()
	}
	if metas, err := n.snaps.List(); err == nil && len(metas) > 0 {
		st.LastSnapshotIndex = metas[0].Index
		st.LastSnapshotAt = snapshotTime(metas[0].ID)
	}
	if err := n.fsm.haltedErr(); err != nil {
		st.Halted = err.Error()
	}
	st.Diverged, st.Verify = n.Diverged(), n.LatestVerifyReport()
	if cf := n.raft.GetConfiguration(); cf.Error() == nil {
		for _, s := range cf.Configuration().Servers {
			st.Servers = append(st.Servers, Server{ID: string(s.ID), Address: string(s.Address), Voter: s.Suffrage == raft.Voter})
		}
	}
	return st
}

// Propose replicates c through the log and returns the applier's result
// and error on this node (the leader) and the entry's index. Only the
// leader proposes (NotLeaderError otherwise). The leader's write gate is
// asked first (storage.DB.Admit): a command the gate refuses never
// enters the log. An error from Raft other than NotLeaderError (lost
// leadership, shutdown) or the context's leaves the outcome unknown: the
// command may still be committed.
func (n *Node) Propose(ctx context.Context, c *storage.Command) (storage.Result, uint64, error) {
	select {
	case <-n.done:
		return storage.Result{}, 0, ErrClosed
	default:
	}
	if !n.IsLeader() {
		return storage.Result{}, 0, n.notLeader()
	}
	if err := n.fsm.haltedErr(); err != nil {
		return storage.Result{}, 0, err
	}
	release, err := n.db.Admit(c)
	if err != nil {
		return storage.Result{}, 0, err
	}
	data, err := c.Encode()
	if err != nil {
		release()
		return storage.Result{}, 0, err
	}
	timeout := cmp.Or(n.cfg.ApplyTimeout, 30*time.Second)
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	start := time.Now()
	f := n.raft.Apply(data, timeout)
	done := make(chan struct{})
	go func() {
		err := f.Error()
		release()
		if n.cfg.OnPropose != nil {
			n.cfg.OnPropose(time.Since(start), err)
		}
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		return storage.Result{}, 0, ctx.Err()
	}
	if err := f.Error(); err != nil {
		return storage.Result{}, 0, n.raftErr(err)
	}
	r, ok := f.Response().(applyResult)
	if !ok {
		return storage.Result{}, f.Index(), fmt.Errorf("cluster: unexpected apply response %T", f.Response())
	}
	return r.res, f.Index(), r.err
}

// Apply is Propose without the index: a Node is a storage.Applier.
func (n *Node) Apply(ctx context.Context, c *storage.Command) (storage.Result, error) {
	res, _, err := n.Propose(ctx, c)
	return res, err
}

// WriteState is the store's write gate (WriteContent stops an upload at
// a closed gate before it reads the next chunk).
func (n *Node) WriteState() storage.WriteState { return n.db.WriteState() }

// AppliedIndex is the index of the newest entry the store holds.
func (n *Node) AppliedIndex() uint64 { return n.fsm.appliedIndex() }

// WaitApplied waits until this node's store holds the entry at index (an
// index Propose returned, on any node). Entries that are not commands
// (Raft's no-ops and configuration changes) are not seen by the store: an
// index of one of those is reached with the next command.
func (n *Node) WaitApplied(ctx context.Context, index uint64) error {
	for {
		applied, moved, herr := n.fsm.wait()
		if applied >= index {
			return nil
		}
		if herr != nil {
			return herr
		}
		select {
		case <-moved:
		case <-ctx.Done():
			return ctx.Err()
		case <-n.done:
			return ErrClosed
		}
	}
}

// Barrier waits until every entry committed before it is applied here;
// only the leader can.
func (n *Node) Barrier(ctx context.Context) error {
	timeout := cmp.Or(n.cfg.ApplyTimeout, 30*time.Second)
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	return n.raftErr(n.raft.Barrier(timeout).Error())
}

// Close stops the node without leaving the cluster (a restart rejoins
// it): Raft stops, then its transport and log. The store stays open.
func (n *Node) Close() error {
	n.closeOnce.Do(func() {
		close(n.done)
		n.closeErr = n.closeParts()
	})
	return n.closeErr
}

func (n *Node) closeParts() error {
	if n.stopFSM != nil {
		n.stopFSM()
	}
	var errs []error
	if n.raft != nil {
		errs = append(errs, n.raft.Shutdown().Error())
	}
	if n.gate != nil {
		errs = append(errs, n.gate.Close()) // and the transport
	} else if n.trans != nil {
		errs = append(errs, n.trans.Close())
	}
	if n.logs != nil {
		errs = append(errs, n.logs.Close())
	}
	if n.meta != nil {
		errs = append(errs, n.meta.Close())
	}
	return errors.Join(errs...)
}

func (n *Node) notLeader() error {
	a, i := n.raft.LeaderWithID()
	return &NotLeaderError{LeaderID: string(i), LeaderAddr: string(a)}
}

// raftErr turns Raft's ErrNotLeader (the entry never entered the log)
// into NotLeaderError and its shutdown into ErrClosed. ErrLeadershipLost
// stays as it is: the entry may yet be committed.
func (n *Node) raftErr(err error) error {
	if errors.Is(err, raft.ErrNotLeader) {
		return n.notLeader()
	}
	if errors.Is(err, raft.ErrRaftShutdown) {
		return fmt.Errorf("%w: %v", ErrClosed, err)
	}
	return err
}
