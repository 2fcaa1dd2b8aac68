package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"

	"quire/storage"
)

var t0 = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

// member is one node of a test cluster: its dirs and address survive a
// stop, so a restart is the same node.
type member struct {
	id, addr        string
	dbDir, raftDir  string
	db              *storage.DB
	n               *Node
	snapshotEvery   uint64 // SnapshotThreshold (0: never in practice)
	trailing        uint64
	tls             *Identity // nil: plain TCP
	onRestoreCalled atomic.Int64
	// ln is the member's port, held open from newMember to its first
	// start: closed and reopened, it could be taken by another test's
	// listener in between.
	ln net.Listener
}

func newMember(t *testing.T, id string) *member {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() }) // when the member never started
	dir := t.TempDir()
	return &member{id: id, addr: ln.Addr().String(), ln: ln, dbDir: filepath.Join(dir, "db"), raftDir: filepath.Join(dir, "raft")}
}

func (m *member) start(t *testing.T) {
	t.Helper()
	db, err := storage.Open(storage.Config{Dir: m.dbDir, MinFreeBytes: -1, MinFreePercent: -1})
	if err != nil {
		t.Fatalf("%s: open store: %v", m.id, err)
	}
	var out io.Writer = io.Discard
	if os.Getenv("QUIRE_RAFT_LOG") != "" {
		out = os.Stderr
	}
	cfg := Config{
		ID: m.id, Dir: m.raftDir, DB: db, Listen: m.addr,
		RaftLogOutput: out, RaftLogLevel: "info",
		// Short timeouts keep failover quick; generous enough for -race on
		// a loaded machine.
		HeartbeatTimeout: time.Second, ElectionTimeout: time.Second,
		LeaderLeaseTimeout: 500 * time.Millisecond, CommitTimeout: 10 * time.Millisecond,
		SnapshotInterval: 100 * time.Millisecond, SnapshotThreshold: m.snapshotEvery, TrailingLogs: m.trailing,
		LogSegmentSize: 64 << 10,
		OnRestore:      func() { m.onRestoreCalled.Add(1) },
		TLS:            m.tls,
	}
	if cfg.SnapshotThreshold == 0 {
		cfg.SnapshotThreshold = 1 << 40
	}
	if m.ln != nil {
		cfg.Listener, m.ln = m.ln, nil // the first start: the port held since newMember
	}
	// A restarted node may find its port briefly taken by the kernel.
	var n *Node
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err = Open(cfg)
		if err == nil || time.Now().After(deadline) {
			break
		}
		cfg.Listener = nil // Open closed it: listen on the address again
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		db.Close()
		t.Fatalf("%s: open node: %v", m.id, err)
	}
	m.db, m.n = db, n
}

// stop stops the node abruptly (no leadership transfer, no leave) and
// closes its store.
func (m *member) stop(t *testing.T) {
	t.Helper()
	if m.n == nil {
		return
	}
	if err := m.n.Close(); err != nil && !errors.Is(err, ErrClosed) {
		t.Logf("%s: close node: %v", m.id, err)
	}
	if err := m.db.Close(); err != nil {
		t.Errorf("%s: close store: %v", m.id, err)
	}
	m.n, m.db = nil, nil
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// formCluster starts the members, bootstraps the first and joins the
// others through it.
func formCluster(t *testing.T, ms []*member) {
	t.Helper()
	for _, m := range ms {
		m.start(t)
		t.Cleanup(func() { m.stop(t) })
	}
	if err := ms[0].n.Bootstrap(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the first node to lead", ms[0].n.IsLeader)
	for i, m := range ms[1:] {
		joinRetrying(t, ms[:i+2], m.id, m.n.Addr())
	}
	// The tests take the first member for the leader: a lead that moved
	// during a join is handed back.
	waitFor(t, 60*time.Second, "every node to know the first one as leader", func() bool {
		l := leaderOf(ms)
		if l == nil {
			return false
		}
		if l != ms[0] {
			l.n.raft.LeadershipTransferToServer(raft.ServerID(ms[0].id), raft.ServerAddress(ms[0].n.Addr()))
			return false
		}
		for _, m := range ms {
			if _, id := m.n.LeaderAddr(); id != l.id {
				return false
			}
		}
		return true
	})
}

// joinRetrying has whoever leads among ms add id at addr. Under load the
// leader can lose its lease during a join (a two-voter configuration
// needs the new member's answers): the join is made again to the next
// leader for up to a minute (Join leaves a member with the same id and
// address alone).
func joinRetrying(t *testing.T, ms []*member, id, addr string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := errors.New("no leader")
		if l := leaderOf(ms); l != nil {
			if err = l.n.Join(id, addr); err == nil {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("join %s: %v", id, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func leaderOf(ms []*member) *member {
	for _, m := range ms {
		if m.n != nil && m.n.IsLeader() {
			return m
		}
	}
	return nil
}

func addDoc(id, path string) *storage.Command {
	return storage.MustCommand(storage.OpAddDocuments, "default", "joe", t0,
		storage.AddDocuments{Docs: []storage.NewDocument{{
			Document: storage.Document{DocumentID: id, Path: path},
			Tags:     []storage.Tag{{Key: "batch", Value: path}},
		}}})
}

// converge waits until every live member applied what the leader did and
// checks that their stores are identical.
func converge(t *testing.T, ms []*member) string {
	t.Helper()
	var leader *member
	waitFor(t, 15*time.Second, "a leader", func() bool { leader = leaderOf(ms); return leader != nil })
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := leader.n.Barrier(ctx); err != nil {
		t.Fatalf("barrier: %v", err)
	}
	target := leader.n.AppliedIndex()
	want, keys, err := leader.db.StateHash()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.n == nil || m == leader {
			continue
		}
		if err := m.n.WaitApplied(ctx, target); err != nil {
			t.Fatalf("%s: wait for index %d: %v (at %d)", m.id, target, err, m.n.AppliedIndex())
		}
		got, gotKeys, err := m.db.StateHash()
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("%s holds %d keys hashing %s, leader %s holds %d keys hashing %s (applied %d)",
				m.id, gotKeys, got, leader.id, keys, want, target)
		}
	}
	return want
}

// clusterApplier proposes through whichever member leads, retrying
// while leadership moves (a NotLeaderError means the entry never entered
// the log; a busy -race run on a shared machine may lose a leader).
type clusterApplier struct{ ms []*member }

func (a clusterApplier) Propose(ctx context.Context, c *storage.Command) (storage.Result, uint64, error) {
	deadline := time.Now().Add(20 * time.Second)
	for {
		if l := leaderOf(a.ms); l != nil {
			res, idx, err := l.n.Propose(ctx, c)
			var nle *NotLeaderError
			if !errors.As(err, &nle) {
				return res, idx, err
			}
		}
		if time.Now().After(deadline) {
			return storage.Result{}, 0, errors.New("no leader for 20 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (a clusterApplier) Apply(ctx context.Context, c *storage.Command) (storage.Result, error) {
	res, _, err := a.Propose(ctx, c)
	return res, err
}

func TestCluster_ReplicatesCommandsAndReplaysOnlyWhatIsMissing(t *testing.T) {
	ms := []*member{newMember(t, "n1"), newMember(t, "n2"), newMember(t, "n3")}
	formCluster(t, ms)
	ca := clusterApplier{ms}
	ctx := context.Background()

	// Documents from concurrent clients.
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := ca.Propose(ctx, addDoc(fmt.Sprintf("doc-%02d", i), fmt.Sprintf("p%02d.txt", i)))
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("propose: %v", err)
		}
	}
	// The applier's result and error come back to the proposer.
	res, idx, err := ca.Propose(ctx, addDoc("doc-x", "p00.txt"))
	if r, ok := res.Value.(*storage.AddDocumentsResult); err != nil || !ok || r.Paths["doc-x"] == "p00.txt" || idx == 0 {
		t.Fatalf("duplicate path: result %#v, index %d, err %v; want a renamed path", res.Value, idx, err)
	}
	_, idx2, err := ca.Propose(ctx, addDoc("doc-x", "other.txt"))
	var ce *storage.ConflictError
	if !errors.As(err, &ce) || idx2 <= idx {
		t.Fatalf("duplicate id: index %d, err %v; want a ConflictError after %d", idx2, err, idx)
	}
	// Content travels as chunk commands, through the node as Applier.
	content := make([]byte, 3*storage.ChunkSize+1234)
	rand.New(rand.NewSource(1)).Read(content)
	m, tail, err := storage.WriteContent(ctx, ca, bytes.NewReader(content), 0, nil)
	if err != nil {
		t.Fatalf("write content: %v", err)
	}
	withContent := storage.MustCommand(storage.OpAddDocuments, "default", "joe", t0, storage.AddDocuments{Docs: []storage.NewDocument{{
		Document: storage.Document{DocumentID: "doc-bin", Path: "bin.dat"}, Content: &m, Chunks: tail,
	}}})
	if _, err := ca.Apply(ctx, withContent); err != nil {
		t.Fatalf("attach content: %v", err)
	}
	converge(t, ms)
	// The concurrent writes reached the FSMs together: some were applied
	// as one batch (one Badger transaction), and every node's state is
	// the same as the others' (converge) whatever its batches were.
	var batches int64
	for _, m := range ms {
		batches += m.n.fsm.batches.Load()
	}
	if batches == 0 {
		t.Fatal("40 concurrent writes were applied one entry at a time on every node: no batch")
	}
	leader := leaderOf(ms)
	follower := ms[0]
	if follower == leader {
		follower = ms[1]
	}
	// A follower does not propose.
	var nle *NotLeaderError
	if _, _, err := follower.n.Propose(ctx, addDoc("doc-f", "f.txt")); !errors.As(err, &nle) || nle.LeaderID != leader.id || nle.LeaderAddr != leader.n.Addr() {
		t.Fatalf("propose on a follower: %v, want NotLeaderError naming %s", err, leader.id)
	}
	for _, m := range ms {
		rd, _, err := m.db.OpenContent("default", "doc-bin")
		if err != nil {
			t.Fatalf("%s: open content: %v", m.id, err)
		}
		got, err := io.ReadAll(rd)
		rd.Close()
		if err != nil || !bytes.Equal(got, content) {
			t.Fatalf("%s: content read back: %d bytes, %v; want the %d bytes written", m.id, len(got), err, len(content))
		}
		if _, err := m.db.GetDocument("default", "doc-39"); err != nil {
			t.Fatalf("%s: doc-39: %v", m.id, err)
		}
	}
	st := follower.n.Status()
	if st.State != "Follower" || st.LeaderID != leader.id || len(st.Servers) != 3 || st.AppliedIndex != leader.n.AppliedIndex() {
		t.Fatalf("follower status %+v", st)
	}

	// A stopped follower restarts and applies only the entries above its
	// store's index (no snapshot exists, so Raft replays the whole log).
	n3 := ms[2]
	if n3 == leader {
		n3 = follower
	}
	had := n3.n.AppliedIndex()
	n3.stop(t)
	const more = 15
	for i := range more {
		if _, _, err := ca.Propose(ctx, addDoc(fmt.Sprintf("late-%02d", i), fmt.Sprintf("late%02d.txt", i))); err != nil {
			t.Fatal(err)
		}
	}
	n3.start(t)
	if got := n3.n.AppliedIndex(); got != had {
		t.Fatalf("restarted node starts at index %d, its store held %d", got, had)
	}
	converge(t, ms)
	if a, s := n3.n.fsm.applies.Load(), n3.n.fsm.skips.Load(); a != more || s == 0 {
		t.Fatalf("restarted node applied %d entries and skipped %d; want exactly %d applied and the old ones skipped", a, s, more)
	}
	if n3.onRestoreCalled.Load() != 0 {
		t.Fatal("a restart without a snapshot replaced the store")
	}
	if _, err := n3.db.GetDocument("default", "late-14"); err != nil {
		t.Fatalf("restarted node lacks late-14: %v", err)
	}
}

func TestCluster_LeaderKilledUnderLoad_NothingAcknowledgedIsLost(t *testing.T) {
	ms := []*member{newMember(t, "n1"), newMember(t, "n2"), newMember(t, "n3")}
	for _, m := range ms {
		m.snapshotEvery, m.trailing = 40, 20
	}
	formCluster(t, ms)

	var mu sync.Mutex // guards members' n while the test stops one
	current := func() *member {
		mu.Lock()
		defer mu.Unlock()
		return leaderOf(ms)
	}
	var acked sync.Map // document id -> struct{}
	var nAcked atomic.Int64
	stopLoad := make(chan struct{})
	var wg sync.WaitGroup
	const clients = 16
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stopLoad:
					return
				default:
				}
				l := current()
				if l == nil {
					time.Sleep(5 * time.Millisecond)
					continue
				}
				mu.Lock()
				n := l.n
				mu.Unlock()
				if n == nil {
					continue
				}
				id := fmt.Sprintf("c%02d-%04d", c, i)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				_, _, err := n.Propose(ctx, addDoc(id, id+".txt"))
				cancel()
				if err == nil {
					acked.Store(id, struct{}{})
					nAcked.Add(1)
				}
			}
		}()
	}
	waitFor(t, 20*time.Second, "100 acknowledged writes", func() bool { return nAcked.Load() >= 100 })

	// Kill the leader in the middle of the load.
	old := current()
	mu.Lock()
	old.stop(t)
	mu.Unlock()
	killedAt, killTime := nAcked.Load(), time.Now()
	var survivors []*member
	for _, m := range ms {
		if m != old {
			survivors = append(survivors, m)
		}
	}
	var newLeader *member
	waitFor(t, 15*time.Second, "a new leader", func() bool { newLeader = leaderOf(survivors); return newLeader != nil })
	waitFor(t, 20*time.Second, "a write acknowledged by the new leader", func() bool { return nAcked.Load() > killedAt })
	t.Logf("leader kill to the first acknowledged write: %v", time.Since(killTime).Round(time.Millisecond))
	waitFor(t, 20*time.Second, "100 writes acknowledged by the new leader", func() bool { return nAcked.Load() >= killedAt+100 })
	close(stopLoad)
	wg.Wait()

	hash := converge(t, survivors)
	missing := 0
	acked.Range(func(k, _ any) bool {
		for _, m := range survivors {
			if _, err := m.db.GetDocument("default", k.(string)); err != nil {
				t.Errorf("%s lacks acknowledged %s: %v", m.id, k, err)
				missing++
			}
		}
		return missing < 10
	})
	if missing > 0 {
		t.FailNow()
	}
	t.Logf("acknowledged writes: %d (%d before the kill); new leader %s", nAcked.Load(), killedAt, newLeader.id)

	// Compact the log past the dead node's last entry, so it can only
	// catch up through a snapshot.
	// The dead node's log may hold entries beyond its store's index
	// (committed ones it appended as leader): it can catch up from its own
	// log up to its last entry, so the leader's log must start after that.
	had, err := func() (uint64, error) {
		meta := &metadb.BoltMetaDB{}
		defer meta.Close()
		w, err := wal.Open(filepath.Join(old.raftDir, "wal"), wal.WithMetaStore(meta))
		if err != nil {
			return 0, err
		}
		defer w.Close()
		return w.LastIndex()
	}()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		// The WAL drops whole segments: the entry itself must be gone,
		// not only below FirstIndex.
		var e raft.Log
		gone := errors.Is(newLeader.n.logs.GetLog(had+1, &e), raft.ErrLogNotFound)
		if gone && i >= 60 {
			break
		}
		if i > 3000 {
			t.Fatalf("the leader's log still holds entry %d", had+1)
		}
		if _, _, err := newLeader.n.Propose(context.Background(), addDoc(fmt.Sprintf("post-%04d", i), fmt.Sprintf("post%04d.txt", i))); err != nil {
			t.Fatal(err)
		}
	}
	old.start(t)
	hash2 := converge(t, ms)
	if hash2 == hash {
		t.Fatal("state did not change with the writes after the failover")
	}
	if old.onRestoreCalled.Load() == 0 || old.n.fsm.restores.Load() == 0 {
		t.Fatal("the restarted node caught up without loading a snapshot")
	}
	if _, err := old.db.GetDocument("default", "post-0000"); err != nil {
		t.Fatalf("restarted node lacks post-0000: %v", err)
	}
}

func TestCluster_NodeFailureHaltsInsteadOfSkipping(t *testing.T) {
	ms := []*member{newMember(t, "n1"), newMember(t, "n2"), newMember(t, "n3")}
	formCluster(t, ms)
	ca, n3 := clusterApplier{ms}, ms[2]
	ctx := context.Background()
	if _, _, err := ca.Propose(ctx, addDoc("before", "before.txt")); err != nil {
		t.Fatal(err)
	}
	converge(t, ms)
	had := n3.n.AppliedIndex()

	// n3's disk fails: it must stop, not skip the entry.
	n3.db.SetCommitFault(func(*storage.Command) error { return fmt.Errorf("write: %w", syscall.EIO) })
	_, idx, err := ca.Propose(ctx, addDoc("during", "during.txt"))
	if err != nil {
		t.Fatalf("the majority should commit without n3: %v", err)
	}
	waitFor(t, 10*time.Second, "n3 to halt", func() bool { return n3.n.Status().Halted != "" })
	select {
	case <-n3.n.done:
	case <-time.After(10 * time.Second):
		t.Fatal("a halted node kept running")
	}
	if got := n3.n.AppliedIndex(); got != had {
		t.Fatalf("halted node's index moved to %d (had %d, failed entry %d)", got, had, idx)
	}
	if err := n3.n.WaitApplied(ctx, idx); err == nil {
		t.Fatal("WaitApplied on a halted node succeeded")
	}
	if got, err := n3.db.AppliedIndex(); err != nil || got != had {
		t.Fatalf("halted node's store index %d, %v; want %d", got, err, had)
	}
	if _, err := n3.db.GetDocument("default", "during"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("the failed entry left a document: %v", err)
	}
	if _, _, err := ca.Propose(ctx, addDoc("after", "after.txt")); err != nil {
		t.Fatal(err)
	}

	// Fixed and restarted, it applies the entry it could not.
	n3.stop(t)
	n3.start(t)
	converge(t, ms)
	for _, id := range []string{"before", "during", "after"} {
		if _, err := n3.db.GetDocument("default", id); err != nil {
			t.Fatalf("restarted node lacks %s: %v", id, err)
		}
	}
}

func TestCluster_RemoveAndLeave(t *testing.T) {
	ms := []*member{newMember(t, "n1"), newMember(t, "n2"), newMember(t, "n3")}
	formCluster(t, ms)
	var nle *NotLeaderError
	if err := ms[1].n.Remove("n3"); !errors.As(err, &nle) {
		t.Fatalf("remove on a follower: %v, want NotLeaderError", err)
	}
	if err := ms[0].n.Join("n2", ms[1].n.Addr()); err != nil {
		t.Fatalf("joining a member again: %v", err)
	}
	if err := ms[0].n.Remove("n3"); err != nil {
		t.Fatal(err)
	}
	if got := len(ms[0].n.Status().Servers); got != 2 {
		t.Fatalf("%d servers after a remove, want 2", got)
	}
	ms[2].stop(t)
	// The leader leaves: n2 is left alone and leads.
	if err := ms[0].n.Leave(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 15*time.Second, "n2 to lead alone", ms[1].n.IsLeader)
	if _, _, err := ms[1].n.Propose(context.Background(), addDoc("solo", "solo.txt")); err != nil {
		t.Fatalf("propose on the remaining node: %v", err)
	}
	st := ms[1].n.Status()
	if len(st.Servers) != 1 || st.Servers[0].ID != "n2" {
		t.Fatalf("servers %+v, want n2 alone", st.Servers)
	}
}

func TestCluster_InterruptedSnapshotLoadIsRedoneAtStart(t *testing.T) {
	ms := []*member{newMember(t, "n1"), newMember(t, "n2"), newMember(t, "n3")}
	for _, m := range ms {
		m.snapshotEvery, m.trailing = 20, 10
	}
	formCluster(t, ms)
	ca, n3 := clusterApplier{ms}, ms[2]
	for i := range 60 {
		if _, _, err := ca.Propose(context.Background(), addDoc(fmt.Sprint("d", i), fmt.Sprint("d", i))); err != nil {
			t.Fatal(err)
		}
	}
	converge(t, ms)
	waitFor(t, 10*time.Second, "n3 to take a snapshot", func() bool { return n3.n.Status().LastSnapshotIndex > 0 })
	n3.stop(t)

	// A crash in the middle of loading a snapshot: the store holds half
	// of one and says so.
	db, err := storage.Open(storage.Config{Dir: n3.dbDir, MinFreeBytes: -1, MinFreePercent: -1})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := db.OpenSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	_, err = snap.WriteTo(&buf)
	snap.Release()
	if err != nil {
		t.Fatal(err)
	}
	if err := db.ReplaceFrom(bytes.NewReader(buf.Bytes()[:buf.Len()/2])); err == nil {
		t.Fatal("a cut snapshot loaded")
	}
	if _, err := db.AppliedIndex(); !errors.Is(err, storage.ErrRestoreIncomplete) {
		t.Fatalf("applied index after a cut load: %v", err)
	}
	db.Close()

	n3.start(t)
	if n3.n.fsm.restores.Load() != 1 || n3.onRestoreCalled.Load() != 1 {
		t.Fatalf("start loaded %d snapshots (hook ran %d times), want 1", n3.n.fsm.restores.Load(), n3.onRestoreCalled.Load())
	}
	if _, err := n3.db.AppliedIndex(); err != nil {
		t.Fatalf("applied index after the start: %v", err)
	}
	converge(t, ms)
	if _, err := n3.db.GetDocument("default", "d59"); err != nil {
		t.Fatalf("n3 lacks d59: %v", err)
	}
}
