package storage

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/dgraph-io/badger/v4"
)

// Artifacts (SERVICE-SPEC.md §1): related or derived files of a document.
// An artifact is a document record of its own (d/<site>/<artifactId>, with
// ArtifactOf = its document's id), so its content, tags, attributes and
// metadata use the same keys and code as a document's. It differs in that
// it holds no path (no p/ or f/ entry: it is not in the folder tree), is
// not listed in ins/ or del/, stays out of the full-text index
// (viewForIndex), and is listed under its document in
// af/<site>/<doc>/<ts>/<artifactId>. Its document counts them
// (ArtifactCount, at most MaxArtifacts) and may promote one
// (PromotedArtifactID). Deleting the document deletes its artifacts in the
// same transaction; a soft-deleted document's artifacts are unreachable
// until it is restored.

// AddArtifact is the payload of OpAddArtifact: a new artifact of a
// document.
type AddArtifact struct {
	DocumentID string      `json:"documentId"`
	Artifact   NewDocument `json:"artifact"` // Document.DocumentID is the artifactId
	// Writer is the caller's rights, checked here against the folder of
	// the document (actionrights.go checkWriter).
	Writer *ActionActor `json:"writer,omitempty"`
}

func applyAddArtifact(t *tx, c *Command) (any, error) {
	p, err := decode[AddArtifact](c)
	if err != nil {
		return nil, err
	}
	nd := &p.Artifact
	if err := limitsErr(CheckNewDocuments([]NewDocument{*nd})); err != nil {
		return nil, err
	}
	if len(nd.Actions) > 0 {
		return nil, Invalid("actions", "actions cannot be added to an artifact")
	}
	parent, err := getLiveDoc(t, c.Site, p.DocumentID)
	if err != nil {
		return nil, err
	}
	if parent.ArtifactOf != "" {
		return nil, docNotFound(p.DocumentID) // an artifact has no artifacts
	}
	if err := checkWriter(t, c.Site, p.Writer, parent.Path); err != nil {
		return nil, err
	}
	if err := insertArtifact(t, c, parent, nd); err != nil {
		return nil, err
	}
	if err := putDoc(t, parent); err != nil {
		return nil, err
	}
	return nil, ensureSite(t, c)
}

// insertArtifact adds the artifact nd to parent (a live document, which
// the caller writes back: its ArtifactCount has grown).
func insertArtifact(t *tx, c *Command, parent *Document, nd *NewDocument) error {
	if parent.ArtifactCount >= MaxArtifacts {
		return Invalid("artifacts", fmt.Sprintf("maximum number of artifacts per document is %d", MaxArtifacts))
	}
	if err := countDocuments(t, c.Site, 1); err != nil {
		return err
	}
	d := &nd.Document
	ok, err := t.exists(docKey(c.Site, d.DocumentID))
	if err != nil {
		return err
	}
	if ok {
		return &ConflictError{Msg: fmt.Sprintf("artifactId '%s' already exists", d.DocumentID)}
	}
	d.SiteID, d.ArtifactOf, d.BelongsToDocumentID, d.Children = c.Site, parent.DocumentID, "", nil
	d.ArtifactCount, d.PromotedArtifactID, d.DeletedDate, d.ThumbnailID = 0, "", nil, ""
	if d.UserID == "" {
		d.UserID = c.User
	}
	d.InsertedDate, d.LastModifiedDate = c.At, c.At
	if err := putChunks(t, nd.Chunks); err != nil {
		return err
	}
	if err := checkContentTypeAllowed(t, c.Site, d.ContentType, nd.Content != nil); err != nil {
		return err
	}
	if nd.Content != nil {
		if err := checkContentSize(t, c.Site, nd.Content.Size); err != nil {
			return err
		}
		if err := attachManifest(t, *nd.Content); err != nil {
			return err
		}
		d.HasContent, d.ContentSHA256, d.ContentLength = true, nd.Content.SHA256, nd.Content.Size
	}
	if err := t.set(artifactKey(c.Site, parent.DocumentID, d.InsertedDate, d.DocumentID), nil); err != nil {
		return err
	}
	// The rendition it keeps is no longer pending, and its action says
	// so (renditions.go).
	if err := keptRendition(t, c.Site, parent.DocumentID, d.DocumentID); err != nil {
		return err
	}
	if err := putDoc(t, d); err != nil {
		return err
	}
	if err := writeTags(t, c, d.DocumentID, nd.Tags, tagsAdd); err != nil {
		return err
	}
	// The site schema describes documents: its required attributes and
	// numbering sequences do not apply to artifacts.
	if len(nd.Attributes) > 0 {
		if err := writeDocAttributes(t, c, d.DocumentID, nd.Attributes, AttrAdd, false); err != nil {
			return err
		}
	}
	parent.ArtifactCount++
	return nil
}

// ArtifactRef names an artifact of a document in a command payload.
type ArtifactRef struct {
	DocumentID string `json:"documentId"`
	ArtifactID string `json:"artifactId,omitempty"`
}

// getArtifact returns artifact art of the live document doc, or the
// FormKiQ not-found error naming whichever of them is missing.
func getArtifact(t *tx, site, doc, art string) (parent, a *Document, err error) {
	if parent, err = getLiveDoc(t, site, doc); err != nil {
		return nil, nil, err
	}
	if parent.ArtifactOf != "" {
		return nil, nil, docNotFound(doc)
	}
	a, err = getDoc(t, site, art)
	if err == nil && a.ArtifactOf != parent.DocumentID {
		err = docNotFound(art)
	}
	if err != nil {
		return nil, nil, err
	}
	return parent, a, nil
}

func applyDeleteArtifact(t *tx, c *Command) (any, error) {
	p, err := decode[ArtifactRef](c)
	if err != nil {
		return nil, err
	}
	// The document may be in the trash: a purge too large for one
	// transaction deletes its artifacts first (IsTooBig).
	parent, err := getDoc(t, c.Site, p.DocumentID)
	if err != nil {
		return nil, err
	}
	a, err := getDoc(t, c.Site, p.ArtifactID)
	if err == nil && a.ArtifactOf != parent.DocumentID {
		err = docNotFound(p.ArtifactID)
	}
	if err != nil {
		return nil, err
	}
	if err := checkMutable(t, c, a); err != nil {
		return nil, err
	}
	if err := countDocuments(t, c.Site, 0); err != nil {
		return nil, err
	}
	if err := deleteRecord(t, c.Site, a); err != nil {
		return nil, err
	}
	parent.ArtifactCount = max(parent.ArtifactCount-1, 0)
	if parent.PromotedArtifactID == a.DocumentID {
		parent.PromotedArtifactID = ""
	}
	if err := putDoc(t, parent); err != nil {
		return nil, err
	}
	if err := deletedRendition(t, c.Site, parent.DocumentID, a.DocumentID); err != nil {
		return nil, err
	}
	return nil, countDocuments(t, c.Site, -1)
}

// applyPromoteArtifact sets (or, with no ArtifactID, clears) the artifact a
// document serves as its content. Neither content changes.
func applyPromoteArtifact(t *tx, c *Command) (any, error) {
	p, err := decode[ArtifactRef](c)
	if err != nil {
		return nil, err
	}
	var parent *Document
	if p.ArtifactID == "" {
		if parent, err = getLiveDoc(t, c.Site, p.DocumentID); err == nil && parent.ArtifactOf != "" {
			err = docNotFound(p.DocumentID)
		}
	} else {
		parent, _, err = getArtifact(t, c.Site, p.DocumentID, p.ArtifactID)
	}
	if err != nil {
		return nil, err
	}
	if err := checkMutable(t, c, parent); err != nil {
		return nil, err
	}
	parent.PromotedArtifactID = p.ArtifactID
	parent.LastModifiedDate = c.At
	return nil, putDoc(t, parent)
}

// IsTooBig reports whether err is Apply's answer to a command whose
// transaction grew past Badger's limit (errTxnTooBig).
func IsTooBig(err error) bool { return errors.Is(err, errTxnTooBig) }

// ArtifactIDs returns the ids of up to limit artifacts of doc, whether or
// not doc is in the trash.
func (d *DB) ArtifactIDs(site, doc string, limit int) ([]string, error) {
	var out []string
	err := d.view(func(t *tx) error {
		for _, k := range t.keys(artifactPrefix(site, doc)) {
			if len(out) == limit {
				break
			}
			out = append(out, string(k[strings.LastIndexByte(string(k), '/')+1:]))
		}
		return nil
	})
	return out, err
}

// GetArtifact returns artifact art of the live document doc.
func (d *DB) GetArtifact(site, doc, art string) (*Document, error) {
	var a *Document
	err := d.view(func(t *tx) error {
		var err error
		_, a, err = getArtifact(t, site, doc, art)
		return err
	})
	return a, err
}

// ArtifactPage is one page of a document's artifacts.
type ArtifactPage struct {
	Artifacts []*Document
	Next      string
}

// ListArtifacts lists the artifacts of the live document doc, oldest first,
// up to limit after the token next; category, when not empty, keeps only
// the artifacts of that artifactCategory.
func (d *DB) ListArtifacts(site, doc, category, next string, limit int) (*ArtifactPage, error) {
	prefix := artifactPrefix(site, doc)
	seek := prefix
	if next != "" {
		b, err := base64.RawURLEncoding.DecodeString(next)
		if err != nil || len(b) < 18 || b[16] != '/' {
			return nil, ErrBadToken
		}
		seek = append(append(append([]byte(nil), prefix...), b...), 0) // strictly after
	}
	page := &ArtifactPage{Artifacts: []*Document{}}
	err := d.view(func(t *tx) error {
		parent, err := getLiveDoc(t, site, doc)
		if err != nil {
			return err
		}
		if parent.ArtifactOf != "" {
			return docNotFound(doc)
		}
		var last []byte
		for _, k := range t.keysFrom(prefix, seek) {
			if len(page.Artifacts) == limit {
				page.Next = base64.RawURLEncoding.EncodeToString(last)
				return nil
			}
			id := string(k[strings.LastIndexByte(string(k), '/')+1:])
			a, err := getDoc(t, site, id)
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			last = k[len(prefix):]
			if category != "" && a.ArtifactCategory != category ||
				category == "" && a.ArtifactCategory == ThumbnailCategory {
				// Without a category, thumbnails (which the pipeline makes
				// for every PDF and image) are left out: a client lists
				// the artifacts it and its actions made.
				continue
			}
			page.Artifacts = append(page.Artifacts, a)
		}
		return nil
	})
	return page, err
}

// keysFrom returns the keys under prefix from seek on, in key order.
func (t *tx) keysFrom(prefix, seek []byte) [][]byte {
	opts := badger.DefaultIteratorOptions
	opts.PrefetchValues = false
	opts.Prefix = prefix
	it := t.txn.NewIterator(opts)
	defer it.Close()
	var out [][]byte
	for it.Seek(seek); it.ValidForPrefix(prefix); it.Next() {
		out = append(out, it.Item().KeyCopy(nil))
	}
	return out
}

// artifactReachable reports whether d is a document, or an artifact whose
// document is live (a soft-deleted document hides its artifacts).
func artifactReachable(t *tx, site string, d *Document) bool {
	if d.ArtifactOf == "" {
		return true
	}
	p, err := getDoc(t, site, d.ArtifactOf)
	return err == nil && p.DeletedDate == nil
}
