package api

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"quire/storage"
)

// Admission control for writes that feed the fulltext index
// (index/DESIGN.md, "Backpressure"). Quire promises that fulltext search
// lags a write by at most about a second, under load too; Bleve indexes
// 4 KiB documents at about 1.2–1.5 ms of CPU each, so on two cores a
// create load of 900 docs/s outruns it and the lag grows without bound.
// Before such a write is applied, the gate waits while the index is too
// far behind (behind, below): creates then proceed at the rate the index
// takes them instead of queueing work it cannot do.
//   - GateLag: writes wait while more than this much work is queued for
//     the next batch, or the oldest change is more than twice this old.
//     A change then waits for the batch in flight and its own, each at
//     most about GateLag: freshness within a second.
//   - GateMaxWait: a write waits at most this long, then goes ahead (and
//     counts in quire_index_backpressure_timeouts_total): a stuck or failed
//     indexer must not stop writes, and storage stays the truth.
//
// The gate runs before the command is built into a transaction and holds
// nothing while it waits (the indexer reads storage). It is node-local: in
// a cluster the node that takes the request waits on its own index; Raft
// followers apply and index the same commands without a gate.
const (
	GateLag     = 200 * time.Millisecond
	GateMaxWait = 5 * time.Second
)

// TestGateLag replaces GateLag in servers built while it is set (tests).
var TestGateLag time.Duration

// indexFed are the commands that hand the indexer documents to analyse:
// new documents and new content, and changes of a document's indexed
// fields (tags, attributes, text), for which the indexer rewrites the
// whole document, text included. Deletions, actions and everything else
// do not wait.
var indexFed = map[storage.Op]bool{
	storage.OpAddDocuments:       true,
	storage.OpUpdateDocument:     true,
	storage.OpCommitContent:      true,
	storage.OpAddWebhookDocument: true,
	storage.OpIntakeDocument:     true,
	storage.OpSetTags:            true,
	storage.OpUpdateMatchTags:    true,
	storage.OpTagDocuments:       true,
	storage.OpSetDocAttributes:   true,
	storage.OpSetText:            true,
	storage.OpSetFulltext:        true,
	storage.OpSetVersion:         true,
	storage.OpReindexDocument:    true,
}

// lagSource is what the gate reads of the indexer (index.Indexer).
type lagSource interface {
	TextLag() time.Duration
	TextBacklog() time.Duration
	TextProgress() <-chan struct{}
	Hurry()
}

// indexGate holds back index-feeding writes while the index lags.
type indexGate struct {
	src     lagSource
	lag     time.Duration // threshold
	maxWait time.Duration

	waiting  atomic.Int64
	waitedNS atomic.Int64
	waits    atomic.Int64
	timeouts atomic.Int64
}

func NewIndexGate(src lagSource, lag, maxWait time.Duration) *indexGate {
	return &indexGate{src: src, lag: lag, maxWait: maxWait}
}

// Wait returns once the index lag is at most the threshold, maxWait has
// passed (nil: the write goes ahead), or ctx ends (its error).
func (g *indexGate) Wait(ctx context.Context) error {
	if g == nil || g.src == nil {
		return nil
	}
	progress := g.src.TextProgress()
	if g.behind() <= g.lag {
		return nil
	}
	g.src.Hurry()
	start := time.Now()
	g.waiting.Add(1)
	g.waits.Add(1)
	defer func() {
		g.waiting.Add(-1)
		g.waitedNS.Add(int64(time.Since(start)))
	}()
	timeout := time.NewTimer(g.maxWait)
	defer timeout.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timeout.C:
			g.timeouts.Add(1)
			return nil
		case <-progress:
		}
		// The lag only falls when a batch is in; read it again then.
		progress = g.src.TextProgress()
		if g.behind() <= g.lag {
			return nil
		}
		g.src.Hurry()
	}
}

// behind is how far the index is behind, against the threshold: the
// work queued for the next batch (TextBacklog), or half the age of the
// oldest change not indexed, whichever is larger. The backlog leaves out
// the batch in flight, so writes go on while it is indexed and the next
// one gathers (counting it made writers and indexer take turns, at half
// the rate); the age reacts late (a burst queues seconds of work before
// the oldest change is old), but still bounds the lag to twice the
// threshold when the backlog's estimate is off or not known yet.
func (g *indexGate) behind() time.Duration {
	return max(g.src.TextLag()/2, g.src.TextBacklog())
}

// Register exports the gate's counters.
func (g *indexGate) Register(reg prometheus.Registerer) {
	reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "quire_index_backpressure_seconds_total",
			Help: "Time writes feeding the fulltext index spent waiting for it to catch up (summed over requests).",
		}, func() float64 { return time.Duration(g.waitedNS.Load()).Seconds() }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "quire_index_backpressure_waits_total",
			Help: "Writes that waited for the fulltext index to catch up.",
		}, func() float64 { return float64(g.waits.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "quire_index_backpressure_timeouts_total",
			Help: "Writes that went ahead after waiting the longest allowed for the fulltext index.",
		}, func() float64 { return float64(g.timeouts.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "quire_index_backpressure_waiting",
			Help: "Writes waiting now for the fulltext index to catch up.",
		}, func() float64 { return float64(g.waiting.Load()) }),
	)
}
