package server

import (
	"context"
	"encoding/json"
	"time"

	"quire/storage"
)

// jobDisposition is the nightly disposition job's name (its marks are
// jr/disposition/<day>).
const jobDisposition = "disposition"

// dispositionBatch is how many documents one OpRetentionDue handles.
const dispositionBatch = 200

// dispositionJob marks ended retentions EXPIRED and carries out the
// DispositionPolicy actions that are due, in every site, as
// OpRetentionDue commands (idempotent: see storage/scheduler.go).
func dispositionJob(db *storage.DB, ap storage.Applier) Job {
	return Job{Name: jobDisposition, Run: func(ctx context.Context, day string, now time.Time) error {
		sites, err := db.Sites()
		if err != nil {
			return err
		}
		for _, site := range sites {
			def := siteDispositionAction(db, site)
			// A batch that changes nothing ends the site (a stale index
			// entry cannot loop); 1,000 batches bound one night's work,
			// the next night goes on.
			for i := 0; i < 1000; i++ {
				if err := ctx.Err(); err != nil {
					return err
				}
				ids, err := db.RetentionDue(site, now, dispositionBatch)
				if err != nil {
					return err
				}
				if len(ids) == 0 {
					break
				}
				cmd, err := storage.NewCommand(storage.OpRetentionDue, site, "disposition", now,
					storage.RetentionDueDocs{DocumentIDs: ids, DefaultAction: def, Day: day})
				if err != nil {
					return err
				}
				res, err := ap.Apply(ctx, cmd)
				if err != nil {
					return err
				}
				r, ok := res.Value.(*storage.RetentionDueResult)
				if !ok || r.Expired+r.Disposed == 0 {
					break
				}
			}
		}
		return nil
	}}
}

// siteDispositionAction is a site's document.retentionAndDisposition
// dispositionAction (SOFT_DELETE when unset).
func siteDispositionAction(db *storage.DB, site string) string {
	c, err := db.SiteConfig(site)
	if err != nil || len(c.Document) == 0 {
		return storage.DispositionSoftDelete
	}
	var d struct {
		RetentionAndDisposition *struct {
			DispositionAction string `json:"dispositionAction"`
		} `json:"retentionAndDisposition"`
	}
	if json.Unmarshal(c.Document, &d) != nil || d.RetentionAndDisposition == nil || d.RetentionAndDisposition.DispositionAction != storage.DispositionDelete {
		return storage.DispositionSoftDelete
	}
	return storage.DispositionDelete
}
