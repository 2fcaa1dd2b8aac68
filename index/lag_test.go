package index

import (
	"testing"
	"time"

	"quire/storage"
)

func newLagIndexer() *Indexer {
	return &Indexer{
		textSeen: map[storage.DocRef]time.Time{},
		progress: make(chan struct{}),
		textWake: make(chan struct{}, 1),
	}
}

// backdate makes r's queue entry look queued d ago.
func backdate(ix *Indexer, r storage.DocRef, d time.Duration) {
	at := time.Now().Add(-d)
	ix.textSeen[r] = at
	for i := range ix.lagQ {
		if ix.lagQ[i].ref == r {
			ix.lagQ[i].at = at
		}
	}
}

// TestTextLag_OldestFirstQueuedChange checks the O(1) lag bookkeeping:
// the age of the oldest change not indexed, through indexing, a change
// queued twice and a change queued again after its batch.
func TestTextLag_OldestFirstQueuedChange(t *testing.T) {
	ix := newLagIndexer()
	a, b := storage.DocRef{Site: "s", ID: "a"}, storage.DocRef{Site: "s", ID: "b"}
	if l := ix.TextLag(); l != 0 {
		t.Fatalf("empty: lag %v", l)
	}
	ix.queueText(a)
	backdate(ix, a, 3*time.Second)
	ix.queueText(b)
	backdate(ix, b, time.Second)
	ix.queueText(a) // again: keeps its first time
	if l := ix.TextLag(); l < 3*time.Second || l > 4*time.Second {
		t.Fatalf("lag %v, want a's 3 s", l)
	}
	progress := ix.TextProgress()
	ix.textIndexed([]storage.DocRef{a})
	select {
	case <-progress:
	default:
		t.Fatal("TextProgress not closed after a batch")
	}
	if l := ix.TextLag(); l < time.Second || l > 2*time.Second {
		t.Fatalf("after a: lag %v, want b's 1 s", l)
	}
	ix.queueText(a) // changed again after its batch: a new, young entry
	ix.textIndexed([]storage.DocRef{b})
	if l := ix.TextLag(); l >= time.Second {
		t.Fatalf("after b: lag %v, want a's second change (just now)", l)
	}
	ix.textIndexed([]storage.DocRef{a})
	if l := ix.TextLag(); l != 0 || len(ix.lagQ) != 0 {
		t.Fatalf("all indexed: lag %v, %d marks left", l, len(ix.lagQ))
	}
}

func TestTextBacklog_LearnsFromFullBatchesOnly(t *testing.T) {
	ix := newLagIndexer()
	for i := range 10 {
		ix.textQ = append(ix.textQ, storage.DocRef{Site: "s", ID: string(rune('a' + i))})
	}
	ix.notePerDoc(500*time.Millisecond, 5) // a small batch's fixed costs: ignored
	if b := ix.TextBacklog(); b != 0 {
		t.Fatalf("backlog %v from a batch of 5", b)
	}
	ix.notePerDoc(200*time.Millisecond, 100) // 2 ms a document
	if b := ix.TextBacklog(); b != 20*time.Millisecond {
		t.Fatalf("backlog %v, want 10 x 2 ms", b)
	}
	ix.notePerDoc(600*time.Millisecond, 100) // 6 ms: moving average (3x2+6)/4 = 3 ms
	if b := ix.TextBacklog(); b != 30*time.Millisecond {
		t.Fatalf("backlog %v, want 10 x 3 ms", b)
	}
}

func TestHurry_WorkerTakesTheQueueAtOnce(t *testing.T) {
	ix := newLagIndexer()
	for i := range 20 {
		ix.textQ = append(ix.textQ, storage.DocRef{Site: "s", ID: string(rune('a' + i))})
	}
	ix.textSince = time.Now()
	if w := ix.batchWait(false, false); w <= 0 {
		t.Fatalf("under a load with 20 queued the worker should gather, wait %v", w)
	}
	ix.Hurry()
	if w := ix.batchWait(false, false); w != 0 {
		t.Fatalf("hurried: wait %v", w)
	}
	select {
	case <-ix.textWake:
	default:
		t.Fatal("Hurry did not wake the worker")
	}
}

// TestBatchWait_GathersTheReleasedBurst: after a quiet spell a few
// changes are indexed at once; after a batch that let writes go which
// the index gate held back, the first changes are the start of those
// writes' burst, gathered while it keeps coming (and no longer than
// burstMax, and at once when the gate hurries the worker).
func TestBatchWait_GathersTheReleasedBurst(t *testing.T) {
	queued := func(n int, since, last time.Duration) *Indexer {
		ix := newLagIndexer()
		for i := range n {
			ix.textQ = append(ix.textQ, storage.DocRef{Site: "s", ID: string(rune('a' + i))})
		}
		now := time.Now()
		ix.textSince, ix.textLast = now.Add(-since), now.Add(-last)
		return ix
	}
	for _, tt := range []struct {
		name       string
		ix         *Indexer
		released   bool
		hurry      bool
		wantGather bool
	}{
		{"quiet spell: a few changes at once", queued(2, 0, 0), false, false, false},
		{"released burst still coming", queued(2, 0, 0), true, false, true},
		{"released burst, more than lowLoad, still coming", queued(lowLoad+4, 5*time.Millisecond, 0), true, false, true},
		{"released burst ended", queued(2, 3*burstQuiet, 2*burstQuiet), true, false, false},
		{"released burst coming for burstMax", queued(40, burstMax, 0), true, false, false},
		{"released burst, hurried", queued(2, 0, 0), true, true, false},
		{"released burst of batchTarget", queued(batchTarget, 0, 0), true, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.hurry {
				tt.ix.Hurry()
			}
			w := tt.ix.batchWait(true, tt.released)
			if gathers := w > 0; gathers != tt.wantGather {
				t.Errorf("wait %v, want gathering %v", w, tt.wantGather)
			}
		})
	}
}
