// Package pipeline runs document actions (SERVICE-SPEC.md §2.5): a bounded
// pool of workers takes documents that have an action to run, runs the
// action's engine and records the outcome through storage's Apply, in the
// same transaction as everything the action changes.
//
// The queue is storage's: a document with a runnable action has an aq/ key,
// kept in step with its actions by every write. So a restart loses nothing,
// an action found RUNNING at start (the process stopped under it) runs
// again, and an outcome is recorded at most once (OpFinishAction refuses an
// action that is no longer RUNNING). Actions of one document run one after
// the other in order; a FAILED action stops its chain until it is retried.
//
// What an engine hands off that needs no store (reading scans, converting
// content, mail, LLM, clamd and webhook clients, running external
// programs) and the PDF work the server asks for are in packages below
// this one (DESIGN.md, "Packages").
package pipeline

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"quire/guard"
	"quire/outbound"
	"quire/pipeline/engine"
	"quire/pipeline/ocr"
	"quire/storage"
)

// Config configures the pipeline.
type Config struct {
	// Workers is the number of actions run at once (default 4).
	Workers int
	// RetryBase is the wait before the first retry of an action whose
	// engine failed with a transient error; it doubles per attempt
	// (default 10 s). It is also the wait after the store refused to
	// record an action (a full disk).
	RetryBase time.Duration
	// ActionTimeout bounds one run of an engine (default 15 min).
	ActionTimeout time.Duration
	// TempDir holds engines' scratch files (default os.TempDir()).
	TempDir string
	// OCRMaxPages is the most pages of a PDF one OCR action renders
	// (default 500).
	OCRMaxPages int
	// OCRPageTimeout is how long OCR may spend on one page; a page not
	// recognized by then is left without text and named in the action's
	// message (default 2 min).
	OCRPageTimeout time.Duration
	// Engines configures the external engines.
	Engines Engines
	// Outbound is the policy for destinations users chose: WEBHOOK urls,
	// a site's SMTP host and LLM url (nil: the default policy).
	Outbound *outbound.Policy
	// Describe renders a document as the API does (webhook bodies).
	Describe func(*storage.Document) map[string]any
	// DownloadURL returns a signed download URL of a document's content.
	DownloadURL func(site, doc string, valid time.Duration) string
	Logger      *slog.Logger
	Now         func() time.Time
}

// Pipeline runs document actions.
type Pipeline struct {
	db    *storage.DB
	apply storage.Applier
	cfg   Config
	log   *slog.Logger
	// userHTTP and userLLM call destinations users chose, through the
	// outbound policy (webhooks; a site's own LLM endpoint, which gets no
	// overall timeout: local models can take minutes, the action timeout
	// bounds it).
	userHTTP, userLLM *http.Client

	mu      sync.Mutex
	due     dueHeap
	queued  map[storage.DocRef]time.Time // the live entry of each document in due
	running map[storage.DocRef]bool
	// again holds documents that were queued while a worker had them,
	// with the time to look at them again.
	again map[storage.DocRef]time.Time
	// unrecorded holds outcomes the store refused to record (a full
	// disk): they are recorded as they are once it takes writes again,
	// without running the engine or counting an attempt again. A restart
	// loses them; the action, still RUNNING, then runs again.
	unrecorded map[storage.DocRef]unrecorded
	wake       chan struct{}
	// evWake wakes the event delivery loop (events.go); evc counts.
	evWake chan struct{}
	evc    eventCounters

	ctx      context.Context // cancelled when running actions must stop
	cancel   context.CancelFunc
	stopping chan struct{} // closed when workers must take no more work
	wg       sync.WaitGroup
	// ocr reads scans (OCR actions), at most max(cores, workers) pages
	// at once across the pipeline.
	ocr *ocr.Engine
	// bgSlots bounds the background work (OCR renditions) done at once,
	// counted by bg.
	bgSlots chan struct{}
	bg      sync.WaitGroup
	// started: workers run (Start to Stop); accepting: commits are queued
	// (from the start of Start to Stop); closed: Close was called.
	started, accepting, closed bool
	// thumbs: the first-page thumbnails' loop (thumbnail.go).
	thumbs thumbnails
}

// New builds a pipeline on db; commands go through apply (db itself, or a
// cluster node). Call Start to run it.
func New(db *storage.DB, apply storage.Applier, cfg Config) *Pipeline {
	if cfg.Workers <= 0 {
		cfg.Workers = 4
	}
	if cfg.RetryBase <= 0 {
		cfg.RetryBase = 10 * time.Second
	}
	if cfg.ActionTimeout <= 0 {
		cfg.ActionTimeout = 15 * time.Minute
	}
	if cfg.TempDir == "" {
		cfg.TempDir = os.TempDir()
	}
	// Engines run with their scratch directory as working directory, so
	// every path they are given must be absolute (engine.Stream also makes
	// them so).
	if abs, err := filepath.Abs(cfg.TempDir); err == nil {
		cfg.TempDir = abs
	}
	if cfg.OCRMaxPages <= 0 {
		cfg.OCRMaxPages = 500
	}
	if cfg.OCRPageTimeout <= 0 {
		cfg.OCRPageTimeout = 2 * time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Engines.defaults()
	ctx, cancel := context.WithCancel(context.Background())
	p := &Pipeline{db: db, apply: apply, cfg: cfg, log: cfg.Logger.With("component", "pipeline"),
		userHTTP: cfg.Outbound.Client(30 * time.Second), userLLM: cfg.Outbound.Client(0),
		queued: map[storage.DocRef]time.Time{}, running: map[storage.DocRef]bool{}, again: map[storage.DocRef]time.Time{},
		unrecorded: map[storage.DocRef]unrecorded{},
		wake:       make(chan struct{}, 1), evWake: make(chan struct{}, 1), ctx: ctx, cancel: cancel, stopping: make(chan struct{}),
		bgSlots: make(chan struct{}, ocrBackground)}
	p.ocr = ocr.New(ocr.Config{Tesseract: cfg.Engines.Tesseract, Pdftotext: cfg.Engines.Pdftotext, Pdftoppm: cfg.Engines.Pdftoppm,
		Ocrmypdf: cfg.Engines.Ocrmypdf, MaxPages: cfg.OCRMaxPages, PageTimeout: cfg.OCRPageTimeout, Slots: max(runtime.NumCPU(), cfg.Workers)})
	p.thumbs.wake = make(chan struct{}, 1)
	db.OnCommit(p.onCommit)
	db.OnCommit(p.onEventCommit)
	db.OnCommit(p.onThumbnailCommit)
	return p
}

// Start queues every document with an action to run and starts the
// workers. A stopped pipeline can be started again (a cluster node runs
// it while it leads): it then reads the queue afresh, and an action that
// was RUNNING when it stopped runs again. Start after Close, or on a
// running pipeline, does nothing.
func (p *Pipeline) Start() error {
	p.mu.Lock()
	if p.started || p.closed {
		p.mu.Unlock()
		return nil
	}
	// Commits are queued from now on (onCommit), before the queue is
	// read: nothing committed in between is missed.
	p.accepting = true
	p.mu.Unlock()
	if err := p.db.ActionQueue(func(q storage.QueuedDoc) error {
		p.schedule(q.DocRef, q.At)
		return nil
	}); err != nil {
		p.mu.Lock()
		p.accepting = false
		p.resetLocked()
		p.mu.Unlock()
		return fmt.Errorf("pipeline: read queue: %w", err)
	}
	p.mu.Lock()
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.stopping = make(chan struct{})
	p.started = true
	p.mu.Unlock()
	for range p.cfg.Workers {
		p.wg.Add(1)
		go p.worker()
	}
	p.resumeRenditions() // renditions.go
	p.wg.Add(1)
	go p.eventLoop(p.ctx, p.stopping)
	p.wg.Add(1)
	go p.thumbnailLoop(p.ctx, p.stopping) // thumbnail.go
	return nil
}

// Stop stops taking new actions, lets running ones finish until ctx ends,
// then cancels them (a ctx that is done already cancels them at once). A
// cancelled action stays RUNNING and runs again at the next Start, here
// or on another node: actions run at least once. Start may follow;
// Start, Stop and Close are not called concurrently.
func (p *Pipeline) Stop(ctx context.Context) error {
	p.mu.Lock()
	if !p.started {
		p.accepting = false
		p.resetLocked()
		p.mu.Unlock()
		return nil
	}
	close(p.stopping)
	p.mu.Unlock()
	done := make(chan struct{})
	go func() { p.wg.Wait(); p.bg.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
		p.cancel()
		<-done
	}
	p.cancel()
	p.mu.Lock()
	p.started, p.accepting = false, false
	p.resetLocked()
	p.mu.Unlock()
	return err
}

// resetLocked forgets the in-memory queue: the next Start reads the
// store's (mu held, no worker running).
func (p *Pipeline) resetLocked() {
	p.due = nil
	p.queued = map[storage.DocRef]time.Time{}
	p.running = map[storage.DocRef]bool{}
	p.again = map[storage.DocRef]time.Time{}
	for _, u := range p.unrecorded {
		u.after.discardWork()
	}
	p.unrecorded = map[storage.DocRef]unrecorded{}
}

// Close stops the pipeline for good (see Stop).
func (p *Pipeline) Close(ctx context.Context) error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	return p.Stop(ctx)
}

// Status reports whether the workers run, how many documents are queued
// or running, and how long the most overdue queued one has waited (for
// /readyz and metrics).
func (p *Pipeline) Status() (running bool, busy int, oldest time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started {
		select {
		case <-p.stopping:
		default:
			running = true
		}
	}
	now := p.cfg.Now()
	for _, at := range p.queued {
		if d := now.Sub(at); d > oldest {
			oldest = d
		}
	}
	return running, len(p.queued) + len(p.running), oldest
}

func (p *Pipeline) onCommit(c *storage.Command, res storage.Result) {
	if c.Op == storage.OpStartAction {
		// Starting an action keeps its document queued (RUNNING is
		// runnable after a crash); the worker that started it is on it.
		return
	}
	if len(res.Queued) == 0 {
		return
	}
	p.mu.Lock()
	accepting := p.accepting
	p.mu.Unlock()
	if !accepting {
		return // not running here (a follower): Start reads the queue
	}
	for _, q := range res.Queued {
		p.schedule(q.DocRef, q.At)
	}
}

// schedule queues r to be looked at from at.
func (p *Pipeline) schedule(r storage.DocRef, at time.Time) {
	p.mu.Lock()
	if p.running[r] {
		if cur, ok := p.again[r]; !ok || at.Before(cur) {
			p.again[r] = at
		}
	} else {
		p.push(r, at)
	}
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// take waits for a document that is due and not running, and marks it
// running. It returns false when the pipeline stops.
func (p *Pipeline) take() (storage.DocRef, bool) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		p.mu.Lock()
		r, ok, wait := p.pick()
		p.mu.Unlock()
		if ok {
			// Pass the wake-up on: more documents may be due.
			select {
			case p.wake <- struct{}{}:
			default:
			}
			return r, true
		}
		timer.Reset(wait)
		select {
		case <-p.stopping:
			return storage.DocRef{}, false
		case <-p.wake:
		case <-timer.C:
		}
	}
}

// tryTake is take without waiting: the most overdue document, if one is
// due now and the pipeline is not stopping.
func (p *Pipeline) tryTake() (storage.DocRef, bool) {
	select {
	case <-p.stopping:
		return storage.DocRef{}, false
	default:
	}
	p.mu.Lock()
	r, ok, _ := p.pick()
	p.mu.Unlock()
	return r, ok
}

// pick takes the most overdue document that is due and not running and
// marks it running, or says how long until the next one is due (mu held).
func (p *Pipeline) pick() (storage.DocRef, bool, time.Duration) {
	for len(p.due) > 0 {
		e := p.due[0]
		if at, ok := p.queued[e.ref]; !ok || !at.Equal(e.at) {
			heap.Pop(&p.due) // superseded by an earlier entry
			continue
		}
		if p.running[e.ref] {
			delete(p.queued, e.ref)
			heap.Pop(&p.due)
			if cur, ok := p.again[e.ref]; !ok || e.at.Before(cur) {
				p.again[e.ref] = e.at
			}
			continue
		}
		if d := e.at.Sub(p.cfg.Now()); d > 0 {
			return storage.DocRef{}, false, d
		}
		heap.Pop(&p.due)
		delete(p.queued, e.ref)
		p.running[e.ref] = true
		return e.ref, true, 0
	}
	return storage.DocRef{}, false, time.Hour
}

// push queues r from at unless it is queued from earlier already (mu held).
func (p *Pipeline) push(r storage.DocRef, at time.Time) {
	// "Now or earlier" becomes now: documents then run in the order they
	// were queued, and Status can tell how long one has waited.
	if now := p.cfg.Now(); at.Before(now) {
		at = now
	}
	if cur, ok := p.queued[r]; ok && !at.Before(cur) {
		return
	}
	p.queued[r] = at
	heap.Push(&p.due, dueEntry{r, at})
}

func (p *Pipeline) release(r storage.DocRef) {
	p.mu.Lock()
	delete(p.running, r)
	at, ok := p.again[r]
	delete(p.again, r)
	if ok {
		p.push(r, at)
	}
	p.mu.Unlock()
	if ok {
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
}

// carried is the document a worker goes on with: taken while it recorded
// the outcome of its previous action, with the action that outcome's
// transaction started for it (nil: the worker looks at it afresh).
type carried struct {
	ref     storage.DocRef
	started *storage.StartedAction
}

func (p *Pipeline) worker() {
	defer p.wg.Done()
	var cur *carried
	for {
		if cur == nil || cur.started == nil {
			select {
			case <-p.stopping:
				if cur != nil {
					p.release(cur.ref)
				}
				return
			default:
			}
		}
		if cur == nil {
			r, ok := p.take()
			if !ok {
				return
			}
			cur = &carried{ref: r}
		}
		r, started := cur.ref, cur.started
		var next *carried
		// A panic outside the engine (run recovers the engine's own)
		// fails the action it left RUNNING, and the worker goes on (with
		// the document it took meanwhile, looked at afresh).
		if guard.Do(p.log, guard.Pipeline, func() { p.runDoc(r, started, &next) }, "site", r.Site, "document", r.ID) {
			guard.Do(p.log, guard.Pipeline, func() { p.failRunning(r) }, "site", r.Site, "document", r.ID)
			if next != nil {
				next.started = nil
			}
		}
		if next == nil || next.ref != r {
			p.release(r)
		}
		cur = next
	}
}

// failRunning records the RUNNING action of r as FAILED after a panic
// interrupted its worker, so it is neither lost nor stuck until a restart.
func (p *Pipeline) failRunning(r storage.DocRef) {
	if p.ctx.Err() != nil {
		return // shutting down: a RUNNING action runs again at the next start
	}
	acts, err := p.db.GetActions(r.Site, r.ID)
	if err != nil {
		return
	}
	for _, a := range acts {
		if a.Status != storage.ActionRunning {
			continue
		}
		fail := storage.FinishAction{ActionRef: storage.ActionRef{DocumentID: r.ID, Seq: a.Seq, Retry: a.Retry},
			Status: storage.ActionFailed, Message: fmt.Sprintf("internal error running %s", a.Type)}
		if _, err := p.apply.Apply(p.ctx, storage.MustCommand(storage.OpFinishAction, r.Site, a.UserID, p.cfg.Now(), fail)); err != nil &&
			!errors.Is(err, storage.ErrActionChanged) {
			p.log.Warn("record action failure", "site", r.Site, "document", r.ID, "err", err)
		}
	}
}

// runDoc runs the first action of r that is not done, if it may run now:
// the one started already if started is given, else it starts it. *next is
// set to the document the worker goes on with, if it took one.
func (p *Pipeline) runDoc(r storage.DocRef, started *storage.StartedAction, next **carried) {
	if started == nil {
		p.runNext(r, next)
		return
	}
	if started.NotBefore != nil {
		p.mu.Lock()
		p.again[r] = *started.NotBefore
		p.mu.Unlock()
		return
	}
	if started.Action == nil || started.Document == nil || started.Action.Status != storage.ActionRunning {
		return
	}
	p.runJob(r, &Job{p: p, Site: r.Site, Doc: started.Document, Action: started.Action, Actions: started.Actions, content: started.Content}, next)
}

// runNext runs the first action of r that is not done, if it may run now.
func (p *Pipeline) runNext(r storage.DocRef, after **carried) {
	doc, acts, err := p.db.ActionState(r.Site, r.ID)
	if errors.Is(err, storage.ErrNotFound) {
		return // deleted
	}
	if err != nil {
		p.log.Warn("read actions", "site", r.Site, "document", r.ID, "err", err)
		return
	}
	var next *storage.Action
	for i := range acts {
		if !storage.ActionDone(acts[i].Status) {
			next = &acts[i]
			break
		}
	}
	if next == nil || !storage.ActionRunnable(next.Status) {
		return
	}
	if next.Status == storage.ActionWaitingForRetry && next.NextAttempt != nil && next.NextAttempt.After(p.cfg.Now()) {
		p.mu.Lock()
		p.again[r] = *next.NextAttempt
		p.mu.Unlock()
		return
	}
	ref := storage.ActionRef{DocumentID: r.ID, Seq: next.Seq, Retry: next.Retry}
	p.mu.Lock()
	u, ok := p.unrecorded[r]
	delete(p.unrecorded, r)
	p.mu.Unlock()
	if ok && next.Status == storage.ActionRunning && u.fin.ActionRef == ref {
		p.record(r, u.user, next.Type, u.fin, u.after)
		return
	}
	if ok {
		u.after.discardWork()
	}
	res, err := p.apply.Apply(p.ctx, storage.MustCommand(storage.OpStartAction, r.Site, next.UserID, p.cfg.Now(), ref))
	if p.refused(r, err) {
		return // nothing started, no attempt counted
	}
	if err != nil {
		if !errors.Is(err, storage.ErrActionChanged) && p.ctx.Err() == nil {
			p.log.Warn("start action", "site", r.Site, "document", r.ID, "action", next.Type, "err", err)
		}
		return
	}
	a, _ := res.Value.(*storage.Action)
	if a == nil || a.Status != storage.ActionRunning {
		return
	}
	p.runJob(r, &Job{p: p, Site: r.Site, Doc: doc, Action: a, Actions: acts}, after)
}

// runJob runs a started action and records its outcome; the transaction
// that records it also starts the action of the document the worker
// takes next (chain).
func (p *Pipeline) runJob(r storage.DocRef, job *Job, next **carried) {
	a := job.Action
	out := p.run(job)
	if p.ctx.Err() != nil {
		out.discardWork()
		return // shutting down: the action stays RUNNING and runs again
	}
	ref := storage.ActionRef{DocumentID: r.ID, Seq: a.Seq, Retry: a.Retry}
	fin := storage.FinishAction{ActionRef: ref, Status: out.Status, Message: out.Message, NextAttempt: out.NextAttempt,
		Metadata: out.Metadata, Texts: out.Texts, Reindex: out.Reindex, Results: out.Results, Uncounted: out.Uncounted,
		Rendition: out.rendition}
	for _, c := range out.Then {
		fin.Then = append(fin.Then, *c)
	}
	n, startHere := p.chain(r)
	*next = n
	if startHere && n.ref.Site == r.Site {
		fin.Next = n.ref.ID
	}
	st := p.record(r, a.UserID, a.Type, fin, out)
	switch {
	case n == nil:
	case st != nil:
		n.started = st
	case n.ref == r:
		// Nothing started: r goes back to the queue (after a refused
		// outcome, not before RetryBase).
		*next = nil
	}
}

// chain picks the document this worker goes on with, before it records
// an outcome, so that one transaction records the outcome and starts the
// next action: the most overdue other document, as take would after the
// release of r; if none is due, r itself (its next action, if it has one,
// is then the first due, as after the release). A document with an
// outcome still to record is looked at afresh (runNext records it).
func (p *Pipeline) chain(r storage.DocRef) (*carried, bool) {
	n, ok := p.tryTake()
	if !ok {
		select {
		case <-p.stopping:
			return nil, false
		default:
		}
		return &carried{ref: r}, true
	}
	p.mu.Lock()
	_, pending := p.unrecorded[n]
	p.mu.Unlock()
	return &carried{ref: n}, !pending
}

// unrecorded is an outcome the store refused to record, with the
// engine's outcome whose background work follows its recording.
type unrecorded struct {
	user  string
	fin   storage.FinishAction
	after *Outcome
}

// record applies an action's outcome fin and returns what its transaction
// started for fin.Next (nil when it started nothing). Once fin is
// recorded as it is, after's background work starts; if it is not, the
// work is discarded, or kept with the outcome the store refused.
func (p *Pipeline) record(r storage.DocRef, user, typ string, fin storage.FinishAction, after *Outcome) *storage.StartedAction {
	res, err := p.apply.Apply(p.ctx, storage.MustCommand(storage.OpFinishAction, r.Site, user, p.cfg.Now(), fin))
	if err == nil {
		if after != nil && after.background != nil {
			p.background(after.background)
		}
		st, _ := res.Value.(*storage.StartedAction)
		return st
	}
	if p.refused(r, err) {
		fin.Next = "" // the worker has gone on meanwhile
		p.mu.Lock()
		p.unrecorded[r] = unrecorded{user, fin, after}
		p.mu.Unlock()
		return nil
	}
	if errors.Is(err, storage.ErrActionChanged) || p.ctx.Err() != nil {
		after.discardWork()
		return nil
	}
	if fin.Next != "" {
		// Starting the next document may be what failed (its records
		// unreadable): the outcome is recorded alone, and fails only if
		// it is refused on its own.
		fin.Next = ""
		return p.record(r, user, typ, fin, after)
	}
	after.discardWork()
	// What the action wanted to change was refused (a path or tag that
	// does not validate, a document deleted meanwhile): record it as the
	// action's failure, changing nothing else.
	p.log.Info("action outcome refused", "site", r.Site, "document", r.ID, "action", typ, "err", err)
	fail := storage.FinishAction{ActionRef: fin.ActionRef, Status: storage.ActionFailed, Message: errorMessage(err)}
	if _, err := p.apply.Apply(p.ctx, storage.MustCommand(storage.OpFinishAction, r.Site, user, p.cfg.Now(), fail)); err != nil &&
		!errors.Is(err, storage.ErrActionChanged) && p.ctx.Err() == nil {
		p.log.Warn("record action failure", "site", r.Site, "document", r.ID, "err", err)
	}
	return nil
}

// background runs f off the worker once a slot is free (at most
// ocrBackground at once), with the pipeline's context: Stop waits for it
// as for a running action and cancels it with them. f itself is not
// durable: a stop or a crash before it is done loses it (an outcome the
// store refused keeps its work until it is recorded, in memory only);
// what must survive is recorded with the outcome and made again at the
// next Start (OCR renditions: renditions.go).
func (p *Pipeline) background(f func(context.Context)) {
	ctx := p.ctx
	p.bg.Add(1)
	go func() {
		defer p.bg.Done()
		select {
		case p.bgSlots <- struct{}{}:
			defer func() { <-p.bgSlots }()
		case <-ctx.Done():
		}
		guard.Do(p.log, guard.Pipeline, func() { f(ctx) })
	}()
}

// ocrBackground is how many OCR renditions are built at once.
const ocrBackground = 1

// refused reports whether err is the store refusing writes (a full disk,
// a failed disk) and, if so, looks at r again after RetryBase: an action
// is never FAILED for want of space (r is running: release queues it).
func (p *Pipeline) refused(r storage.DocRef, err error) bool {
	var wr *storage.WriteRefusedError
	if !errors.As(err, &wr) {
		return false
	}
	p.log.Info("action deferred: the store refuses writes", "site", r.Site, "document", r.ID, "reason", wr.Reason)
	at := p.cfg.Now().Add(p.cfg.RetryBase)
	p.mu.Lock()
	if cur, ok := p.again[r]; !ok || at.Before(cur) {
		p.again[r] = at
	}
	p.mu.Unlock()
	return true
}

// run runs job's engine and turns its result or error into an outcome.
func (p *Pipeline) run(job *Job) (out *Outcome) {
	a := job.Action
	eng := engines[a.Type]
	if eng == nil {
		return &Outcome{Status: storage.ActionFailed, Message: fmt.Sprintf("action type '%s' is not supported by this server", a.Type)}
	}
	ctx, cancel := context.WithTimeout(p.ctx, p.cfg.ActionTimeout)
	defer cancel()
	defer func() {
		// An engine bug must not take the server down; it fails the action.
		if r := recover(); r != nil {
			guard.Report(p.log, guard.Pipeline, r, "action", a.Type, "site", job.Site, "document", job.Doc.DocumentID)
			out = &Outcome{Status: storage.ActionFailed, Message: fmt.Sprintf("internal error in %s engine", a.Type)}
		}
	}()
	start := time.Now()
	out, err := eng(ctx, job)
	p.log.Debug("action ran", "action", a.Type, "document", job.Doc.DocumentID, "took", time.Since(start), "err", err)
	if err == nil {
		if out == nil {
			out = &Outcome{}
		}
		if out.Status == "" {
			out.Status = storage.ActionComplete
		}
		return out
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && p.ctx.Err() == nil {
		err = engine.Retryable(fmt.Errorf("%s did not finish within %s", a.Type, p.cfg.ActionTimeout))
	}
	if wr := (*storage.WriteRefusedError)(nil); errors.As(err, &wr) {
		// The engine's own writes (new content) were refused: not the
		// action's fault: it waits and runs again, without using up a
		// retry, never FAILED for space.
		next := p.cfg.Now().Add(spaceRetryDelay(p.cfg))
		return &Outcome{Status: storage.ActionWaitingForRetry, Message: errorMessage(err), NextAttempt: &next, Uncounted: true}
	}
	msg := errorMessage(err)
	if engine.NoSpace(err) {
		// A full disk is no fault of the action: it runs again later
		// without using up a retry, however long the disk stays full.
		next := p.cfg.Now().Add(spaceRetryDelay(p.cfg))
		return &Outcome{Status: storage.ActionWaitingForRetry, Message: msg, NextAttempt: &next, Uncounted: true}
	}
	if !engine.IsRetryable(err) {
		return &Outcome{Status: storage.ActionFailed, Message: msg}
	}
	if a.RetryCount >= a.MaxRetries {
		return &Outcome{Status: storage.ActionMaxRetries, Message: msg}
	}
	next := p.cfg.Now().Add(p.cfg.RetryBase << (a.RetryCount - 1))
	return &Outcome{Status: storage.ActionWaitingForRetry, Message: msg, NextAttempt: &next}
}

// spaceRetryDelay is how long an action waits after a full disk stopped
// it: six times the first retry's wait (a minute by default).
func spaceRetryDelay(cfg Config) time.Duration { return 6 * cfg.RetryBase }

// errorMessage is the message an action records for err: its text, cut
// to a length a client can show.
func errorMessage(err error) string {
	m := err.Error()
	if len(m) > 1000 {
		m = m[:1000] + "…"
	}
	return m
}

type dueEntry struct {
	ref storage.DocRef
	at  time.Time
}

type dueHeap []dueEntry

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h dueHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)        { *h = append(*h, x.(dueEntry)) }
func (h *dueHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
