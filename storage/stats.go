package storage

import (
	"context"
	"encoding/json"
	"strings"
)

// statsCheckEvery is how many records Stats reads between looks at its
// context.
const statsCheckEvery = 4096

// SiteStats counts a site's documents.
type SiteStats struct {
	Documents        int
	SoftDeleted      int
	ContentBytes     int64
	ActionsByStatus  map[[2]string]int // {type, status} -> actions
	DocumentsPending int               // documents with an action to run
}

// Stats counts documents, content bytes and actions per site (metrics). It
// reads every document and action record (seconds at a million
// documents): callers count in the background and cache the result. It
// stops with ctx's error when ctx ends.
func (d *DB) Stats(ctx context.Context) (map[string]*SiteStats, error) {
	out := map[string]*SiteStats{}
	site := func(key []byte, prefix string) *SiteStats {
		rest := strings.TrimPrefix(string(key), prefix)
		name, _, _ := strings.Cut(rest, "/")
		name = siteOfKey(name)
		s := out[name]
		if s == nil {
			s = &SiteStats{ActionsByStatus: map[[2]string]int{}}
			out[name] = s
		}
		return s
	}
	err := d.view(func(t *tx) error {
		var doc struct {
			ContentLength int64  `json:"contentLength"`
			DeletedDate   any    `json:"deletedDate"`
			Type          string `json:"type"`
			Status        string `json:"status"`
		}
		n := 0
		if err := t.each([]byte(pfxDoc), func(k, v []byte) error {
			if n++; n%statsCheckEvery == 0 && ctx.Err() != nil {
				return ctx.Err()
			}
			doc.ContentLength, doc.DeletedDate = 0, nil
			if json.Unmarshal(v, &doc) != nil {
				return nil
			}
			s := site(k, pfxDoc)
			s.Documents++
			s.ContentBytes += doc.ContentLength
			if doc.DeletedDate != nil {
				s.SoftDeleted++
			}
			return nil
		}); err != nil {
			return err
		}
		if err := t.each([]byte(pfxAction), func(k, v []byte) error {
			if n++; n%statsCheckEvery == 0 && ctx.Err() != nil {
				return ctx.Err()
			}
			doc.Type, doc.Status = "", ""
			if json.Unmarshal(v, &doc) != nil {
				return nil
			}
			site(k, pfxAction).ActionsByStatus[[2]string{doc.Type, doc.Status}]++
			return nil
		}); err != nil {
			return err
		}
		for _, k := range t.keys([]byte(pfxActionQueue)) {
			site(k, pfxActionQueue).DocumentsPending++
		}
		return nil
	})
	return out, err
}
