package storage

import (
	"errors"
	"fmt"
	"time"
)

// Publication is the published copy of a document (PUBLISH action): it
// keeps a reference on the content it published, so later uploads do not
// change what /publications serves until the document is published again.
type Publication struct {
	DocumentID    string    `json:"documentId"`
	ContentSHA    string    `json:"contentSha256"`
	ContentType   string    `json:"contentType,omitempty"`
	ContentLength int64     `json:"contentLength"`
	Path          string    `json:"path"`
	UserID        string    `json:"userId,omitempty"`
	PublishedDate time.Time `json:"publishedDate"`
}

func publicationNotFound(id string) error {
	return &NotFoundError{Msg: fmt.Sprintf("Publication for document %s not found", id)}
}

func applyPublish(t *tx, c *Command) (any, error) {
	p, err := decode[DocumentRef](c)
	if err != nil {
		return nil, err
	}
	d, err := getLiveDoc(t, c.Site, p.DocumentID)
	if err != nil {
		return nil, err
	}
	if !d.HasContent {
		return nil, Invalid("documentId", "the document has no content to publish")
	}
	var m Manifest
	if err := t.getJSON(manifestKey(d.ContentSHA256), &m); err != nil {
		return nil, err
	}
	if err := attachManifest(t, m); err != nil {
		return nil, err
	}
	if err := unpublish(t, c.Site, d.DocumentID); err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	pub := Publication{DocumentID: d.DocumentID, ContentSHA: d.ContentSHA256, ContentType: d.ContentType,
		ContentLength: d.ContentLength, Path: d.Path, UserID: c.User, PublishedDate: c.At}
	return nil, t.setJSON(publicationKey(c.Site, d.DocumentID), pub)
}

func applyUnpublish(t *tx, c *Command) (any, error) {
	p, err := decode[DocumentRef](c)
	if err != nil {
		return nil, err
	}
	return nil, unpublish(t, c.Site, p.DocumentID)
}

// unpublish removes a publication and its content reference.
func unpublish(t *tx, site, doc string) error {
	var pub Publication
	if err := t.getJSON(publicationKey(site, doc), &pub); err != nil {
		if errors.Is(err, ErrNotFound) {
			return publicationNotFound(doc)
		}
		return err
	}
	if err := releaseManifest(t, pub.ContentSHA); err != nil {
		return err
	}
	return t.del(publicationKey(site, doc))
}

// GetPublication returns a document's publication.
func (d *DB) GetPublication(site, doc string) (*Publication, error) {
	var pub Publication
	err := d.view(func(t *tx) error { return t.getJSON(publicationKey(site, doc), &pub) })
	if errors.Is(err, ErrNotFound) {
		return nil, publicationNotFound(doc)
	}
	if err != nil {
		return nil, err
	}
	return &pub, nil
}

// OpenManifest opens stored content by its manifest id.
func (d *DB) OpenManifest(sha string) (*ContentReader, error) {
	m, err := d.GetManifest(sha)
	if err != nil {
		return nil, err
	}
	return &ContentReader{db: d, chunks: m.Chunks, size: m.Size, cur: -1}, nil
}
