package server

import (
	"context"
	"fmt"
	"time"

	"quire/storage"
)

// Reminders, agreement expiration and notification listings (API.md
// "Reminders and notifications"; storage/notifications.go,
// storage/agreements.go).

const (
	jobReminders  = "reminders"
	jobAgreements = "agreements"
)

// dueBatches walks every site's due items in batches, each applied as one
// command; the cursor moves past every batch, and 1,000 batches bound a
// night (the next one goes on).
func dueBatches(ctx context.Context, db *storage.DB, ap storage.Applier, op storage.Op, now time.Time,
	list func(site string, after string) ([]string, string, error), payload func([]string) any) error {
	sites, err := db.Sites()
	if err != nil {
		return err
	}
	for _, site := range sites {
		after := ""
		for i := 0; i < 1000; i++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			items, next, err := list(site, after)
			if err != nil {
				return err
			}
			if len(items) == 0 {
				break
			}
			cmd, err := storage.NewCommand(op, site, string(op), now, payload(items))
			if err != nil {
				return err
			}
			if _, err := ap.Apply(ctx, cmd); err != nil {
				return fmt.Errorf("%s on site %s: %w", op, site, err)
			}
			after = next
		}
	}
	return nil
}

// remindersJob turns due reminder notifications into NOTIFICATION actions.
func remindersJob(db *storage.DB, ap storage.Applier) Job {
	return Job{Name: jobReminders, Run: func(ctx context.Context, _ string, now time.Time) error {
		return dueBatches(ctx, db, ap, storage.OpRemindersDue, now,
			func(site, after string) ([]string, string, error) {
				return db.RemindersDue(site, now, after, dispositionBatch)
			},
			func(due []string) any { return storage.RemindersDue{Due: due} })
	}}
}

// agreementsJob expires Agreement dossiers past their expiration date.
func agreementsJob(db *storage.DB, ap storage.Applier) Job {
	return Job{Name: jobAgreements, Run: func(ctx context.Context, _ string, now time.Time) error {
		return dueBatches(ctx, db, ap, storage.OpExpireAgreements, now,
			func(site, after string) ([]string, string, error) {
				return db.AgreementsDue(site, now, after, dispositionBatch)
			},
			func(ids []string) any { return storage.ExpireAgreements{DocumentIDs: ids} })
	}}
}
