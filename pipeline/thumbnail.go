package pipeline

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"quire/guard"
	"quire/pipeline/convert"
	"quire/pipeline/engine"
	"quire/storage"
)

// First-page thumbnails (issue 47). A document's thumbnail is an artifact
// of artifactCategory THUMBNAIL: a PNG of at most convert.ThumbnailSize pixels a
// side of the first page (a PDF, through pdftoppm), of the image (PNG,
// JPEG, GIF, TIFF, decoded here), or of an office file's PDF rendition
// (an artifact of category RENDITION, which CONVERT makes). The store
// records a pending thumbnail in the transaction that gives a document
// new content or a rendition (storage/thumbnails.go); where the pipeline
// runs (a cluster's leader), thumbnailLoop takes the records one at a
// time, renders, and keeps the result with OpSetThumbnail, which replaces
// the document's old thumbnail in the same transaction. Listings only
// name what exists (the document's ThumbnailID): they never render.

// ThumbnailCategory is the artifactCategory of a thumbnail.
const ThumbnailCategory = storage.ThumbnailCategory

const (
	// thumbnailMaxBytes: larger content gets no thumbnail (it would be
	// copied to the scratch dir first).
	thumbnailMaxBytes = 256 << 20
	// thumbnailBatch is how many pending records one pass reads.
	thumbnailBatch = 64
	// thumbnailTimeout bounds one thumbnail's work.
	thumbnailTimeout = time.Minute
	// thumbnailWalkScan is how many documents one step of the walk for
	// documents without a thumbnail reads (storage/thumbnailwalk.go).
	thumbnailWalkScan = 512
	// thumbnailWalkPause is the pause between two steps of the walk.
	thumbnailWalkPause = 50 * time.Millisecond
)

// thumbnails counts the thumbnails made (metrics, and the tests' proof
// that listings make none).
type thumbnails struct {
	wake         chan struct{}
	made, failed atomic.Uint64
	// walked: the walk for documents without a thumbnail has ended.
	walked atomic.Bool
}

// ThumbnailStats counts thumbnails since the process started (metrics
// quire_thumbnails_*).
type ThumbnailStats struct{ Made, Failed uint64 }

// ThumbnailStats reports the thumbnail counters.
func (p *Pipeline) ThumbnailStats() ThumbnailStats {
	return ThumbnailStats{Made: p.thumbs.made.Load(), Failed: p.thumbs.failed.Load()}
}

// onThumbnailCommit wakes thumbnailLoop when a command changed a document
// (it may have asked for a thumbnail).
func (p *Pipeline) onThumbnailCommit(_ *storage.Command, res storage.Result) {
	if len(res.Touched) > 0 {
		select {
		case p.thumbs.wake <- struct{}{}:
		default:
		}
	}
}

// thumbnailLoop makes the pending thumbnails, then waits for a commit
// that may have asked for more, until the pipeline stops. A pass that
// could record nothing (a full disk) waits RetryBase before the next.
// With none pending, it takes a step of the walk for documents of an
// earlier store without a thumbnail (walkThumbnails), until that ends:
// the walk yields to every thumbnail asked for meanwhile.
func (p *Pipeline) thumbnailLoop(ctx context.Context, stopping <-chan struct{}) {
	defer p.wg.Done()
	wait := func(d time.Duration) bool {
		timer := time.NewTimer(d)
		defer timer.Stop()
		select {
		case <-stopping:
			return false
		case <-p.thumbs.wake:
		case <-timer.C:
		}
		return true
	}
	for {
		list, err := p.db.PendingThumbnails(thumbnailBatch)
		if err != nil {
			p.log.Warn("pending thumbnails not read", "err", err)
		}
		done := 0
		for _, r := range list {
			select {
			case <-stopping:
				return
			default:
			}
			ok := false
			guard.Do(p.log, guard.Pipeline, func() { ok = p.makeThumbnail(ctx, r) })
			if ok {
				done++
			}
		}
		next := time.Hour
		switch {
		case err != nil || (len(list) > 0 && done == 0):
			next = p.cfg.RetryBase
		case len(list) > 0:
			next = 0
		case !p.thumbs.walked.Load():
			next = p.walkThumbnails(ctx)
		}
		if next == 0 {
			select {
			case <-stopping:
				return
			default:
			}
			continue
		}
		if !wait(next) {
			return
		}
	}
}

// walkThumbnails takes one step of the walk for documents without a
// thumbnail (storage.ThumbnailWalk, OpQueueThumbnails, which names an
// earlier thumbnail of a document's content or records a pending one)
// and returns how long to wait before the next pass: a short pause while
// the walk goes on, RetryBase after a failure.
func (p *Pipeline) walkThumbnails(ctx context.Context) time.Duration {
	site, step, err := p.db.ThumbnailWalk(thumbnailWalkScan, storage.MaxQueueThumbnails)
	if err == nil && step == nil {
		p.thumbs.walked.Store(true)
		return time.Hour
	}
	if err == nil {
		var cmd *storage.Command
		if cmd, err = storage.NewCommand(storage.OpQueueThumbnails, site, "system", p.cfg.Now().UTC(), *step); err == nil {
			_, err = p.apply.Apply(ctx, cmd)
		}
	}
	if err != nil {
		if ctx.Err() == nil {
			p.log.Warn("documents without a thumbnail not queued", "site", site, "err", err)
		}
		return p.cfg.RetryBase
	}
	return thumbnailWalkPause
}

// makeThumbnail renders the pending thumbnail r and keeps it
// (OpSetThumbnail; without an artifact when none can be made). It reports
// whether the record was dealt with.
func (p *Pipeline) makeThumbnail(ctx context.Context, r storage.PendingThumbnail) bool {
	log := p.log.With("site", r.SiteID, "document", r.DocumentID)
	img, user, err := p.renderPending(ctx, r)
	if ctx.Err() != nil {
		return false
	}
	if err != nil {
		log.Warn("thumbnail not made", "err", err)
	}
	var art *storage.NewDocument
	if img != nil {
		m, tail, err := storage.WriteContent(ctx, p.apply, bytes.NewReader(img), 0, nil)
		if err != nil {
			log.Warn("thumbnail not stored", "err", err)
			return false
		}
		art = &storage.NewDocument{Document: storage.Document{DocumentID: uuid.NewString(), ContentType: "image/png", UserID: user,
			ArtifactCategory: ThumbnailCategory}, Content: &m, Chunks: tail}
	}
	if p.setThumbnail(ctx, r, user, art) {
		if art != nil {
			p.thumbs.made.Add(1)
		} else if err != nil {
			p.thumbs.failed.Add(1)
		}
		return true
	}
	if art == nil {
		return false
	}
	// The store refused the artifact (the site's limits, say): the
	// record goes without one.
	p.thumbs.failed.Add(1)
	return p.setThumbnail(ctx, r, user, nil)
}

// setThumbnail applies OpSetThumbnail and reports whether it was applied.
func (p *Pipeline) setThumbnail(ctx context.Context, r storage.PendingThumbnail, user string, art *storage.NewDocument) bool {
	cmd, err := storage.NewCommand(storage.OpSetThumbnail, r.SiteID, user, p.cfg.Now().UTC(), storage.SetThumbnail{Pending: r, Artifact: art})
	if err == nil {
		_, err = p.apply.Apply(ctx, cmd)
	}
	if err != nil && ctx.Err() == nil {
		p.log.Warn("thumbnail not recorded", "site", r.SiteID, "document", r.DocumentID, "err", err)
	}
	return err == nil
}

// renderPending returns the PNG thumbnail r asks for and the document's
// owner, or no image when none is to be made (the document is gone or has
// other content: the store then leaves things as they are; or nothing of
// it can be shown).
func (p *Pipeline) renderPending(ctx context.Context, r storage.PendingThumbnail) ([]byte, string, error) {
	ctx, cancel := context.WithTimeout(ctx, thumbnailTimeout)
	defer cancel()
	d, err := p.db.GetDocument(r.SiteID, r.DocumentID)
	if err != nil || d.DeletedDate != nil || !d.HasContent || d.ContentSHA256 != r.ContentSHA256 {
		if errors.Is(err, storage.ErrNotFound) {
			err = nil
		}
		return nil, "", err
	}
	src := d
	if r.Rendition != "" {
		if src, err = p.db.GetDocument(r.SiteID, r.Rendition); err != nil || src.ArtifactOf != d.DocumentID ||
			src.ContentType != "application/pdf" || !src.HasContent {
			if errors.Is(err, storage.ErrNotFound) {
				err = nil
			}
			return nil, d.UserID, err
		}
	} else if !storage.Thumbnailable(d.ContentType) {
		return nil, d.UserID, nil
	}
	if src.ContentLength > thumbnailMaxBytes {
		return nil, d.UserID, nil
	}
	dir, err := os.MkdirTemp(p.cfg.TempDir, "thumbnail-")
	if err != nil {
		return nil, d.UserID, err
	}
	defer os.RemoveAll(dir)
	img, err := p.renderThumbnail(ctx, r.SiteID, src, dir)
	return img, d.UserID, err
}

// renderThumbnail returns the PNG thumbnail of src's content.
func (p *Pipeline) renderThumbnail(ctx context.Context, site string, src *storage.Document, dir string) ([]byte, error) {
	rd, _, err := p.db.OpenContent(site, src.DocumentID)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	if src.ContentType != "application/pdf" {
		return convert.Thumbnail(io.LimitReader(rd, thumbnailMaxBytes))
	}
	in := filepath.Join(dir, "in.pdf")
	f, err := os.Create(in)
	if err != nil {
		return nil, err
	}
	_, err = io.Copy(f, io.LimitReader(rd, thumbnailMaxBytes))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	prog, err := engine.Find(p.cfg.Engines.Pdftoppm, "pdftoppm", "poppler-utils")
	if err != nil {
		return nil, err
	}
	return convert.PDFThumbnail(ctx, dir, prog, in)
}
