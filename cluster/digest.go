package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"quire/storage"
)

// ErrNoDigest is Digest's answer for a mark this node did not take a
// digest at (it was applied before this process started, or came with a
// snapshot).
var ErrNoDigest = errors.New("cluster: this node has no digest at that index")

// digestTable keeps the digests of the last marks.
type digestTable struct {
	mu   sync.Mutex
	m    map[uint64]*digestEntry
	last []uint64
}

type digestEntry struct {
	done chan struct{}
	d    storage.Digest
	err  error
}

// keepDigests is how many marks' digests a node keeps.
const keepDigests = 16

// takeDigest pins the store at index (the FSM's goroutine has applied the
// mark and nothing after it) and hashes it in the background.
func (f *fsm) takeDigest(index uint64) {
	e := &digestEntry{done: make(chan struct{})}
	t := &f.digests
	t.mu.Lock()
	if t.m == nil {
		t.m = map[uint64]*digestEntry{}
	}
	t.m[index] = e
	t.last = append(t.last, index)
	if len(t.last) > keepDigests {
		delete(t.m, t.last[0])
		t.last = t.last[1:]
	}
	t.mu.Unlock()
	snap, err := f.db.OpenSnapshot()
	if err != nil {
		e.err = err
		close(e.done)
		return
	}
	go func() {
		defer snap.Release()
		e.d, e.err = snap.Digest(f.ctx)
		if e.err == nil && e.d.Index != index {
			e.err = errors.New("cluster: the store moved before its digest was pinned")
		}
		close(e.done)
		f.log.Info("replica digest", "index", index, "sha256", e.d.SHA256, "documents", e.d.Documents, "keys", e.d.Keys, "took", e.d.Took, "err", e.err)
	}()
}

// Digest is this node's digest at the mark at index, waiting for it
// while this node has yet to apply the mark or finish the walk.
func (n *Node) Digest(ctx context.Context, index uint64) (storage.Digest, error) {
	for {
		t := &n.fsm.digests
		t.mu.Lock()
		e := t.m[index]
		t.mu.Unlock()
		if e != nil {
			select {
			case <-e.done:
				return e.d, e.err
			case <-ctx.Done():
				return storage.Digest{}, ctx.Err()
			}
		}
		applied, moved, herr := n.fsm.wait()
		if applied >= index {
			t.mu.Lock()
			e = t.m[index]
			t.mu.Unlock()
			if e == nil {
				return storage.Digest{}, ErrNoDigest
			}
			continue
		}
		if herr != nil {
			return storage.Digest{}, herr
		}
		select {
		case <-moved:
		case <-ctx.Done():
			return storage.Digest{}, ctx.Err()
		case <-n.done:
			return storage.Digest{}, ErrClosed
		}
	}
}

// MarkDigest proposes a digest mark and returns its index; only the
// leader can.
func (n *Node) MarkDigest(ctx context.Context) (uint64, error) {
	cmd, err := storage.NewCommand(storage.OpDigestMark, "", "", time.Now().UTC(), struct{}{})
	if err != nil {
		return 0, err
	}
	_, idx, err := n.Propose(ctx, cmd)
	return idx, err
}

// divergedFile, in Config.Dir, holds the reason this member was found to
// differ from the others (the leader's verification); it outlives a
// restart, until quire cluster rejoin rebuilds the member.
const divergedFile = "DIVERGED"

// Diverged is the reason this member was found to hold other data than
// the cluster's majority ("" when it was not). A diverged member serves
// nothing from its store and does not ask for a vote.
func (n *Node) Diverged() string {
	if p := n.diverged.Load(); p != nil {
		return *p
	}
	return ""
}

// SetDiverged marks this member as diverged, on disk first.
func (n *Node) SetDiverged(reason string) error {
	if err := writeFileAtomic(filepath.Join(n.cfg.Dir, divergedFile), []byte(reason+"\n")); err != nil {
		return err
	}
	n.diverged.Store(&reason)
	n.log.Error("this member's store differs from the cluster's: it refuses to serve; rebuild it with quire cluster rejoin", "reason", reason)
	return nil
}

// loadDiverged reads the mark SetDiverged left (Open).
func (n *Node) loadDiverged() {
	b, err := os.ReadFile(filepath.Join(n.cfg.Dir, divergedFile))
	if err != nil {
		return
	}
	r := strings.TrimSpace(string(b))
	if r == "" {
		r = "found to differ from the cluster"
	}
	n.diverged.Store(&r)
}

// ClearDiverged removes the mark of dir's member (quire cluster rejoin,
// once the member's store was moved aside).
func ClearDiverged(dir string) error {
	err := os.Remove(filepath.Join(dir, divergedFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// IsDiverged reports the mark of dir's member, for a process that does
// not run it (quire cluster rejoin).
func IsDiverged(dir string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(dir, divergedFile))
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(b)), true
}

func writeFileAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Demote makes voter id a nonvoter (a member found to differ: it must
// not help elect a leader or commit entries). Only the leader can; the
// leader may demote itself, and then steps down.
func (n *Node) Demote(id string) error {
	if !n.IsLeader() {
		return n.notLeader()
	}
	return n.raftErr(n.raft.DemoteVoter(raft.ServerID(id), 0, 0).Error())
}

// MemberDigest is one member's digest in a verification.
type MemberDigest struct {
	NodeID string         `json:"nodeId"`
	Digest storage.Digest `json:"digest"`
	// Err says why the member gave no digest (unreachable, restarted
	// since the mark).
	Err string `json:"error,omitempty"`
	// Equal: the digest is the majority's.
	Equal bool `json:"equal"`
	// NotComparable says why the member's digest was not compared: it
	// was taken by another version of the algorithm than the leader's
	// (a rolling upgrade). Such a member is neither equal nor divergent.
	NotComparable string `json:"notComparable,omitempty"`
}

// VerifyReport is the outcome of one verification of the replicas.
type VerifyReport struct {
	Index uint64    `json:"index"`
	At    time.Time `json:"at"`
	// Version is the leader's digest algorithm (storage.DigestVersion of
	// its code): only members' digests of this version are compared.
	Version int            `json:"version"`
	Members []MemberDigest `json:"members"`
	// Majority is the digest most members hold, when more than half do.
	Majority string `json:"majority,omitempty"`
	// Divergent lists the members whose digest differs from it.
	Divergent []string `json:"divergent"`
	// Undecided: no digest is held by more than half of the members.
	Undecided bool `json:"undecided,omitempty"`
	// NotComparable lists the members whose digest is of another
	// algorithm version than the leader's: not judged, never demoted.
	NotComparable []string `json:"notComparable,omitempty"`
}

// Judge fills the report's verdict from its members' digests: the
// digest more than half of all members hold is the cluster's; a member
// with another differs. Members that gave none are not judged, nor are
// members whose digest is of another algorithm version than the
// report's (the leader's; 0: this code's): a mixed-version cluster in a
// rolling upgrade is not divergent. They still count among all members,
// so a majority is always one of the whole cluster.
func (r *VerifyReport) Judge() {
	if r.Version == 0 {
		r.Version = storage.DigestVersion
	}
	r.Majority, r.Divergent, r.Undecided, r.NotComparable = "", nil, false, nil
	count := map[string]int{}
	for i := range r.Members {
		m := &r.Members[i]
		m.Equal, m.NotComparable = false, ""
		if m.Err != "" {
			continue
		}
		if v := m.Digest.AlgorithmVersion(); v != r.Version {
			m.NotComparable = fmt.Sprintf("not comparable (digest version %d, leader's %d)", v, r.Version)
			r.NotComparable = append(r.NotComparable, m.NodeID)
			continue
		}
		count[m.Digest.SHA256]++
	}
	for sha, c := range count {
		if 2*c > len(r.Members) {
			r.Majority = sha
		}
	}
	if r.Majority == "" {
		r.Undecided = len(count) > 1
		return
	}
	for i := range r.Members {
		m := &r.Members[i]
		if m.Err != "" || m.NotComparable != "" {
			continue
		}
		m.Equal = m.Digest.SHA256 == r.Majority
		if !m.Equal {
			r.Divergent = append(r.Divergent, m.NodeID)
		}
	}
}

// SetVerifyReport records the latest verification (Status shows it).
func (n *Node) SetVerifyReport(r *VerifyReport) { n.lastVerify.Store(r) }

// LastVerifyReport is the latest verification this node made (nil: none).
func (n *Node) LastVerifyReport() *VerifyReport { return n.lastVerify.Load() }

// SetSharedVerifyReport records a verification the leader made and sent
// this member, so that every member's Status shows the replicas'
// digests, not only the leader's.
func (n *Node) SetSharedVerifyReport(r *VerifyReport) { n.sharedVerify.Store(r) }

// LatestVerifyReport is the newest verification this member knows: its
// own or the one the leader sent, whichever is at the higher index (nil:
// none).
func (n *Node) LatestVerifyReport() *VerifyReport {
	own, shared := n.lastVerify.Load(), n.sharedVerify.Load()
	if shared == nil || (own != nil && own.Index >= shared.Index) {
		return own
	}
	return shared
}
