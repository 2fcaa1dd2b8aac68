package storage

import (
	"encoding/json"
	"errors"
	"strings"
)

// First-page thumbnails (issue 47). A document's thumbnail is an artifact
// of category THUMBNAIL (a small PNG the pipeline renders), named by the
// document's ThumbnailID; a listing serves what that names and never
// renders one. The request to make one is written by the transaction
// that gives the document something to show: putDoc records a pending
// thumbnail, tnq/<site>/<doc>, when a document gets new content (or a
// new content type) that is a PDF or an image, or new content of any kind
// while it has a thumbnail (that one shows other content now), and when
// an office document gets a PDF rendition (an artifact of category
// RENDITION, which CONVERT makes): the thumbnail is then of the
// rendition. The pipeline, where it runs (a cluster's leader), takes the
// records, renders, and keeps the result with OpSetThumbnail, which in
// one transaction adds the new artifact, deletes the one it replaces and
// removes the record. Until then the old thumbnail stays. A record
// survives a restart and a change of leader; it goes with the document's
// delete.

// ThumbnailCategory is the artifactCategory of a thumbnail.
const ThumbnailCategory = "THUMBNAIL"

// OpSetThumbnail keeps a document's new thumbnail (SetThumbnail).
const OpSetThumbnail Op = "SetThumbnail"

// Thumbnailable reports whether a thumbnail is made of content of type ct
// itself (other kinds need a PDF rendition).
func Thumbnailable(ct string) bool {
	switch strings.ToLower(strings.TrimSpace(strings.SplitN(ct, ";", 2)[0])) {
	case "application/pdf", "image/png", "image/jpeg", "image/gif", "image/tiff":
		return true
	}
	return false
}

// PendingThumbnail is a thumbnail to make (tnq/<site>/<doc>).
type PendingThumbnail struct {
	SiteID     string `json:"siteId"`
	DocumentID string `json:"documentId"`
	// ContentSHA256 is the document's content when it was asked for.
	ContentSHA256 string `json:"contentSha256"`
	// Rendition, when set, is the PDF rendition (an artifact of the
	// document) to make it of; else the document's own content.
	Rendition string `json:"rendition,omitempty"`
}

// SetThumbnail is OpSetThumbnail's payload: the thumbnail made for the
// pending record Pending. The artifact (of category THUMBNAIL) replaces
// the document's thumbnail, which is deleted; without one, none could be
// made of the content, and the document's thumbnail (of other content)
// is deleted. Nothing changes when the document's content is no longer
// Pending's (a newer record waits). The record goes when it is still
// Pending. The result is a bool: whether the thumbnail was kept.
type SetThumbnail struct {
	Pending  PendingThumbnail `json:"pending"`
	Artifact *NewDocument     `json:"artifact,omitempty"`
}

func thumbnailQueueKey(site, doc string) []byte {
	return []byte(pfxThumbnailQueue + sk(site) + "/" + doc)
}

// askThumbnail records a pending thumbnail when d, about to be written
// over old (nil: d is new), has something new to show (see above), by a
// command of RulesThumbnailsWithContent or later: the same entry of an
// earlier release records nothing, as that release did not.
func askThumbnail(t *tx, old, d *Document) error {
	if t.rules < RulesThumbnailsWithContent {
		return nil
	}
	if d.ArtifactOf != "" {
		if old != nil || d.ArtifactCategory != "RENDITION" || d.ContentType != "application/pdf" || !d.HasContent {
			return nil
		}
		parent, err := getDoc(t, d.SiteID, d.ArtifactOf)
		if err != nil || parent.DeletedDate != nil || !parent.HasContent || Thumbnailable(parent.ContentType) {
			return nil
		}
		return t.setJSON(thumbnailQueueKey(d.SiteID, parent.DocumentID),
			PendingThumbnail{SiteID: d.SiteID, DocumentID: parent.DocumentID, ContentSHA256: parent.ContentSHA256, Rendition: d.DocumentID})
	}
	if d.DeletedDate != nil || !d.HasContent {
		return nil
	}
	if old != nil && old.HasContent && old.ContentSHA256 == d.ContentSHA256 && old.ContentType == d.ContentType {
		return nil
	}
	if !Thumbnailable(d.ContentType) && d.ThumbnailID == "" {
		return nil
	}
	return t.setJSON(thumbnailQueueKey(d.SiteID, d.DocumentID),
		PendingThumbnail{SiteID: d.SiteID, DocumentID: d.DocumentID, ContentSHA256: d.ContentSHA256})
}

func applySetThumbnail(t *tx, c *Command) (any, error) {
	p, err := decode[SetThumbnail](c)
	if err != nil {
		return nil, err
	}
	pend := p.Pending
	if p.Artifact != nil {
		if err := limitsErr(CheckNewDocuments([]NewDocument{*p.Artifact})); err != nil {
			return nil, err
		}
		if p.Artifact.Document.ArtifactCategory != ThumbnailCategory || len(p.Artifact.Actions) > 0 {
			return nil, Invalid("artifact", "a thumbnail is an artifact of category THUMBNAIL without actions")
		}
	}
	qk := thumbnailQueueKey(c.Site, pend.DocumentID)
	var cur PendingThumbnail
	switch err := t.getJSON(qk, &cur); {
	case errors.Is(err, ErrNotFound):
	case err != nil:
		return nil, err
	case cur == pend:
		if err := t.del(qk); err != nil {
			return nil, err
		}
	}
	d, err := getLiveDoc(t, c.Site, pend.DocumentID)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return nil, err
	}
	if d.ArtifactOf != "" || !d.HasContent || d.ContentSHA256 != pend.ContentSHA256 {
		return false, nil
	}
	if old := d.ThumbnailID; old != "" {
		d.ThumbnailID = ""
		a, err := getDoc(t, c.Site, old)
		switch {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			return nil, err
		case a.ArtifactOf == d.DocumentID:
			if err := deleteRecord(t, c.Site, a); err != nil {
				return nil, err
			}
			d.ArtifactCount = max(d.ArtifactCount-1, 0)
			if d.PromotedArtifactID == a.DocumentID {
				d.PromotedArtifactID = ""
			}
			if err := countDocuments(t, c.Site, -1); err != nil {
				return nil, err
			}
		}
	}
	if p.Artifact != nil {
		if err := insertArtifact(t, c, d, p.Artifact); err != nil {
			return nil, err
		}
		d.ThumbnailID = p.Artifact.Document.DocumentID
	}
	if err := putDoc(t, d); err != nil {
		return nil, err
	}
	return p.Artifact != nil, nil
}

// PendingThumbnails lists up to limit pending thumbnails, of every site.
func (d *DB) PendingThumbnails(limit int) ([]PendingThumbnail, error) {
	var out []PendingThumbnail
	err := d.view(func(t *tx) error {
		return t.each([]byte(pfxThumbnailQueue), func(_, v []byte) error {
			if len(out) >= limit {
				return errStop
			}
			var r PendingThumbnail
			if err := json.Unmarshal(v, &r); err != nil {
				return err
			}
			out = append(out, r)
			return nil
		})
	})
	if errors.Is(err, errStop) {
		err = nil
	}
	return out, err
}

// dropThumbnailQueue removes a deleted document's pending thumbnail.
func dropThumbnailQueue(t *tx, site, doc string) error {
	k := thumbnailQueueKey(site, doc)
	if ok, err := t.exists(k); err != nil || !ok {
		return err
	}
	return t.del(k)
}
