package storage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/dgraph-io/badger/v4"
)

// The walk for documents without a thumbnail (issue 47). Documents of a
// store written before RulesThumbnailsWithContent have no ThumbnailID and
// no pending record: their thumbnails were made when a listing asked, as
// artifacts of category THUMBNAIL whose metadata thumbnailOf names the
// content's SHA-256. Where the pipeline runs, it walks each site's
// documents in id order (ThumbnailWalk) and applies OpQueueThumbnails for
// a batch of the ones that could have a thumbnail: the applier adopts an
// earlier thumbnail of the current content (ThumbnailID names it) or
// records a pending thumbnail, and keeps how far the walk got
// (tnw/<site>), so a restart goes on from there and a site whose walk
// ended is not walked again.

// OpQueueThumbnails is one step of the walk (QueueThumbnails).
const OpQueueThumbnails Op = "QueueThumbnails"

// MaxQueueThumbnails bounds the documents of one OpQueueThumbnails.
const MaxQueueThumbnails = 64

// legacyThumbnailOf is the metadata key naming the content a thumbnail
// made before RulesThumbnailsWithContent shows.
const legacyThumbnailOf = "thumbnailOf"

// QueueThumbnails is OpQueueThumbnails' payload: documents of the command's
// site found without a thumbnail, and how far the walk got. A document
// that meanwhile has a thumbnail or a pending one, is deleted, has no
// content or nothing to show, is left alone. The result is a
// QueueThumbnailsResult.
type QueueThumbnails struct {
	DocumentIDs []string `json:"documentIds,omitempty"`
	// After is the last document id the walk read; Done: it read them all.
	After string `json:"after,omitempty"`
	Done  bool   `json:"done,omitempty"`
}

// QueueThumbnailsResult counts what OpQueueThumbnails did.
type QueueThumbnailsResult struct {
	Queued  int `json:"queued"`  // pending records written
	Adopted int `json:"adopted"` // earlier thumbnails named
}

// thumbnailWalk is how far a site's walk got (tnw/<site>).
type thumbnailWalk struct {
	After string `json:"after,omitempty"`
	Done  bool   `json:"done,omitempty"`
}

func thumbnailWalkKey(site string) []byte { return []byte(pfxThumbnailWalk + sk(site)) }

func applyQueueThumbnails(t *tx, c *Command) (any, error) {
	p, err := decode[QueueThumbnails](c)
	if err != nil {
		return nil, err
	}
	if len(p.DocumentIDs) > MaxQueueThumbnails {
		return nil, Invalid("documentIds", fmt.Sprintf("at most %d documents at once", MaxQueueThumbnails))
	}
	var res QueueThumbnailsResult
	for _, id := range p.DocumentIDs {
		adopted, queued, err := queueThumbnail(t, c.Site, id)
		if err != nil {
			return nil, err
		}
		if adopted {
			res.Adopted++
		}
		if queued {
			res.Queued++
		}
	}
	if err := t.setJSON(thumbnailWalkKey(c.Site), thumbnailWalk{After: p.After, Done: p.Done}); err != nil {
		return nil, err
	}
	return res, nil
}

// queueThumbnail gives the document id of site, when it lacks one and
// could have one, the earlier thumbnail of its content or a pending one.
func queueThumbnail(t *tx, site, id string) (adopted, queued bool, err error) {
	d, err := getLiveDoc(t, site, id)
	if errors.Is(err, ErrNotFound) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	if !needsThumbnail(d) {
		return false, false, nil
	}
	if ok, err := t.exists(thumbnailQueueKey(site, id)); err != nil || ok {
		return false, false, err
	}
	rendition, earlier := "", ""
	for _, k := range t.keys(artifactPrefix(site, id)) {
		a, err := getDoc(t, site, string(k[bytes.LastIndexByte(k, '/')+1:]))
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return false, false, err
		}
		switch {
		case !a.HasContent:
		case a.ArtifactCategory == "RENDITION" && a.ContentType == "application/pdf":
			rendition = a.DocumentID
		case a.ArtifactCategory == ThumbnailCategory && thumbnailOf(a) == d.ContentSHA256:
			earlier = a.DocumentID // the newest one, the keys being in time order
		}
	}
	if earlier != "" && (rendition != "" || Thumbnailable(d.ContentType)) {
		d.ThumbnailID = earlier
		return true, false, putDoc(t, d)
	}
	if Thumbnailable(d.ContentType) {
		rendition = ""
	} else if rendition == "" {
		return false, false, nil
	}
	return false, true, t.setJSON(thumbnailQueueKey(site, id),
		PendingThumbnail{SiteID: site, DocumentID: id, ContentSHA256: d.ContentSHA256, Rendition: rendition})
}

// needsThumbnail reports whether d, a document read by the walk, lacks a
// thumbnail it could have (an office file's needs a PDF rendition, which
// only its artifacts tell).
func needsThumbnail(d *Document) bool {
	return d.ArtifactOf == "" && d.DeletedDate == nil && d.HasContent && d.ThumbnailID == "" &&
		(Thumbnailable(d.ContentType) || d.ArtifactCount > 0)
}

// thumbnailOf is the content an earlier thumbnail a shows ("": none named).
func thumbnailOf(a *Document) string {
	for _, m := range a.Metadata {
		if m.Key == legacyThumbnailOf {
			return m.Value
		}
	}
	return ""
}

// ThumbnailWalk returns the next step of the walk for documents without a
// thumbnail: the site and the payload of an OpQueueThumbnails naming up
// to batch documents found among at most scan read after the site's walk
// got (nil: the walk of every site has ended).
func (d *DB) ThumbnailWalk(scan, batch int) (string, *QueueThumbnails, error) {
	sites, err := d.Sites()
	if err != nil {
		return "", nil, err
	}
	sort.Strings(sites)
	for _, site := range sites {
		var step *QueueThumbnails
		err := d.view(func(t *tx) error {
			var w thumbnailWalk
			if err := t.getJSON(thumbnailWalkKey(site), &w); err != nil && !errors.Is(err, ErrNotFound) {
				return err
			}
			if w.Done {
				return nil
			}
			step = &QueueThumbnails{After: w.After, Done: true}
			prefix := docPrefix(site)
			seek := prefix
			if w.After != "" {
				seek = append(append(append([]byte(nil), prefix...), w.After...), 0) // strictly after
			}
			opts := badger.DefaultIteratorOptions
			opts.Prefix = prefix
			it := t.txn.NewIterator(opts)
			defer it.Close()
			for it.Seek(seek); it.ValidForPrefix(prefix); it.Next() {
				if scan <= 0 || len(step.DocumentIDs) >= batch {
					step.Done = false
					return nil
				}
				scan--
				id := string(it.Item().Key()[len(prefix):])
				step.After = id
				var doc Document
				if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &doc) }); err != nil {
					continue // a record this release cannot read has no thumbnail either
				}
				if !needsThumbnail(&doc) {
					continue
				}
				pending, err := t.exists(thumbnailQueueKey(site, id))
				if err != nil {
					return err
				}
				if !pending {
					step.DocumentIDs = append(step.DocumentIDs, id)
				}
			}
			return nil
		})
		if err != nil || step != nil {
			return site, step, err
		}
	}
	return "", nil, nil
}
