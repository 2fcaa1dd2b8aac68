package server

import (
	"context"
	"encoding/json"
	"fmt"
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
			// The cursor moves past every batch, so documents that stay
			// due (locked ones) cannot hold the ones after them back;
			// 1,000 batches bound one night's work, the next night goes on.
			after := ""
			for i := 0; i < 1000; i++ {
				if err := ctx.Err(); err != nil {
					return err
				}
				ids, next, err := db.RetentionDue(site, now, after, dispositionBatch)
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
				if _, ok := res.Value.(*storage.RetentionDueResult); !ok {
					return fmt.Errorf("disposition: unexpected result %T", res.Value)
				}
				after = next
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
