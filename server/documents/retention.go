package documents

import (
	"context"
	"encoding/json"
	"time"

	"quire/server/internal/api"
	"quire/storage"
)

// softDeleteRetention is a site's document.retentionAndDisposition
// softDeleteRetentionInDays (-1, the default: keep soft-deleted documents).
func (s *Handlers) softDeleteRetention(site string) int {
	c, err := s.DB.SiteConfig(site)
	if err != nil || len(c.Document) == 0 {
		return -1
	}
	var d struct {
		RetentionAndDisposition *struct {
			SoftDeleteRetentionInDays *int `json:"softDeleteRetentionInDays"`
		} `json:"retentionAndDisposition"`
	}
	if json.Unmarshal(c.Document, &d) != nil || d.RetentionAndDisposition == nil || d.RetentionAndDisposition.SoftDeleteRetentionInDays == nil {
		return -1
	}
	return *d.RetentionAndDisposition.SoftDeleteRetentionInDays
}

// PurgeExpired deletes soft-deleted documents kept longer than their
// site's softDeleteRetentionInDays. A pass handles at most 1,000
// documents per site; the next pass goes on.
func (s *Handlers) PurgeExpired() {
	sites, err := s.DB.Sites()
	if err != nil {
		s.Log.Warn("retention: list sites", "err", err)
		return
	}
	now := s.Now().UTC()
	for _, site := range sites {
		days := s.softDeleteRetention(site)
		if days < 0 {
			continue
		}
		cutoff := now.Add(-time.Duration(days) * 24 * time.Hour)
		purged := 0
		for page := 0; page < 10; page++ {
			p, err := s.DB.ListDocuments(site, storage.ListOptions{SoftDeleted: true, End: cutoff, Ascending: true, Limit: 100})
			if err != nil {
				s.Log.Warn("retention: list soft-deleted documents", "site", site, "err", err)
				break
			}
			for _, d := range p.Documents {
				cmd, err := storage.NewCommand(storage.OpDeleteDocument, site, "retention", now, storage.DocumentRef{DocumentID: d.DocumentID})
				if err == nil {
					_, err = s.Deps.Applier.Apply(context.Background(), cmd)
				}
				if err != nil && !api.IsNotFound(err) {
					s.Log.Warn("retention: purge", "site", site, "err", err)
					return
				}
				purged++
			}
			if len(p.Documents) < 100 {
				break
			}
		}
		if purged > 0 {
			s.Log.Info("retention: purged soft-deleted documents", "site", site, "count", purged, "retentionDays", days)
		}
	}
}
