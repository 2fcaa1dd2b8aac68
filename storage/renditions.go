package storage

import (
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"
)

// Pending renditions (issue 46): OCR records its text first and builds
// the searchable PDF/A after the action, naming the artifact it will be
// in the action's metadata.artifactId. So that a stop, a crash or a change
// of leader cannot silently break that promise, the outcome's
// OpFinishAction records the rendition as pending in the same
// transaction (FinishAction.Rendition), under
// ocp/<site>/<doc>/<artifactId>. The record goes, in the transaction
// that does it, when the artifact is added (OpAddArtifact with that id),
// when the document is deleted (clearActions) and when the document gets
// other content (versionHook.finish): a rendition of old content is not
// wanted. The pipeline lists the records when it starts (on a cluster's
// leader) and builds what they name.

// PendingRendition is a rendition an action outcome promised and that is
// not kept yet. In FinishAction.Rendition only ArtifactID and
// ContentSHA256 are given; the applier fills in the rest.
type PendingRendition struct {
	SiteID     string `json:"siteId,omitempty"`
	DocumentID string `json:"documentId,omitempty"`
	ArtifactID string `json:"artifactId"`
	// ContentSHA256 is the content the rendition is made of.
	ContentSHA256 string `json:"contentSha256"`
	// Action is the action that promised it (its parameters say how to
	// make it again).
	Action       ActionRef `json:"action"`
	UserID       string    `json:"userId,omitempty"`
	InsertedDate time.Time `json:"insertedDate"`
}

// maxRenditionIDBytes bounds an artifact id named by a pending rendition.
const maxRenditionIDBytes = 128

// addRendition records the pending rendition r of the action a of d.
// Only a COMPLETE outcome promises one, and only of d's current content:
// an outcome of content replaced meanwhile records none.
func addRendition(t *tx, c *Command, d *Document, a *Action, r PendingRendition) error {
	if id := r.ArtifactID; id == "" || len(id) > maxRenditionIDBytes || !utf8.ValidString(id) ||
		strings.ContainsFunc(id, func(c rune) bool { return c == '/' || c < 0x20 || c == 0x7f }) {
		return Invalid("artifactId", "a pending rendition needs an artifact id of at most 128 bytes without '/' or control characters")
	}
	if a.Status != ActionComplete || d.ArtifactOf != "" || d.DeletedDate != nil || !d.HasContent || d.ContentSHA256 != r.ContentSHA256 {
		return nil
	}
	ok, err := t.exists(docKey(c.Site, r.ArtifactID))
	if err != nil || ok {
		return err // kept already (an id is never reused)
	}
	r.SiteID, r.DocumentID, r.UserID, r.InsertedDate = c.Site, d.DocumentID, a.UserID, c.At
	r.Action = ActionRef{DocumentID: d.DocumentID, Seq: a.Seq, Retry: a.Retry}
	return t.setJSON(renditionKey(c.Site, d.DocumentID, r.ArtifactID), r)
}

// dropRenditions removes the pending renditions of a document (new
// content: they would be of the old one).
func dropRenditions(t *tx, site, doc string) error {
	for _, k := range t.keys(renditionPrefix(site, doc)) {
		if err := t.del(k); err != nil {
			return err
		}
	}
	return nil
}

// PendingRenditions calls fn for every pending rendition of every site.
func (d *DB) PendingRenditions(fn func(PendingRendition) error) error {
	return d.view(func(t *tx) error {
		return t.each([]byte(pfxRendition), func(_, v []byte) error {
			var r PendingRendition
			if err := json.Unmarshal(v, &r); err != nil {
				return err
			}
			return fn(r)
		})
	})
}

// PendingRendition returns one pending rendition; ErrNotFound when it is
// not pending (kept, or dropped).
func (d *DB) PendingRendition(site, doc, art string) (*PendingRendition, error) {
	var r PendingRendition
	if err := d.view(func(t *tx) error { return t.getJSON(renditionKey(site, doc, art), &r) }); err != nil {
		return nil, err
	}
	return &r, nil
}
