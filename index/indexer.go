package index

import (
	"context"
	"io"
	"log/slog"
	"mime"
	"strconv"
	"strings"
	"sync"
	"time"

	"quire/storage"
)

// keyStorageVersion is the Bleve internal key holding the storage version
// the index is known to have caught up with.
const keyStorageVersion = "quire.storageVersion"

// Indexer keeps an Index in step with storage. Changes are indexed before
// the command that made them returns (hooked on storage's OnCommit), so a
// client finds by filename or folder what it just wrote; extracted text
// follows within a second.
type Indexer struct {
	db  *storage.DB
	x   *Index
	log *slog.Logger

	mu      sync.Mutex
	pending []pendingRefs
	wake    chan struct{}

	textMu   sync.Mutex
	textQ    []storage.DocRef // documents whose text is to be extracted
	textWake chan struct{}

	stop chan struct{}
	wg   sync.WaitGroup

	lagMu    sync.Mutex
	textSeen map[storage.DocRef]time.Time // queued, for the lag metric
}

type pendingRefs struct {
	refs []storage.DocRef
	done chan error
}

// NewIndexer wires x to db. Call Start to catch up and run.
func NewIndexer(db *storage.DB, x *Index, log *slog.Logger) *Indexer {
	if log == nil {
		log = slog.Default()
	}
	ix := &Indexer{
		db: db, x: x, log: log.With("component", "index"),
		wake: make(chan struct{}, 1), textWake: make(chan struct{}, 1),
		stop: make(chan struct{}), textSeen: map[storage.DocRef]time.Time{},
	}
	db.OnCommit(ix.onCommit)
	return ix
}

// Start catches the index up with storage (documents changed since the
// version it last recorded: after a crash, or everything for a new index)
// and starts the background work.
func (ix *Indexer) Start(ctx context.Context) error {
	ix.wg.Add(3)
	go ix.loop()
	go ix.textLoop()
	go ix.checkpointLoop()
	since := ix.x.GetInternal(keyStorageVersion)
	return ix.CatchUp(ctx, since, nil)
}

// CatchUp indexes every document changed since the storage version since,
// reporting progress (documents done) when progress is not nil.
func (ix *Indexer) CatchUp(ctx context.Context, since uint64, progress func(done int)) error {
	var batch []storage.DocRef
	done := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := ix.index(batch, true); err != nil {
			return err
		}
		done += len(batch)
		if progress != nil {
			progress(done)
		}
		batch = batch[:0]
		return nil
	}
	var wm uint64
	ix.db.Quiesce(func() { wm = ix.db.MaxVersion() })
	err := ix.db.ChangedDocs(since, func(r storage.DocRef) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		batch = append(batch, r)
		if len(batch) >= 500 {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return err
	}
	if done > 0 {
		ix.log.Info("index caught up", "documents", done, "since", since)
	}
	return ix.x.SetInternal(keyStorageVersion, wm)
}

// Close stops the indexer after recording how far the index got.
func (ix *Indexer) Close() error {
	close(ix.stop)
	ix.wg.Wait()
	return ix.checkpoint()
}

func (ix *Indexer) checkpoint() error {
	var wm uint64
	// In Quiesce every committed command has been indexed (hooks wait for
	// their batch), so wm is safe to record.
	ix.db.Quiesce(func() { wm = ix.db.MaxVersion() })
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
			if err := ix.checkpoint(); err != nil {
				ix.log.Warn("index checkpoint", "err", err)
			}
		}
	}
}

// onCommit indexes the documents a command touched before the command's
// caller gets its answer: writes from many clients are indexed together in
// one Bleve batch.
func (ix *Indexer) onCommit(_ *storage.Command, res storage.Result) {
	if len(res.Touched) == 0 {
		return
	}
	p := pendingRefs{refs: res.Touched, done: make(chan error, 1)}
	ix.mu.Lock()
	ix.pending = append(ix.pending, p)
	ix.mu.Unlock()
	select {
	case ix.wake <- struct{}{}:
	default:
	}
	select {
	case err := <-p.done:
		if err != nil {
			ix.log.Error("index update failed; the next start catches up", "err", err)
		}
	case <-ix.stop:
	}
}

func (ix *Indexer) loop() {
	defer ix.wg.Done()
	for {
		select {
		case <-ix.stop:
			ix.mu.Lock()
			for _, p := range ix.pending {
				p.done <- nil
			}
			ix.pending = nil
			ix.mu.Unlock()
			return
		case <-ix.wake:
		}
		ix.mu.Lock()
		work := ix.pending
		ix.pending = nil
		ix.mu.Unlock()
		if len(work) == 0 {
			continue
		}
		var refs []storage.DocRef
		for _, p := range work {
			refs = append(refs, p.refs...)
		}
		err := ix.index(refs, false)
		for _, p := range work {
			p.done <- err
		}
	}
}

// index reads refs from storage and updates the index in one batch. With
// inlineText the text of extractable content is read at once (catch-up,
// reindex); otherwise it is queued so writers do not wait for it.
func (ix *Indexer) index(refs []storage.DocRef, inlineText bool) error {
	var docs []Doc
	var del []string
	seen := map[storage.DocRef]bool{}
	for _, r := range refs {
		if seen[r] {
			continue
		}
		seen[r] = true
		v, err := ix.db.ViewForIndex(r.Site, r.ID)
		if err != nil {
			return err
		}
		if v == nil {
			del = append(del, docID(r.Site, r.ID))
			continue
		}
		d := toDoc(v)
		d.KeepContent = true
		if inlineText && d.ContentSHA != "" && Extractable(d.ContentType) {
			if text, err := ix.readText(r); err == nil {
				d.Content, d.KeepContent = text, false
			}
		}
		docs = append(docs, d)
	}
	if err := ix.x.Put(docs, del); err != nil {
		return err
	}
	for _, d := range docs {
		if d.Content == "" && d.ContentSHA != "" && Extractable(d.ContentType) {
			ix.queueText(storage.DocRef{Site: d.Site, ID: d.ID})
		}
	}
	return nil
}

func (ix *Indexer) queueText(r storage.DocRef) {
	ix.lagMu.Lock()
	if _, ok := ix.textSeen[r]; !ok {
		ix.textSeen[r] = time.Now()
	}
	ix.lagMu.Unlock()
	ix.textMu.Lock()
	ix.textQ = append(ix.textQ, r)
	ix.textMu.Unlock()
	select {
	case ix.textWake <- struct{}{}:
	default:
	}
}

// TextLag is the age of the oldest document whose text waits to be indexed.
func (ix *Indexer) TextLag() time.Duration {
	ix.lagMu.Lock()
	defer ix.lagMu.Unlock()
	var oldest time.Time
	for _, t := range ix.textSeen {
		if oldest.IsZero() || t.Before(oldest) {
			oldest = t
		}
	}
	if oldest.IsZero() {
		return 0
	}
	return time.Since(oldest)
}

func toDoc(v *storage.DocView) Doc {
	d := v.Document
	out := Doc{Site: d.SiteID, ID: d.DocumentID, Path: d.Path, ContentType: d.ContentType, ContentSHA: d.ContentSHA256, Inserted: d.InsertedDate}
	for _, t := range v.Tags {
		for _, val := range t.AllValues() {
			out.Tags = append(out.Tags, strings.TrimSpace(t.Key+" "+val))
		}
	}
	for _, a := range v.Attributes {
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
// this type. Other types (PDF, images, Office) get their text from the
// FULLTEXT and OCR actions.
func Extractable(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	switch {
	case strings.HasPrefix(mt, "text/"):
		return true
	case mt == "application/json", mt == "application/xml", mt == "application/x-yaml", mt == "application/yaml":
		return true
	}
	return false
}

func (ix *Indexer) textLoop() {
	defer ix.wg.Done()
	for {
		select {
		case <-ix.stop:
			return
		case <-ix.textWake:
		}
		for {
			ix.textMu.Lock()
			if len(ix.textQ) == 0 {
				ix.textQ = nil
				ix.textMu.Unlock()
				break
			}
			r := ix.textQ[0]
			ix.textQ = ix.textQ[1:]
			ix.textMu.Unlock()
			if err := ix.extract(r); err != nil {
				ix.log.Warn("text extraction", "documentId", r.ID, "err", err)
			}
			ix.lagMu.Lock()
			delete(ix.textSeen, r)
			ix.lagMu.Unlock()
			select {
			case <-ix.stop:
				return
			default:
			}
		}
	}
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

func (ix *Indexer) extract(r storage.DocRef) error {
	rd, doc, err := ix.db.OpenContent(r.Site, r.ID)
	if err != nil {
		return nil // gone or without content meanwhile
	}
	defer rd.Close()
	b, err := io.ReadAll(io.LimitReader(rd, maxContent))
	if err != nil {
		return err
	}
	return ix.SetText(r, doc.ContentSHA256, string(b))
}

// SetText indexes text extracted from a document's content (by this
// indexer or by the FULLTEXT and OCR actions), when the document still has
// that content.
func (ix *Indexer) SetText(r storage.DocRef, contentSHA, text string) error {
	v, err := ix.db.ViewForIndex(r.Site, r.ID)
	if err != nil || v == nil || v.Document.ContentSHA256 != contentSHA {
		return err
	}
	d := toDoc(v)
	d.Content = text
	return ix.x.SetContent(d)
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
