package index

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"quire/guard"
	"quire/index/memlimit"
	"quire/storage"
)

// The text worker's batching (index/DESIGN.md, "Batching", has the
// measurements that chose these). A batch of hundreds costs Bleve far less
// per document than many small ones (fewer, larger segments to build and
// merge), and the CPU Bleve spends is taken from the writes it follows.
//   - textGather: after the first change of a quiet spell, how long the
//     worker waits for the commits in flight to join its batch. When
//     fewer than lowLoad changes came meanwhile, they are indexed at once.
//   - Otherwise (a load) the worker waits until batchTarget changes are
//     queued or the oldest has waited maxWait, then takes everything
//     queued: under saturation batches grow instead of queueing.
//   - maxBatch, maxBatchText: bounds of one batch, in documents and in
//     bytes of text per Bleve batch (the memory its analysis needs),
//     under a soft memory limit (quire serve); without one (quire
//     reindex, tools) Bleve batches take up to maxBatchTextFree, which
//     costs less CPU when the heap may grow (DESIGN.md, "Memory limit and
//     Bleve batch size").
//   - burstQuiet, burstMax: after a batch that let writes go that the
//     index gate held back, the first changes are no quiet spell: they
//     are those writes, committed over a few group commits. The worker
//     gathers them until none came for burstQuiet (at most burstMax from
//     the first) instead of indexing the first few alone (index/DESIGN.md,
//     "The released burst").
//   - freeIdle, freeAfter: once freeAfter documents were indexed and no
//     change came for freeIdle, the worker returns Bleve's working memory
//     to the system.
const (
	textGather       = 20 * time.Millisecond
	lowLoad          = 16
	batchTarget      = 500
	maxWait          = 300 * time.Millisecond
	maxBatch         = 500
	maxBatchText     = 1 << 20
	maxBatchTextFree = 2 << 20
	burstQuiet       = 25 * time.Millisecond
	burstMax         = 60 * time.Millisecond
	freeAfter        = 1000
	freeIdle         = time.Second
)

// keyStorageVersion is the Bleve internal key holding the storage version
// the index is known to have caught up with.
const keyStorageVersion = "quire.storageVersion"

// Indexer keeps an Index in step with storage, in the background: a
// commit hook queues the documents each command touched, and a worker
// indexes them in batches (Bleve indexes one batch of hundreds far more
// cheaply than hundreds of small ones). Until a document's batch is in,
// it sits in an overlay that prefix searches consult, so a client finds
// by filename or folder what it just wrote; text follows within a second.
type Indexer struct {
	db  *storage.DB
	x   *Index
	log *slog.Logger

	textMu    sync.Mutex
	textQ     []storage.DocRef // documents whose index entries are due
	textSince time.Time        // when the oldest entry of textQ was queued
	textLast  time.Time        // when the newest entry of textQ was queued
	queued    uint64           // queue entries ever added
	processed uint64           // and done
	textWake  chan struct{}

	// ov holds documents changed since their last indexing (overlay.go).
	ovMu    sync.Mutex
	ov      map[storage.DocRef]ovEntry
	ovStale map[storage.DocRef]struct{} // the entries of ov with indexed set
	ovSeq   uint64

	stop chan struct{}
	wg   sync.WaitGroup

	// failed is set when a batch could not be indexed: from then on the
	// checkpoint stays where it was, so the next start indexes that
	// batch's documents again (they count as processed for the queue).
	failed atomic.Bool

	lagMu    sync.Mutex
	textSeen map[storage.DocRef]time.Time // queued, for the lag metric
	// lagQ lists textSeen's entries in the order they were first queued
	// (with stale marks of entries since indexed, dropped once they reach
	// the front), so TextLag reads the oldest in O(1): admission control
	// (server/indexgate.go) asks it for every write.
	lagQ []lagMark
	// hurry is set while writes wait for the index (Hurry): the worker
	// then takes what is queued without waiting for a fuller batch.
	hurry atomic.Bool
	// perDoc is a moving average of the wall time one document of a
	// batch took to index (nanoseconds), for TextBacklog.
	perDoc atomic.Int64
	// progress is closed (and replaced) whenever a batch of changes was
	// indexed, waking those waiting for the lag to fall (TextProgress).
	progress chan struct{}

	// The idle merge (merge.go): mergeIdle of quiet after lastWrite
	// (Unix nanoseconds) starts it, a change cancels it (mergeCancel).
	mergeIdle   time.Duration
	lastWrite   atomic.Int64
	mergeWake   chan struct{}
	mergeMu     sync.Mutex
	mergeCancel context.CancelFunc
	merged      atomic.Uint64
	yielded     atomic.Uint64
	merging     atomic.Bool // an idle merge is under way
	// The warm pass after it (warm.go): pending from the idle merge's
	// start to the pass's end; passes run to the end and yielded.
	warmPending           atomic.Bool
	warmDone, warmYielded atomic.Uint64
}

type lagMark struct {
	ref storage.DocRef
	at  time.Time
}

// NewIndexer wires x to db. Call Start to catch up and run.
func NewIndexer(db *storage.DB, x *Index, log *slog.Logger) *Indexer {
	if log == nil {
		log = slog.Default()
	}
	ix := &Indexer{
		db: db, x: x, log: log.With("component", "index"),
		textWake: make(chan struct{}, 1), ov: map[storage.DocRef]ovEntry{}, ovStale: map[storage.DocRef]struct{}{},
		stop: make(chan struct{}), textSeen: map[storage.DocRef]time.Time{}, progress: make(chan struct{}),
		mergeIdle: DefaultMergeIdle, mergeWake: make(chan struct{}, 1),
	}
	db.OnCommit(ix.onCommit)
	return ix
}

// Start catches the index up with storage (documents changed since the
// version it last recorded: after a crash, or everything for a new index)
// and starts the background work.
func (ix *Indexer) Start(ctx context.Context) error {
	ix.wg.Add(2)
	go ix.textLoop()
	go ix.checkpointLoop()
	if ix.mergeIdle > 0 {
		ix.lastWrite.Store(time.Now().UnixNano())
		ix.wg.Add(1)
		go ix.mergeLoop()
	}
	if old := ix.x.Rebuilt(); old != "" {
		ix.log.Info("index format changed: rebuilding it from storage", "from", old, "to", formatVersion)
	}
	since := ix.x.GetInternal(keyStorageVersion)
	if since == 0 {
		// A new index: the catch-up indexes every document with its
		// site's analyzer of now, so that is the one each site's
		// documents are indexed with.
		if err := ix.recordSiteAnalyzers(); err != nil {
			return err
		}
	}
	if since > 0 && since < ix.db.MaxVersion() {
		if err := ix.dropPurged(ctx); err != nil {
			return err
		}
	}
	// A long catch-up (a rebuilt index, a restored data dir, an upgrade)
	// says how far it got every few seconds; "index caught up" ends it.
	last := time.Now()
	return ix.CatchUp(ctx, since, func(done int) {
		if time.Since(last) >= catchUpLogEvery {
			last = time.Now()
			ix.log.Info("index catching up with storage", "documents", done)
		}
	})
}

// catchUpLogEvery is how often a catch-up at start logs its progress.
const catchUpLogEvery = 5 * time.Second

// dropPurged removes from the index the documents storage no longer
// holds (or holds soft-deleted). The catch-up after a crash walks the
// records written since the checkpoint, and a document purged since then
// has no record left to walk, so without this it would stay in the index
// for good: counted in totals, taking a place in every page of hits.
// Storage keeps no tombstones for this: the walk costs one record read
// per indexed document and only runs when the index was behind.
func (ix *Indexer) dropPurged(ctx context.Context) error {
	var refs []storage.DocRef
	var bids, del []string
	check := func() error {
		ok, err := ix.db.Indexable(refs)
		if err != nil {
			return err
		}
		for i := range ok {
			if !ok[i] {
				del = append(del, bids[i])
			}
		}
		refs, bids = refs[:0], bids[:0]
		return nil
	}
	// No set of ids seen: an id in both indexes is checked twice, which
	// costs less than holding every id of a large index in memory.
	err := ix.x.EachID(func(bid string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		site, id := SplitID(bid)
		refs, bids = append(refs, storage.DocRef{Site: site, ID: id}), append(bids, bid)
		if len(refs) >= 1000 {
			return check()
		}
		return nil
	})
	if err == nil {
		err = check()
	}
	if err != nil || len(del) == 0 {
		return err
	}
	ix.log.Info("index: dropped documents deleted while it was behind", "documents", len(del))
	return ix.x.Put(nil, del)
}

// CatchUp indexes every document changed since the storage version since,
// reporting progress (documents done) when progress is not nil.
func (ix *Indexer) CatchUp(ctx context.Context, since uint64, progress func(done int)) error {
	// Two stages: this goroutine walks storage and reads each batch's
	// documents and text while the next one writes the batch before it
	// into Bleve, so storage reads overlap Bleve's analysis and segment
	// building instead of taking turns with them (quire reindex).
	type loaded struct {
		refs []storage.DocRef
		docs []Doc
		del  []string
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ready := make(chan loaded, 1)
	wrote := make(chan error, 1)
	go func() {
		done := 0
		for b := range ready {
			err := guard.Run(ix.log, guard.Indexer, func() error { return ix.put(b.docs, b.del) })
			ix.overlayMark(b.refs)
			if err != nil {
				cancel()
				for range ready { //nolint:revive // drain so the walk ends
				}
				wrote <- err
				return
			}
			done += len(b.refs)
			if progress != nil {
				progress(done)
			}
		}
		if done > 0 {
			ix.log.Info("index caught up", "documents", done, "since", since)
		}
		wrote <- nil
	}()
	var batch []storage.DocRef
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		// Documents of this batch waiting in the overlay may be in the
		// index from here on (see overlayMark): marked before they are
		// read, and again once written.
		ix.overlayMark(batch)
		docs, del, err := ix.load(batch)
		if err != nil {
			return err
		}
		select {
		case ready <- loaded{refs: batch, docs: docs, del: del}:
		case <-ctx.Done():
			return ctx.Err()
		}
		batch = nil
		return nil
	}
	var wm uint64
	ix.db.Quiesce(func() { wm = ix.db.MaxVersion() })
	err := ix.db.ChangedDocs(since, func(r storage.DocRef) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		batch = append(batch, r)
		if len(batch) >= maxBatch {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	close(ready)
	// The writer's error first: a failed write cancels the walk, whose
	// own error is then only the cancellation.
	if werr := <-wrote; werr != nil {
		return werr
	}
	if err != nil {
		return err
	}
	return ix.x.SetInternal(keyStorageVersion, wm)
}

// Close finishes queued text work (up to a deadline), records how far the
// index got and stops.
func (ix *Indexer) Close() error {
	var err error
	done := make(chan struct{})
	go func() { err = guard.Run(ix.log, guard.Indexer, ix.checkpoint); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		err = errors.New("index: text queue not drained; the next start catches up")
	}
	close(ix.stop)
	ix.mergeMu.Lock()
	if ix.mergeCancel != nil {
		ix.mergeCancel()
	}
	ix.mergeMu.Unlock()
	ix.wg.Wait()
	<-done
	return err
}

func (ix *Indexer) checkpoint() error {
	var wm, upTo uint64
	// In Quiesce every committed command has updated the names index and
	// queued its text work (hooks wait for that), so once the text queue
	// has done everything queued by then, wm is safe to record.
	ix.db.Quiesce(func() {
		wm = ix.db.MaxVersion()
		ix.textMu.Lock()
		upTo = ix.queued
		ix.textMu.Unlock()
	})
	for {
		ix.textMu.Lock()
		done := ix.processed >= upTo
		ix.textMu.Unlock()
		if done {
			break
		}
		if ix.failed.Load() {
			return nil
		}
		select {
		case <-ix.stop:
			return nil // the next start catches up from the last checkpoint
		case <-time.After(20 * time.Millisecond):
		}
	}
	if ix.failed.Load() {
		return nil
	}
	return ix.x.SetInternal(keyStorageVersion, wm)
}

func (ix *Indexer) checkpointLoop() {
	defer ix.wg.Done()
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ix.stop:
			return
		case <-t.C:
			if err := guard.Run(ix.log, guard.Indexer, ix.checkpoint); err != nil {
				ix.log.Warn("index checkpoint", "err", err)
			}
		}
	}
}

// onCommit queues the documents a command touched and puts them in the
// overlay; it runs before the command's caller gets its answer.
func (ix *Indexer) onCommit(c *storage.Command, res storage.Result) {
	if c != nil && c.Op == storage.OpSetSiteConfig {
		// A new main language changes the site's analyzer: its documents
		// are indexed again, in the background (words.go).
		site := c.Site
		go func() {
			err := guard.Run(ix.log, guard.Indexer, func() error { return ix.checkSiteAnalyzer(context.Background(), site) })
			if err != nil {
				ix.log.Error("reindexing a site for its new language failed", "site", site, "err", err)
			}
		}()
	}
	if len(res.Touched) == 0 {
		return
	}
	ix.noteWrite()
	ix.overlayAdd(res.Touched)
	for _, r := range res.Touched {
		ix.queueText(r)
	}
}

// index reads refs from storage and updates both indexes.
func (ix *Indexer) index(refs []storage.DocRef) error {
	docs, del, err := ix.load(refs)
	if err != nil {
		return err
	}
	return ix.put(docs, del)
}

// put writes docs into both indexes and removes the ids in del from them.
// The names index is written while the text index is: its batch is small
// but waits for its own segment's introduction, tens of milliseconds
// under a load that used to come before the text's (index/DESIGN.md,
// "Batching").
func (ix *Indexer) put(docs []Doc, del []string) error {
	ix.noteWrite()
	// A document taken out of the fulltext index (DELETE
	// /documents/{id}/fulltext) keeps its name and folder entries.
	text := make([]Doc, 0, len(docs))
	textDel := slices.Clone(del)
	for _, d := range docs {
		if d.NoText {
			textDel = append(textDel, docID(d.Site, d.ID))
			continue
		}
		text = append(text, d)
	}
	names := make(chan error, 1)
	go func() {
		names <- guard.Run(ix.log, guard.Indexer, func() error { return ix.x.PutNames(docs, del) })
	}()
	// Bleve batches of at most maxBatchText bytes of text (at least one
	// document each): a batch's analysis holds all of its terms at once.
	limit := maxBatchText
	if debug.SetMemoryLimit(-1) == math.MaxInt64 {
		limit = maxBatchTextFree
	}
	err := memlimit.WithHeadroom(func() error {
		for len(text) > 0 || len(textDel) > 0 {
			n, size := 0, 0
			for n < len(text) && (n == 0 || size+len(text[n].Content) <= limit) {
				size += len(text[n].Content)
				n++
			}
			if err := ix.x.PutText(text[:n], textDel); err != nil {
				return err
			}
			text, textDel = text[n:], nil
		}
		return nil
	}, ix.textWaiting)
	return errors.Join(err, <-names)
}

// load reads the documents of refs, with their text, in one storage read
// (see storage.DB.ViewsForIndex); those gone or soft-deleted are returned
// as index ids to delete.
func (ix *Indexer) load(refs []storage.DocRef) ([]Doc, []string, error) {
	seen := make(map[storage.DocRef]bool, len(refs))
	uniq := make([]storage.DocRef, 0, len(refs))
	for _, r := range refs {
		if !seen[r] {
			seen[r] = true
			uniq = append(uniq, r)
		}
	}
	xs, err := ix.db.ViewsForIndex(uniq, Extractable, maxContent)
	if err != nil {
		return nil, nil, err
	}
	var docs []Doc
	var del []string
	langs := map[string]string{} // site → language, read once a batch
	for _, x := range xs {
		if x.View == nil {
			del = append(del, docID(x.Ref.Site, x.Ref.ID))
			continue
		}
		d := toDoc(x.View)
		d.Content = x.Text
		l, ok := langs[d.Site]
		if !ok {
			l = ix.siteLanguage(d.Site)
			langs[d.Site] = l
		}
		d.Language = l
		docs = append(docs, d)
	}
	return docs, del, nil
}

func (ix *Indexer) queueText(r storage.DocRef) {
	ix.lagMu.Lock()
	if _, ok := ix.textSeen[r]; !ok {
		now := time.Now()
		ix.textSeen[r] = now
		ix.lagQ = append(ix.lagQ, lagMark{r, now})
	}
	ix.lagMu.Unlock()
	ix.textMu.Lock()
	now := time.Now()
	if len(ix.textQ) == 0 {
		ix.textSince = now
	}
	ix.textLast = now
	ix.textQ = append(ix.textQ, r)
	ix.queued++
	ix.textMu.Unlock()
	select {
	case ix.textWake <- struct{}{}:
	default:
	}
}

// BestHits is the text index's BestHits.
func (ix *Indexer) BestHits() (used, built uint64) { return ix.x.BestHits() }

// TextLag is the age of the oldest document whose text waits to be indexed.
func (ix *Indexer) TextLag() time.Duration {
	ix.lagMu.Lock()
	defer ix.lagMu.Unlock()
	if len(ix.lagQ) == 0 {
		return 0
	}
	return time.Since(ix.lagQ[0].at)
}

// TextBacklog estimates the work queued for the next batch: the changes
// waiting (not the batch in flight) at the time a document recently took
// to index. It leads TextLag, which grows only as the oldest change ages.
// Admission control bounds it, so the next batch gathers while the
// current one is indexed and a change waits for at most two batches.
func (ix *Indexer) TextBacklog() time.Duration {
	ix.textMu.Lock()
	n := len(ix.textQ)
	ix.textMu.Unlock()
	return time.Duration(n) * time.Duration(ix.perDoc.Load())
}

// textWaiting reports whether changes wait for the next batch.
func (ix *Indexer) textWaiting() bool {
	ix.textMu.Lock()
	defer ix.textMu.Unlock()
	return len(ix.textQ) > 0
}

// perDocBatch is the smallest batch perDoc learns from: a batch also
// pays fixed costs (its read transaction waits for the commits being
// synced, tens to hundreds of milliseconds on a busy disk), and divided
// among a few documents they would make the index look slower than it
// is, hold writes back, keep batches small: a loop down to a fraction of
// what the index can take.
const perDocBatch = 100

// notePerDoc folds a batch of n documents that took d into perDoc.
func (ix *Indexer) notePerDoc(d time.Duration, n int) {
	if n < perDocBatch {
		return
	}
	cur := int64(d) / int64(n)
	if old := ix.perDoc.Load(); old > 0 {
		cur = (3*old + cur) / 4
	}
	ix.perDoc.Store(cur)
}

// Hurry tells the worker that writes wait for the index to catch up
// (server/indexgate.go): it takes what is queued at once instead of
// letting a fuller batch gather. Gathering saves Bleve work only while
// changes keep coming, and the writes held back are those changes.
func (ix *Indexer) Hurry() {
	if ix.hurry.Swap(true) {
		return
	}
	select {
	case ix.textWake <- struct{}{}:
	default:
	}
}

// TextProgress returns a channel closed when the next batch of changes
// has been indexed (TextLag may have fallen then; it only grows before).
// Take it before reading TextLag so no batch goes unnoticed.
func (ix *Indexer) TextProgress() <-chan struct{} {
	ix.lagMu.Lock()
	defer ix.lagMu.Unlock()
	return ix.progress
}

// textIndexed drops refs from the lag bookkeeping and wakes the waiters of
// TextProgress.
func (ix *Indexer) textIndexed(refs []storage.DocRef) {
	ix.lagMu.Lock()
	defer ix.lagMu.Unlock()
	for _, r := range refs {
		delete(ix.textSeen, r)
	}
	// Marks at the front whose entry was indexed (or queued again later,
	// with a newer mark further back) are stale.
	i := 0
	for i < len(ix.lagQ) {
		if at, ok := ix.textSeen[ix.lagQ[i].ref]; ok && at.Equal(ix.lagQ[i].at) {
			break
		}
		i++
	}
	ix.lagQ = ix.lagQ[i:]
	if len(ix.lagQ) == 0 {
		ix.lagQ = nil
	}
	close(ix.progress)
	ix.progress = make(chan struct{})
}

func toDoc(v *storage.DocView) Doc {
	d := v.Document
	out := Doc{Site: d.SiteID, ID: d.DocumentID, Path: d.Path, ContentType: d.ContentType, ContentSHA: d.ContentSHA256, Inserted: d.InsertedDate, NoText: v.NoText}
	for _, t := range v.Tags {
		for _, val := range t.AllValues() {
			out.Tags = append(out.Tags, strings.TrimSpace(t.Key+" "+val))
		}
		if out.TagValues == nil {
			out.TagValues = map[string][]string{}
		}
		out.TagValues[t.Key] = append(out.TagValues[t.Key], t.AllValues()...)
	}
	for _, a := range v.Attributes {
		// Exact values, as the filters of /searchFulltext compare them.
		vals := append([]string(nil), a.Strings...)
		for _, n := range a.Numbers {
			vals = append(vals, storage.FormatNumber(n))
		}
		if a.Boolean != nil {
			vals = append(vals, strconv.FormatBool(*a.Boolean))
		}
		if out.AttrValues == nil {
			out.AttrValues = map[string][]string{}
		}
		out.AttrValues[a.Key] = append(out.AttrValues[a.Key], vals...)
		if a.Key == storage.KeyRelationships {
			continue
		}
		out.Attributes = append(out.Attributes, a.Strings...)
		for _, n := range a.Numbers {
			out.Attributes = append(out.Attributes, strconv.FormatFloat(n, 'f', -1, 64))
		}
	}
	return out
}

// Extractable reports whether Quire reads text straight from content of
// this type (storage.TextContent, which storage's default FULLTEXT also
// decides by). Other types (PDF, images, Office) get their text from the
// FULLTEXT and OCR actions.
func Extractable(contentType string) bool { return storage.TextContent(contentType) }

func (ix *Indexer) textLoop() {
	defer ix.wg.Done()
	burst := 0                // documents indexed since the memory was last returned
	var idle <-chan time.Time // fires once no change came for freeIdle after a burst
	// released: the last batch let writes go that the gate held back
	// (they had called Hurry before it was taken or while it ran); their
	// changes come next.
	released := false
	for {
		select {
		case <-ix.stop:
			return
		case <-idle:
			// After a burst of indexing (an import, a scanner batch),
			// give Bleve's working memory back to the system instead of
			// keeping the peak resident until the next burst. Not while
			// changes keep coming: a forced collection every thousand
			// documents costs the load it serves.
			idle, burst = nil, 0
			debug.FreeOSMemory()
			continue
		case <-ix.textWake:
		}
		// A change after a quiet spell: let the commits in flight join it.
		select {
		case <-ix.stop:
			return
		case <-time.After(textGather):
		}
		for first := true; ; first = false {
			if wait := ix.batchWait(first, released); wait > 0 {
				select {
				case <-ix.stop:
					return
				case <-time.After(wait):
				}
				continue
			}
			// Writes that wait for the index called Hurry: before this
			// batch was taken (it is theirs to wait for) or while it runs.
			waited := ix.hurry.Swap(false)
			ix.textMu.Lock()
			n := min(len(ix.textQ), maxBatch)
			work := append([]storage.DocRef(nil), ix.textQ[:n]...)
			ix.textQ = ix.textQ[n:]
			if len(ix.textQ) == 0 {
				ix.textQ = nil
			} else {
				ix.textSince = time.Now()
			}
			ix.textMu.Unlock()
			if len(work) == 0 {
				break
			}
			seqs := ix.overlaySeqs(work)
			began := time.Now()
			if err := guard.Run(ix.log, guard.Indexer, func() error { return ix.index(work) }); err != nil {
				// The overlay keeps serving these documents; the next
				// start catches the index up from the last checkpoint.
				ix.overlayFailed(seqs)
				ix.failed.Store(true)
				ix.log.Warn("index update failed; the index is caught up at the next start", "documents", len(work), "err", err)
			} else {
				ix.overlayDone(seqs)
				ix.notePerDoc(time.Since(began), len(work))
			}
			// Writes that waited for this batch go on once textIndexed
			// says it is in.
			released = waited || ix.hurry.Load()
			ix.textIndexed(work)
			ix.textMu.Lock()
			ix.processed += uint64(len(work))
			ix.textMu.Unlock()
			burst += len(work)
			select {
			case <-ix.stop:
				return
			default:
			}
		}
		if burst >= freeAfter {
			idle = time.After(freeIdle)
		}
	}
}

// batchWait returns how long the worker should let changes pile up before
// its next batch; 0 means now (also when nothing is queued: the loop then
// ends). first is the first batch since the queue was empty; released
// says the batch before it let writes go that the index gate held back:
// then the queue's first changes are those writes, arriving as their
// commits end, not a quiet spell's.
func (ix *Indexer) batchWait(first, released bool) time.Duration {
	ix.textMu.Lock()
	defer ix.textMu.Unlock()
	n := len(ix.textQ)
	if n == 0 || n >= batchTarget || ix.hurry.Load() {
		return 0
	}
	if first && released {
		// The released burst: gather it while it keeps coming.
		if time.Since(ix.textLast) >= burstQuiet || time.Since(ix.textSince) >= burstMax {
			return 0
		}
		return 5 * time.Millisecond
	}
	if first && n < lowLoad {
		return 0
	}
	wait := maxWait - time.Since(ix.textSince)
	if wait <= 0 {
		return 0
	}
	return min(wait, 20*time.Millisecond)
}

// Text returns the text of a document for the index and for snippets:
// content of a text type read from storage. (The FULLTEXT and OCR actions
// add the text of other types.)
func (ix *Indexer) Text(site, id string) string {
	v, err := ix.db.ViewForIndex(site, id)
	if err != nil || v == nil {
		return ""
	}
	return ix.text(storage.DocRef{Site: site, ID: id}, v)
}

func (ix *Indexer) text(r storage.DocRef, v *storage.DocView) string {
	if v.Text != nil {
		return *v.Text // set through PUT /documents/{id}/fulltext
	}
	if v.Document.ContentSHA256 == "" {
		return ""
	}
	// Plain text is indexed whole from the content; other types (PDF,
	// Office, images) by the text a FULLTEXT action extracted.
	if !Extractable(v.Document.ContentType) {
		if tr, err := ix.db.Text(r.Site, r.ID, storage.TextFulltext); err == nil && tr != nil {
			return tr.Text
		}
		return ""
	}
	t, err := ix.readText(r)
	if err != nil {
		return ""
	}
	return t
}

// readText reads the text of a document's content (up to maxContent).
func (ix *Indexer) readText(r storage.DocRef) (string, error) {
	rd, _, err := ix.db.OpenContent(r.Site, r.ID)
	if err != nil {
		return "", err
	}
	defer rd.Close()
	b, err := io.ReadAll(io.LimitReader(rd, maxContent))
	return string(b), err
}

// SetText indexes text extracted from a document's content (by this
// indexer or by the FULLTEXT and OCR actions), when the document still has
// that content.
func (ix *Indexer) SetText(r storage.DocRef, contentSHA, text string) error {
	v, err := ix.db.ViewForIndex(r.Site, r.ID)
	if err != nil || v == nil || v.Document.ContentSHA256 != contentSHA || v.NoText {
		return err
	}
	d := toDoc(v)
	d.Content = text
	d.Language = ix.siteLanguage(r.Site)
	if v.Text != nil {
		d.Content = *v.Text // the text set through the API wins over an engine's
	}
	// Before and after the write: a change of r committed meanwhile may
	// have found no index entry yet (overlayAdd).
	ix.overlayMark([]storage.DocRef{r})
	err = ix.x.PutText([]Doc{d}, nil)
	ix.overlayMark([]storage.DocRef{r})
	return err
}

// Reindex rebuilds the index of every document, reporting progress.
func (ix *Indexer) Reindex(ctx context.Context, progress func(done int)) error {
	return ix.CatchUp(ctx, 0, progress)
}

// WaitText waits until no text extraction is pending (tests, tools).
func (ix *Indexer) WaitText(ctx context.Context) error {
	for ix.TextLag() > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// Queued is the number of document changes waiting to be indexed.
func (ix *Indexer) Queued() uint64 {
	ix.textMu.Lock()
	defer ix.textMu.Unlock()
	return ix.queued - ix.processed
}

// Pending reports whether a change of the document is not in the search
// index yet (GET /documents/{id}/syncs).
func (ix *Indexer) Pending(r storage.DocRef) bool {
	ix.ovMu.Lock()
	_, ok := ix.ov[r]
	ix.ovMu.Unlock()
	return ok
}
