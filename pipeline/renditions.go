package pipeline

import (
	"context"
	"errors"

	"quire/guard"
	"quire/storage"
)

// Pending renditions (issue 46). The OCR action's outcome records the
// searchable PDF/A it promises (metadata.artifactId) as pending in its own
// transaction (storage/renditions.go); adding the artifact removes the
// record, and so do deleting the document and new content. What a
// stopped, crashed or deposed process did not keep is still pending when
// a pipeline starts (at a cluster node, when it starts leading): Start
// hands the list to resumeRenditions, which reads each document again at
// a low priority (the page texts and page PDFs of the first run were in
// its scratch dir, gone with it) and keeps the PDF/A under the promised
// id, one at a time in the background slots, as the first run would have.

// resumeRenditions builds, in the background, the renditions pending in
// the store when the pipeline starts (called by Start with p.ctx set).
func (p *Pipeline) resumeRenditions() {
	var list []storage.PendingRendition
	if err := p.db.PendingRenditions(func(r storage.PendingRendition) error {
		list = append(list, r)
		return nil
	}); err != nil {
		p.log.Warn("pending OCR renditions not read", "err", err)
		return
	}
	if len(list) == 0 {
		return
	}
	p.log.Info("making pending OCR renditions", "count", len(list))
	ctx := p.ctx
	p.bg.Add(1)
	go func() {
		defer p.bg.Done()
		for _, r := range list {
			select {
			case p.bgSlots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			guard.Do(p.log, guard.Pipeline, func() { p.makePending(ctx, r) })
			<-p.bgSlots
		}
	}()
}

// makePending makes the pending rendition r again and keeps it under its
// artifact id. A document deleted, in the trash or with other content
// since is left alone (the store dropped the record with the change, or
// keeps it until the document is restored).
func (p *Pipeline) makePending(ctx context.Context, r storage.PendingRendition) {
	log := p.log.With("site", r.SiteID, "document", r.DocumentID, "artifact", r.ArtifactID)
	if _, err := p.db.PendingRendition(r.SiteID, r.DocumentID, r.ArtifactID); err != nil {
		if !errors.Is(err, storage.ErrNotFound) {
			log.Warn("pending OCR rendition not read", "err", err)
		}
		return // kept or dropped since the list was read
	}
	doc, err := p.db.GetDocument(r.SiteID, r.DocumentID)
	if err != nil {
		if !errors.Is(err, storage.ErrNotFound) {
			log.Warn("pending OCR rendition: document not read", "err", err)
		}
		return
	}
	if doc.DeletedDate != nil || doc.ContentSHA256 != r.ContentSHA256 {
		return
	}
	// The attempt is counted before it begins, so that one that stops
	// the process counts too; past MaxRenditionAttempts the store gives
	// the rendition up (artifactStatus FAILED) instead.
	user := r.UserID
	if !p.failRendition(ctx, r.SiteID, user, storage.FailRendition{DocumentID: r.DocumentID, ArtifactID: r.ArtifactID, Attempt: true}) {
		log.Warn("pending OCR rendition given up", "attempts", r.Attempts)
		return
	}
	a, err := p.db.GetAction(r.SiteID, r.Action)
	if err != nil {
		// Its action is gone (actions are kept with their document):
		// the site's defaults make it.
		a = &storage.Action{Type: "OCR", UserID: r.UserID}
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.ActionTimeout)
	defer cancel()
	j := &Job{p: p, Site: r.SiteID, Doc: doc, Action: a, pendingArtifact: r.ArtifactID}
	out, err := runOCR(ctx, j)
	switch {
	case err != nil:
		if ctx.Err() == nil {
			log.Warn("pending OCR rendition not made; it is tried again at the next start", "err", err)
			p.failRendition(ctx, r.SiteID, user, storage.FailRendition{DocumentID: r.DocumentID, ArtifactID: r.ArtifactID,
				Message: "the searchable PDF could not be made: " + errorMessage(err)})
		}
	case out.background == nil:
		out.discardWork()
		log.Warn("pending OCR rendition: the document no longer makes one")
		p.failRendition(ctx, r.SiteID, user, storage.FailRendition{DocumentID: r.DocumentID, ArtifactID: r.ArtifactID,
			Message: "the searchable PDF was not made: the document no longer reads as a scan", GiveUp: true})
	default:
		out.background(ctx)
	}
}

// failRendition applies OpFailRendition f and reports whether the
// rendition is still pending. A failure to record it is logged, and the
// rendition is then taken as pending (the next start tries again).
func (p *Pipeline) failRendition(ctx context.Context, site, user string, f storage.FailRendition) bool {
	c, err := storage.NewCommand(storage.OpFailRendition, site, user, p.cfg.Now(), f)
	if err == nil {
		var res storage.Result
		if res, err = p.apply.Apply(ctx, c); err == nil {
			pending, _ := res.Value.(bool)
			return pending
		}
	}
	if ctx.Err() == nil {
		p.log.Warn("OCR rendition state not recorded", "site", site, "document", f.DocumentID, "artifact", f.ArtifactID, "err", err)
	}
	return true
}
