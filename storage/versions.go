package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// Versions (SERVICE-SPEC.md §2.8, §4.3). Every change of a versioned field
// of a document or artifact (sameVersion: content, path, deepLinkPath,
// contentType, width, height, artifactCategory, metadata) keeps the state it replaces as a version record,
// v/<site>/<doc>/<versionKey>, in the transaction of the change. Tags,
// attributes, actions and children are not versioned: they have records and
// routes of their own.
//
// A version holds its content by reference: one reference on the content's
// manifest, which holds the references on its chunks, so neither the chunk
// sweep nor a release by the document can remove what a version needs, and
// a version costs its record only. Deleting a version, or the document,
// drops its references.
//
// A versionKey is 20 hex digits: the Unix nanoseconds at which that state
// began and a counter that keeps keys increasing when two states begin in
// the same nanosecond (or the clock steps back). The document's current
// state has a key too (Document.VersionKey; a document never changed has
// the key of its insertedDate), so the listing shows it first.
//
// At most MaxVersions records per document: the change that would keep one
// more drops the oldest in the same transaction.

// MaxVersions is how many earlier states one document keeps.
const MaxVersions = 1000

// Version is a stored earlier state of a document.
type Version struct {
	VersionKey       string     `json:"versionKey"`
	DocumentID       string     `json:"documentId"`
	UserID           string     `json:"userId,omitempty"` // who made this state
	InsertedDate     time.Time  `json:"insertedDate"`     // when this state began
	LastModifiedDate time.Time  `json:"lastModifiedDate"` // the record's last change in this state
	Path             string     `json:"path,omitempty"`
	DeepLinkPath     string     `json:"deepLinkPath,omitempty"`
	ContentType      string     `json:"contentType,omitempty"`
	Width            string     `json:"width,omitempty"`
	Height           string     `json:"height,omitempty"`
	Checksum         string     `json:"checksum,omitempty"`
	ChecksumType     string     `json:"checksumType,omitempty"`
	ArtifactCategory string     `json:"artifactCategory,omitempty"`
	Metadata         []Metadata `json:"metadata,omitempty"`
	HasContent       bool       `json:"hasContent,omitempty"`
	ContentSHA256    string     `json:"contentSha256,omitempty"`
	ContentLength    int64      `json:"contentLength,omitempty"`
}

func versionKeyOf(at time.Time, n uint16) string {
	return fmt.Sprintf("%016x%04x", uint64(at.UnixNano()), n)
}

// ValidVersionKey reports whether k has the form of a versionKey.
func ValidVersionKey(k string) bool {
	if len(k) != 20 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if !(k[i] >= '0' && k[i] <= '9' || k[i] >= 'a' && k[i] <= 'f') {
			return false
		}
	}
	return true
}

// versionTime is when the state of versionKey k began.
func versionTime(k string) time.Time {
	n, err := strconv.ParseUint(k[:16], 16, 64)
	if err != nil {
		return time.Time{}
	}
	return time.Unix(0, int64(n)).UTC()
}

// CurrentVersionKey is the key of d's current state.
func CurrentVersionKey(d *Document) string {
	if d.VersionKey != "" {
		return d.VersionKey
	}
	return versionKeyOf(d.InsertedDate, 0)
}

// nextVersionKey is the key of a state beginning at at after the state cur.
func nextVersionKey(cur string, at time.Time) string {
	k := versionKeyOf(at, 0)
	if k > cur {
		return k
	}
	ts, _ := strconv.ParseUint(cur[:16], 16, 64)
	n, _ := strconv.ParseUint(cur[16:], 16, 16)
	if n == 0xffff {
		return versionKeyOf(time.Unix(0, int64(ts+1)), 0)
	}
	return versionKeyOf(time.Unix(0, int64(ts)), uint16(n+1))
}

func versionedFields(d *Document) Version {
	return Version{
		Path: d.Path, DeepLinkPath: d.DeepLinkPath, ContentType: d.ContentType, Width: d.Width,
		Height: d.Height, Checksum: d.Checksum, ChecksumType: d.ChecksumType,
		ArtifactCategory: d.ArtifactCategory, Metadata: d.Metadata, HasContent: d.HasContent,
		ContentSHA256: d.ContentSHA256, ContentLength: d.ContentLength,
	}
}

// sameVersion reports whether a and b are the same state. The checksum
// alone does not make a version: it describes the same content (the
// CHECKSUM action sets it); a version keeps it with its content.
func sameVersion(a, b Version) bool {
	if len(a.Metadata) != len(b.Metadata) {
		return false
	}
	for i := range a.Metadata {
		x, y := a.Metadata[i], b.Metadata[i]
		if x.Key != y.Key || x.Value != y.Value || fmt.Sprint(x.Values) != fmt.Sprint(y.Values) {
			return false
		}
	}
	return a.Path == b.Path && a.DeepLinkPath == b.DeepLinkPath && a.ContentType == b.ContentType &&
		a.Width == b.Width && a.Height == b.Height && a.ArtifactCategory == b.ArtifactCategory &&
		a.HasContent == b.HasContent && a.ContentSHA256 == b.ContentSHA256
}

// firstContent reports whether a change only gives a document that never
// had content its first content (the bytes PUT to an upload URL, whose
// POST /documents/upload made the document before them): that empty
// state is not kept as a version, so an upload through an upload URL
// leaves one version, as a POST /documents with its content does.
func firstContent(old, cur Version, versions int) bool {
	if old.HasContent || !cur.HasContent || versions != 0 {
		return false
	}
	old.HasContent, old.ContentSHA256, old.ContentLength = cur.HasContent, cur.ContentSHA256, cur.ContentLength
	old.ContentType, old.Checksum, old.ChecksumType = cur.ContentType, cur.Checksum, cur.ChecksumType
	old.Width, old.Height = cur.Width, cur.Height
	return sameVersion(old, cur)
}

// versionHook is what a document applier keeps between reading a document
// and writing it back, to record the state it replaces (startVersion,
// finish). Both calls are the whole of versioning in those appliers.
type versionHook struct {
	prev   Document
	pinned bool // a reference on prev's manifest is held already
}

// startVersion remembers d's state before a change. When the change may
// replace the content, it first takes a reference on the current manifest,
// so the release by the change cannot delete chunks the version will need.
func startVersion(t *tx, d *Document, contentChange bool) (*versionHook, error) {
	h := &versionHook{prev: *d}
	if contentChange && d.HasContent {
		if err := refManifest(t, d.ContentSHA256); err != nil {
			return nil, err
		}
		h.pinned = true
	}
	return h, nil
}

// finish records the state h remembered as a version when d, about to be
// written, differs from it in a versioned field; it sets d's new
// versionKey and author.
func (h *versionHook) finish(t *tx, c *Command, d *Document) error {
	if h.prev.HasContent && (h.prev.ContentSHA256 != d.ContentSHA256 || !d.HasContent) {
		// A rendition still to be made is of the old content (renditions.go).
		if err := dropRenditions(t, c.Site, d.DocumentID); err != nil {
			return err
		}
	}
	old := versionedFields(&h.prev)
	if sameVersion(old, versionedFields(d)) || firstContent(old, versionedFields(d), h.prev.VersionCount) {
		if h.pinned {
			return releaseManifest(t, h.prev.ContentSHA256)
		}
		return nil
	}
	if old.HasContent && !h.pinned {
		if err := refManifest(t, old.ContentSHA256); err != nil {
			return err
		}
	}
	if old.HasContent && (old.ContentSHA256 != d.ContentSHA256 || !d.HasContent) {
		if err := supersedeReviews(t, c, d.DocumentID); err != nil {
			return err
		}
	}
	old.VersionKey = CurrentVersionKey(&h.prev)
	old.DocumentID = h.prev.DocumentID
	old.UserID = h.prev.VersionUser
	if old.UserID == "" {
		old.UserID = h.prev.UserID
	}
	old.InsertedDate = versionTime(old.VersionKey)
	old.LastModifiedDate = h.prev.LastModifiedDate
	if err := t.setJSON(versionKey(c.Site, d.DocumentID, old.VersionKey), old); err != nil {
		return err
	}
	d.VersionKey, d.VersionUser = nextVersionKey(old.VersionKey, c.At), c.User
	d.VersionCount++
	for d.VersionCount > MaxVersions {
		k := t.firstKey(versionPrefix(c.Site, d.DocumentID))
		if k == nil {
			d.VersionCount = 0
			break
		}
		if err := dropVersion(t, k); err != nil {
			return err
		}
		d.VersionCount--
	}
	return nil
}

// refManifest takes one more reference on the stored manifest sha.
func refManifest(t *tx, sha string) error {
	var m Manifest
	if err := t.getJSON(manifestKey(sha), &m); err != nil {
		return fmt.Errorf("manifest %s: %w", sha, err)
	}
	m.Refs++
	return t.setJSON(manifestKey(sha), m)
}

// dropVersion deletes the version record at key k and its content
// reference.
func dropVersion(t *tx, k []byte) error {
	var v Version
	if err := t.getJSON(k, &v); err != nil {
		return err
	}
	if v.HasContent {
		if err := releaseManifest(t, v.ContentSHA256); err != nil {
			return err
		}
	}
	return t.del(k)
}

// dropVersions deletes the version records at keys and their content
// references; a manifest several of them share is written once.
func dropVersions(t *tx, keys [][]byte) error {
	release := map[string]uint64{}
	for _, k := range keys {
		var v Version
		if err := t.getJSON(k, &v); err != nil {
			return err
		}
		if v.HasContent {
			release[v.ContentSHA256]++
		}
		if err := t.del(k); err != nil {
			return err
		}
	}
	shas := make([]string, 0, len(release))
	for sha := range release {
		shas = append(shas, sha)
	}
	sort.Strings(shas)
	for _, sha := range shas {
		if err := releaseManifestN(t, sha, release[sha]); err != nil {
			return err
		}
	}
	return nil
}

// PruneVersions is the payload of OpPruneVersions: drop up to Max of the
// oldest versions of a document or artifact, in the trash or not. A purge
// too large for one transaction sends it first (server deleteDocument).
type PruneVersions struct {
	DocumentID string `json:"documentId"`
	Max        int    `json:"max"`
}

func applyPruneVersions(t *tx, c *Command) (any, error) {
	p, err := decode[PruneVersions](c)
	if err != nil {
		return nil, err
	}
	if p.Max < 1 || p.Max > MaxVersions {
		return nil, Invalid("max", fmt.Sprintf("max must be between 1 and %d", MaxVersions))
	}
	d, err := getDoc(t, c.Site, p.DocumentID)
	if err != nil {
		return nil, err
	}
	keys := t.keys(versionPrefix(c.Site, d.DocumentID))
	if len(keys) > p.Max {
		keys = keys[:p.Max]
	}
	if len(keys) == 0 {
		return 0, nil
	}
	if err := dropVersions(t, keys); err != nil {
		return nil, err
	}
	d.VersionCount = max(d.VersionCount-len(keys), 0)
	return len(keys), putDoc(t, d)
}

// releaseManifestN drops n references on the manifest sha at once.
func releaseManifestN(t *tx, sha string, n uint64) error {
	var m Manifest
	if err := t.getJSON(manifestKey(sha), &m); err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		return err
	}
	if m.Refs > n {
		m.Refs -= n
		return t.setJSON(manifestKey(sha), m)
	}
	m.Refs = 1
	if err := t.setJSON(manifestKey(sha), m); err != nil {
		return err
	}
	return releaseManifest(t, sha)
}

func versionNotFound(k string) error {
	return &NotFoundError{Msg: fmt.Sprintf("Version %s not found.", k)}
}

// VersionRef names a version of a document in a command payload.
type VersionRef struct {
	DocumentID string `json:"documentId"`
	VersionKey string `json:"versionKey"`
	// DefaultActions (OpSetVersion): content set back gets the site's
	// default processing (defaultactions.go), as new content does: the
	// text recorded for the content it replaces is not its text.
	DefaultActions bool `json:"defaultActions,omitempty"`
}

// applySetVersion sets a document back to an earlier version: content and
// versioned fields. The state it replaces becomes a version itself; the
// version restored from stays.
func applySetVersion(t *tx, c *Command) (any, error) {
	p, err := decode[VersionRef](c)
	if err != nil {
		return nil, err
	}
	d, err := getLiveDoc(t, c.Site, p.DocumentID)
	if err != nil {
		return nil, err
	}
	if p.VersionKey == CurrentVersionKey(d) {
		return d, nil // already this version
	}
	var v Version
	if err := t.getJSON(versionKey(c.Site, d.DocumentID, p.VersionKey), &v); err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, versionNotFound(p.VersionKey)
		}
		return nil, err
	}
	if v.ContentSHA256 != d.ContentSHA256 || v.HasContent != d.HasContent || v.Path != d.Path {
		if err := checkMutable(t, c, d); err != nil {
			return nil, err
		}
	}
	h, err := startVersion(t, d, v.ContentSHA256 != d.ContentSHA256)
	if err != nil {
		return nil, err
	}
	if v.Path != d.Path && d.ArtifactOf != "" {
		d.Path = v.Path
	} else if v.Path != d.Path {
		if err := releasePath(t, c.Site, d.Path, d.DocumentID); err != nil {
			return nil, err
		}
		if d.Path, err = claimPath(t, c, v.Path, d.DocumentID); err != nil {
			return nil, err
		}
	}
	d.DeepLinkPath, d.ContentType, d.Width, d.Height = v.DeepLinkPath, v.ContentType, v.Width, v.Height
	d.Checksum, d.ChecksumType, d.ArtifactCategory = v.Checksum, v.ChecksumType, v.ArtifactCategory
	d.Metadata = v.Metadata
	if v.ContentSHA256 != d.ContentSHA256 || v.HasContent != d.HasContent {
		if v.HasContent {
			if err := refManifest(t, v.ContentSHA256); err != nil {
				return nil, err
			}
		}
		if d.HasContent {
			if err := releaseManifest(t, d.ContentSHA256); err != nil {
				return nil, err
			}
		}
		d.HasContent, d.ContentSHA256, d.ContentLength = v.HasContent, v.ContentSHA256, v.ContentLength
	}
	if d.DetectContentType {
		d.DetectContentType = false
		if err := t.del(detectKey(c.Site, d.DocumentID)); err != nil {
			return nil, err
		}
	}
	if p.DefaultActions && newContentVersion(&h.prev, d) {
		if err := addDefaultActions(t, c, d); err != nil {
			return nil, err
		}
	}
	if err := settleDefaults(t, c, d); err != nil { // defaultactions.go
		return nil, err
	}
	if err := h.finish(t, c, d); err != nil {
		return nil, err
	}
	d.LastModifiedDate = c.At
	return d, putDoc(t, d)
}

// applyDeleteVersion deletes one earlier version of a live document; the
// current version cannot be deleted.
func applyDeleteVersion(t *tx, c *Command) (any, error) {
	p, err := decode[VersionRef](c)
	if err != nil {
		return nil, err
	}
	d, err := getLiveDoc(t, c.Site, p.DocumentID)
	if err != nil {
		return nil, err
	}
	if p.VersionKey == CurrentVersionKey(d) {
		return nil, Invalid("versionKey", "the current version cannot be deleted")
	}
	if err := checkMutable(t, c, d); err != nil {
		return nil, err
	}
	k := versionKey(c.Site, d.DocumentID, p.VersionKey)
	ok, err := t.exists(k)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, versionNotFound(p.VersionKey)
	}
	if err := dropVersion(t, k); err != nil {
		return nil, err
	}
	d.VersionCount = max(d.VersionCount-1, 0)
	return nil, putDoc(t, d)
}

// currentVersion is d's current state as a Version.
func currentVersion(d *Document) Version {
	v := versionedFields(d)
	v.VersionKey, v.DocumentID = CurrentVersionKey(d), d.DocumentID
	v.UserID = d.VersionUser
	if v.UserID == "" {
		v.UserID = d.UserID
	}
	v.InsertedDate, v.LastModifiedDate = versionTime(v.VersionKey), d.LastModifiedDate
	return v
}

// VersionPage is one page of a document's versions, newest first.
type VersionPage struct {
	Versions []Version
	Next     string
}

// ListVersions lists the versions of the live document (or artifact) id,
// newest first, the current state first, up to limit after the versionKey
// next.
func (d *DB) ListVersions(site, id, next string, limit int) (*VersionPage, error) {
	if next != "" && !ValidVersionKey(next) {
		return nil, ErrBadToken
	}
	page := &VersionPage{Versions: []Version{}}
	err := d.view(func(t *tx) error {
		doc, err := getLiveDoc(t, site, id)
		if err != nil {
			return err
		}
		cur := currentVersion(doc)
		if next == "" {
			page.Versions = append(page.Versions, cur)
		}
		pfx := versionPrefix(site, id)
		seek := append(append([]byte(nil), pfx...), 0xff) // past the newest
		if next != "" {
			seek = versionKey(site, id, next) // <= next; next itself is skipped
		}
		opts := badger.DefaultIteratorOptions
		opts.Reverse, opts.Prefix = true, pfx
		it := t.txn.NewIterator(opts)
		defer it.Close()
		for it.Seek(seek); it.ValidForPrefix(pfx); it.Next() {
			item := it.Item()
			if next != "" && string(item.Key()[len(pfx):]) >= next {
				continue
			}
			if len(page.Versions) == limit {
				page.Next = page.Versions[len(page.Versions)-1].VersionKey
				return nil
			}
			var v Version
			if err := item.Value(func(b []byte) error { return json.Unmarshal(b, &v) }); err != nil {
				return err
			}
			page.Versions = append(page.Versions, v)
		}
		return nil
	})
	return page, err
}

// GetVersion returns version k of the live document (or artifact) id; the
// current version's key returns the current state.
func (d *DB) GetVersion(site, id, k string) (*Version, error) {
	var v Version
	err := d.view(func(t *tx) error {
		doc, err := getLiveDoc(t, site, id)
		if err != nil {
			return err
		}
		if k == CurrentVersionKey(doc) {
			v = currentVersion(doc)
			return nil
		}
		err = t.getJSON(versionKey(site, id, k), &v)
		if errors.Is(err, ErrNotFound) {
			return versionNotFound(k)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &v, nil
}
