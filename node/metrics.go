package node

import (
	"context"
	"io/fs"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"quire/guard"
	"quire/storage"
)

// The per-site counts (quire_documents and the rest) read every document
// and action record: about 2.5 s at a million documents with the store in
// the page cache, 10–70 s inside a 512 MiB limit with a cold cache or
// beside the idle merge (storage/DESIGN.md, "Counting at a million"). A
// scrape must not wait for that (Prometheus gives up after 10 s by
// default), so the count runs in the background and a scrape reports the
// last one:
//   - statsMaxAge: a count younger than this is reused as it is.
//   - statsWait: a scrape that finds the count older starts a recount
//     and waits this long for it; a small store is then counted fresh,
//     and a big one answers with the previous count (none before the
//     first has ended) while the recount goes on. Scrapes that come
//     while a recount runs do not wait for it.
//   - statsDuty: a recount starts at most once per statsDuty times the
//     last one's duration, so counting takes at most 1/statsDuty of a
//     core however often the server is scraped.
const (
	statsWait = time.Second
	statsDuty = 20
)

// statsMaxAge is a variable so that a test can make every scrape recount.
var statsMaxAge = 30 * time.Second

// testStatsHold, when set (tests, before the node starts), is waited for
// by every recount before it counts: a count that takes long.
var testStatsHold chan struct{}

// collector reports the node's state at scrape time: storage and index
// sizes, per-site document and action counts, the pipeline and the index
// queue.
type collector struct {
	n *Node

	// The per-site counts, taken in the background (siteStats).
	mu       sync.Mutex
	stats    map[string]*storage.SiteStats
	at       time.Time     // when the count began
	took     time.Duration // how long it took
	counting chan struct{} // closed when the recount under way ends
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup

	buildInfo, docs, softDeleted, contentBytes, actions, pending *prometheus.Desc
	statsAge, statsRunning                                       *prometheus.Desc
	lsm, vlog, indexBytes, indexQueue, indexLag, indexBest       *prometheus.Desc
	indexSegments, indexMerges, indexMerging                     *prometheus.Desc
	indexWarms, indexWarming                                     *prometheus.Desc
	writeRefused, diskFree, diskReserve                          *prometheus.Desc
	pipeRunning, pipeBusy, pipeOldest                            *prometheus.Desc
	eventsDelivered, eventsFailed, eventsDropped, eventsPending  *prometheus.Desc
	thumbsMade, thumbsFailed                                     *prometheus.Desc
	leading, certExpiry                                          *prometheus.Desc
	raftState, raftTerm, raftLastIndex, raftCommit, raftApplied  *prometheus.Desc
	raftPeers, raftVoters, raftSnapAge, raftSnapIndex            *prometheus.Desc
	raftLeaderChanges, raftLeaderKnown, raftHalted, raftContact  *prometheus.Desc
	raftUnreadable                                               *prometheus.Desc
	replicaDiverged, divergentMembers, verifiedIndex             *prometheus.Desc
}

func newCollector(n *Node) *collector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &collector{
		n:             n,
		ctx:           ctx,
		cancel:        cancel,
		buildInfo:     d("quire_build_info", "Quire's version; always 1.", "version", "goversion"),
		docs:          d("quire_documents", "Documents stored, soft-deleted ones included (counted in the background at most every 30 s; see quire_site_counts_age_seconds).", "site"),
		statsAge:      d("quire_site_counts_age_seconds", "Age of the per-site counts (quire_documents, quire_actions and the like): they are recounted in the background at most every 30 s, and less often when a count takes long (a million documents)."),
		statsRunning:  d("quire_site_counts_running", "1 while the per-site counts are recounted in the background, else 0."),
		softDeleted:   d("quire_documents_soft_deleted", "Soft-deleted documents.", "site"),
		contentBytes:  d("quire_document_content_bytes", "Bytes of document content, before deduplication and compression.", "site"),
		actions:       d("quire_actions", "Document actions by type and status.", "site", "type", "status"),
		pending:       d("quire_action_documents_pending", "Documents with an action waiting to run.", "site"),
		lsm:           d("quire_storage_lsm_bytes", "Size of Badger's LSM tree (records)."),
		vlog:          d("quire_storage_vlog_bytes", "Size of Badger's value log (content chunks)."),
		writeRefused:  d("quire_storage_write_refused", "1 while the store refuses writes for the kind's reason (low-space, read-only-open, io-error), else 0.", "kind"),
		diskFree:      d("quire_storage_free_bytes", "Free space on the data disk at the last look (every second)."),
		diskReserve:   d("quire_storage_reserve_bytes", "Free space kept in reserve: writes are refused below it."),
		indexBytes:    d("quire_index_bytes", "Size of the Bleve search indexes on disk."),
		indexQueue:    d("quire_index_queue_length", "Documents waiting to be indexed."),
		indexLag:      d("quire_index_lag_seconds", "Age of the oldest document whose text waits to be indexed."),
		indexBest:     d("quire_index_best_hits_total", "Segments whose cached best hits of a word answered a one-word query (used), caches of them computed by a query (built), and by the warm pass after the idle merge (warmed).", "result"),
		indexSegments: d("quire_index_segments", "Segments of a search index (text: fulltext; names: filename and folder prefixes), on disk and in memory; an idle index is merged down to 2.", "index"),
		indexMerges:   d("quire_index_idle_merges_total", "Steps of the idle merge: merged (several segments made one) and yielded (a step stopped by a change).", "result"),
		indexMerging:  d("quire_index_idle_merge_running", "1 while the idle merge is merging a search index's segments, else 0."),
		indexWarms:    d("quire_index_warm_passes_total", "Passes that warmed the cached best hits of the costliest words once the index was idle: done (to the end or the budget) and yielded (stopped by a change).", "result"),
		indexWarming:  d("quire_index_warm_running", "1 while the best-hits warm pass that follows the idle merge runs, else 0 (it turns 1 as quire_index_idle_merge_running turns 0)."),
		pipeRunning:   d("quire_pipeline_running", "1 when the action pipeline's workers run."),
		pipeBusy:      d("quire_pipeline_documents", "Documents queued or running in the action pipeline."),
		pipeOldest:    d("quire_pipeline_oldest_due_seconds", "How long the most overdue queued document has waited."),

		eventsDelivered: d("quire_events_delivered_total", "Document events taken by a target (subscription or event bus) since the process started."),
		eventsFailed:    d("quire_events_failed_total", "Posts of document events that failed (each is tried again until EventMaxAge)."),
		eventsDropped:   d("quire_events_dropped_total", "Document events given up for a target: subscription gone, destination refused, bus not configured, or older than 24 h."),
		eventsPending:   d("quire_events_pending", "Document events in the outbox at the delivery worker's last pass (0 on a node that does not deliver)."),
		thumbsMade:      d("quire_thumbnails_made_total", "First-page thumbnails the pipeline made since the process started (listings never make one)."),
		thumbsFailed:    d("quire_thumbnails_failed_total", "Thumbnails that could not be made (the document then shows its kind's icon)."),
		certExpiry:      d("quire_certificate_expiry_timestamp_seconds", "When a certificate of a site's secrets store expires (Unix time).", "site", "alias"),
		leading:         d("quire_schedulers_running", "1 while this node runs the schedulers (action pipeline, retention, folder moves, chunk sweep): always on a single server, on the leader only in a cluster."),

		raftState:         d("quire_raft_state", "1 for this cluster member's Raft state (leader, follower, candidate, shutdown), 0 for the others.", "state"),
		raftTerm:          d("quire_raft_term", "The Raft term this member is in."),
		raftLastIndex:     d("quire_raft_last_log_index", "Index of the newest entry in this member's Raft log."),
		raftCommit:        d("quire_raft_commit_index", "Index of the newest entry this member knows committed."),
		raftApplied:       d("quire_raft_applied_index", "Index of the newest entry this member's store applied (the store's rf/applied)."),
		raftPeers:         d("quire_raft_peers", "Members in the cluster's configuration, this one included."),
		raftVoters:        d("quire_raft_voters", "Voting members in the cluster's configuration."),
		raftSnapAge:       d("quire_raft_snapshot_age_seconds", "Age of the newest Raft snapshot on this member's disk (absent: none yet)."),
		raftSnapIndex:     d("quire_raft_snapshot_index", "Log index of the newest Raft snapshot on this member's disk."),
		raftLeaderChanges: d("quire_raft_leader_changes_total", "Leaders this member saw take over since it started (its first included)."),
		raftLeaderKnown:   d("quire_raft_leader_known", "1 while this member knows a leader, else 0."),
		raftHalted:        d("quire_raft_halted", "1 when this member stopped applying the log after a local failure (restart it), else 0."),
		raftUnreadable:    d("quire_raft_state_unreadable", "1 when this member could not read its Raft state at start and runs without Raft (quire cluster rejoin rebuilds it), else 0."),
		replicaDiverged:   d("quire_cluster_replica_diverged", "1 when this member was found to hold other data than the cluster's majority (it serves nothing and does not vote until quire cluster rejoin rebuilds it), else 0."),
		divergentMembers:  d("quire_cluster_divergent_members", "Members whose replica digest differed from the majority's at the leader's latest verification (on the member that made it; -1: no digest was held by a majority)."),
		verifiedIndex:     d("quire_cluster_verified_index", "Log index of the leader's latest verification of the replicas (on the member that made it)."),
		raftContact:       d("quire_raft_last_contact_seconds", "Time since a follower last heard from the leader (0 on the leader)."),
	}
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) { prometheus.DescribeByCollect(c, ch) }

// Collect runs in a goroutine of the registry's, outside the HTTP
// server's recovery: a panic in it fails this scrape's node metrics only.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	guard.Do(c.n.cfg.Logger, guard.Metrics, func() { c.collect(ch) })
}

func (c *collector) collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	gauge(c.buildInfo, 1, Version, runtime.Version())
	lsm, vlog := c.n.DB.Size()
	gauge(c.lsm, float64(lsm))
	gauge(c.vlog, float64(vlog))
	ws := c.n.DB.WriteState()
	for _, k := range []string{storage.KindLowSpace, storage.KindReadOnlyOpen, storage.KindIOError} {
		v := 0.0
		if !ws.Writable && ws.Kind == k {
			v = 1
		}
		gauge(c.writeRefused, v, k)
	}
	gauge(c.diskFree, float64(ws.Free))
	gauge(c.diskReserve, float64(ws.Reserve))
	gauge(c.indexBytes, float64(dirSize(filepath.Join(c.n.cfg.DataDir, "index"))))
	gauge(c.indexQueue, float64(c.n.Indexer.Queued()))
	gauge(c.indexLag, c.n.Indexer.TextLag().Seconds())
	used, built := c.n.Indexer.BestHits()
	ch <- prometheus.MustNewConstMetric(c.indexBest, prometheus.CounterValue, float64(used), "used")
	ch <- prometheus.MustNewConstMetric(c.indexBest, prometheus.CounterValue, float64(built), "built")
	warmDone, warmYielded, warmed := c.n.Indexer.WarmStats()
	ch <- prometheus.MustNewConstMetric(c.indexBest, prometheus.CounterValue, float64(warmed), "warmed")
	ch <- prometheus.MustNewConstMetric(c.indexWarms, prometheus.CounterValue, float64(warmDone), "done")
	ch <- prometheus.MustNewConstMetric(c.indexWarms, prometheus.CounterValue, float64(warmYielded), "yielded")
	warming := 0.0
	if c.n.Indexer.Warming() {
		warming = 1
	}
	gauge(c.indexWarming, warming)
	text, names := c.n.Index.Segments()
	gauge(c.indexSegments, float64(text), "text")
	gauge(c.indexSegments, float64(names), "names")
	merged, yielded := c.n.Indexer.MergeStats()
	merging := 0.0
	if c.n.Indexer.Merging() {
		merging = 1
	}
	gauge(c.indexMerging, merging)
	ch <- prometheus.MustNewConstMetric(c.indexMerges, prometheus.CounterValue, float64(merged), "merged")
	ch <- prometheus.MustNewConstMetric(c.indexMerges, prometheus.CounterValue, float64(yielded), "yielded")
	c.collectRaft(ch)
	if all, err := c.n.DB.AllSecrets(); err == nil {
		for site, secs := range all {
			for _, s := range secs {
				gauge(c.certExpiry, float64(s.NotAfter.Unix()), site, s.Alias)
			}
		}
	}
	if c.n.Pipeline == nil {
		return
	}
	running, busy, oldest := c.n.Pipeline.Status()
	r := 0.0
	if running {
		r = 1
	}
	gauge(c.pipeRunning, r)
	l := 0.0
	if c.n.Leading() {
		l = 1
	}
	gauge(c.leading, l)
	gauge(c.pipeBusy, float64(busy))
	gauge(c.pipeOldest, oldest.Seconds())
	es := c.n.Pipeline.EventStats()
	ch <- prometheus.MustNewConstMetric(c.eventsDelivered, prometheus.CounterValue, float64(es.Delivered))
	ch <- prometheus.MustNewConstMetric(c.eventsFailed, prometheus.CounterValue, float64(es.Failed))
	ch <- prometheus.MustNewConstMetric(c.eventsDropped, prometheus.CounterValue, float64(es.Dropped))
	ts := c.n.Pipeline.ThumbnailStats()
	ch <- prometheus.MustNewConstMetric(c.thumbsMade, prometheus.CounterValue, float64(ts.Made))
	ch <- prometheus.MustNewConstMetric(c.thumbsFailed, prometheus.CounterValue, float64(ts.Failed))
	pend := 0.0
	if running {
		pend = float64(es.Pending)
	}
	gauge(c.eventsPending, pend)
	stats, at, counting := c.siteStats()
	if stats != nil {
		gauge(c.statsAge, time.Since(at).Seconds())
	}
	cr := 0.0
	if counting {
		cr = 1
	}
	gauge(c.statsRunning, cr)
	for site, s := range stats {
		gauge(c.docs, float64(s.Documents), site)
		gauge(c.softDeleted, float64(s.SoftDeleted), site)
		gauge(c.contentBytes, float64(s.ContentBytes), site)
		gauge(c.pending, float64(s.DocumentsPending), site)
		for k, n := range s.ActionsByStatus {
			gauge(c.actions, float64(n), site, k[0], k[1])
		}
	}
}

// collectRaft reports a cluster member's Raft state (nothing on a
// single server).
func (c *collector) collectRaft(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	if c.n.raftUnreadable != "" {
		gauge(c.raftUnreadable, 1)
		return
	}
	if c.n.Cluster == nil {
		return
	}
	gauge(c.raftUnreadable, 0)
	st := c.n.Cluster.Status()
	for _, s := range []string{"Leader", "Follower", "Candidate", "Shutdown"} {
		v := 0.0
		if st.State == s {
			v = 1
		}
		gauge(c.raftState, v, strings.ToLower(s))
	}
	gauge(c.raftTerm, float64(st.Term))
	gauge(c.raftLastIndex, float64(st.LastLogIndex))
	gauge(c.raftCommit, float64(st.CommitIndex))
	gauge(c.raftApplied, float64(st.AppliedIndex))
	voters := 0
	for _, s := range st.Servers {
		if s.Voter {
			voters++
		}
	}
	gauge(c.raftPeers, float64(len(st.Servers)))
	gauge(c.raftVoters, float64(voters))
	if !st.LastSnapshotAt.IsZero() {
		gauge(c.raftSnapAge, time.Since(st.LastSnapshotAt).Seconds())
		gauge(c.raftSnapIndex, float64(st.LastSnapshotIndex))
	}
	ch <- prometheus.MustNewConstMetric(c.raftLeaderChanges, prometheus.CounterValue, float64(st.LeaderChanges))
	known, halted := 0.0, 0.0
	if st.LeaderID != "" {
		known = 1
	}
	if st.Halted != "" {
		halted = 1
	}
	gauge(c.raftLeaderKnown, known)
	gauge(c.raftHalted, halted)
	contact := 0.0
	if st.State != "Leader" && !st.LastContact.IsZero() {
		contact = time.Since(st.LastContact).Seconds()
	}
	gauge(c.raftContact, contact)
	diverged := 0.0
	if st.Diverged != "" {
		diverged = 1
	}
	gauge(c.replicaDiverged, diverged)
	divergent, verified := 0.0, 0.0
	// The leader's own verifications only: every member shows the latest
	// report in its status, but one member (the one that made it)
	// counts the divergent members, so an alert fires once.
	if v := c.n.Cluster.LastVerifyReport(); v != nil {
		divergent, verified = float64(len(v.Divergent)), float64(v.Index)
		if v.Undecided {
			divergent = -1
		}
	}
	gauge(c.divergentMembers, divergent)
	gauge(c.verifiedIndex, verified)
}

// siteStats returns the per-site counts and when they were taken (nil
// before the first count has ended), starting a recount when they are
// stale and none runs (statsMaxAge, statsWait, statsDuty), and whether a
// recount runs.
func (c *collector) siteStats() (stats map[string]*storage.SiteStats, at time.Time, running bool) {
	c.mu.Lock()
	var started chan struct{}
	if c.counting == nil && c.ctx.Err() == nil && (c.stats == nil ||
		time.Since(c.at) > max(statsMaxAge, statsDuty*c.took)) {
		started = make(chan struct{})
		c.counting = started
		c.wg.Add(1)
		go c.recount(started)
	}
	c.mu.Unlock()
	if started != nil {
		t := time.NewTimer(statsWait)
		select {
		case <-started:
		case <-t.C:
		}
		t.Stop()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats, c.at, c.counting != nil
}

// recount counts the documents and actions of every site, then closes
// done.
func (c *collector) recount(done chan struct{}) {
	defer c.wg.Done()
	if testStatsHold != nil {
		select {
		case <-testStatsHold:
		case <-c.ctx.Done():
		}
	}
	began := time.Now()
	var st map[string]*storage.SiteStats
	var err error
	guard.Do(c.n.cfg.Logger, guard.Metrics, func() { st, err = c.n.DB.Stats(c.ctx) })
	c.mu.Lock()
	defer c.mu.Unlock()
	if st != nil && err == nil {
		c.stats, c.at, c.took = st, began, time.Since(began)
	} else if c.ctx.Err() == nil {
		c.n.cfg.Logger.Warn("metrics: count documents", "err", err)
	}
	c.counting = nil
	close(done)
}

// close stops a recount under way and waits for it (before the store
// closes).
func (c *collector) close() {
	c.mu.Lock()
	c.cancel() // under mu: siteStats starts no recount after this
	c.mu.Unlock()
	c.wg.Wait()
}

func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			if fi, err := e.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// newProposeHistogram is the histogram of a cluster member's Propose
// times: from the leader's write gate through Raft's commit on a majority
// to the applier's answer (quire_raft_commit_seconds; observed on the
// leader, where commands are proposed).
func newProposeHistogram() prometheus.Histogram {
	return prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "quire_raft_commit_seconds",
		Help:    "Time a command proposed on this member (the leader) took to commit on a majority and apply here.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	})
}

// newRegistry holds the node's metrics: its own, the HTTP server's, Go's
// runtime and the process's.
func newRegistry(n *Node) (*prometheus.Registry, *collector) {
	reg := prometheus.NewRegistry()
	c := newCollector(n)
	reg.MustRegister(c, guard.Collector(), collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if n.proposeSeconds != nil {
		reg.MustRegister(n.proposeSeconds)
	}
	return reg, c
}
