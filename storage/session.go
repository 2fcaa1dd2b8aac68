package storage

import (
	"context"
	"sync/atomic"
)

// Session consistency (API.md "Reading your writes on any member"): an
// Applier that knows the Raft index a command was applied at (the
// cluster's) notes it in the request's context, and the server answers
// the highest one, so that a client can ask any member to wait for it.

type indexNoteKey struct{}

// IndexNote collects the highest log index the commands of one request
// were applied at.
type IndexNote struct{ max atomic.Uint64 }

// Max is the highest index noted (0: none).
func (n *IndexNote) Max() uint64 { return n.max.Load() }

// WithIndexNote returns a context whose applied commands note their
// index in the returned note.
func WithIndexNote(ctx context.Context) (context.Context, *IndexNote) {
	n := &IndexNote{}
	return context.WithValue(ctx, indexNoteKey{}, n), n
}

// NoteIndex records that a command of ctx's request was applied at
// index (an Applier calls it once the command is applied where the
// request is answered).
func NoteIndex(ctx context.Context, index uint64) {
	n, _ := ctx.Value(indexNoteKey{}).(*IndexNote)
	if n == nil {
		return
	}
	for {
		cur := n.max.Load()
		if index <= cur || n.max.CompareAndSwap(cur, index) {
			return
		}
	}
}
