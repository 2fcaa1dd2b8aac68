package cluster

import (
	"context"
	"errors"
	"sync"
	"time"

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
		e.d, e.err = snap.Digest()
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
