package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"
)

var zeroTime time.Time

// Resource types of a document (FormKiQ 1.19.1 resourceType).
const (
	ResourceDocument = "DOCUMENT"
	ResourceDossier  = "DOSSIER"
	ResourceDeepLink = "DEEP_LINK"
)

// Metadata is one FormKiQ metadata entry: a key with a value or values.
type Metadata struct {
	Key    string   `json:"key"`
	Value  string   `json:"value,omitempty"`
	Values []string `json:"values,omitempty"`
}

// Document is the stored document record.
type Document struct {
	SiteID              string     `json:"siteId"`
	DocumentID          string     `json:"documentId"`
	Path                string     `json:"path"`
	DeepLinkPath        string     `json:"deepLinkPath,omitempty"`
	ResourceType        string     `json:"resourceType,omitempty"`
	ContentType         string     `json:"contentType,omitempty"`
	HasContent          bool       `json:"hasContent,omitempty"`
	ContentLength       int64      `json:"contentLength,omitempty"`
	ContentSHA256       string     `json:"contentSha256,omitempty"` // manifest id
	Checksum            string     `json:"checksum,omitempty"`
	ChecksumType        string     `json:"checksumType,omitempty"`
	Width               string     `json:"width,omitempty"`
	Height              string     `json:"height,omitempty"`
	UserID              string     `json:"userId,omitempty"`
	InsertedDate        time.Time  `json:"insertedDate"`
	LastModifiedDate    time.Time  `json:"lastModifiedDate"`
	DeletedDate         *time.Time `json:"deletedDate,omitempty"`
	BelongsToDocumentID string     `json:"belongsToDocumentId,omitempty"`
	Children            []string   `json:"children,omitempty"`
	Metadata            []Metadata `json:"metadata,omitempty"`
	Artifacts           bool       `json:"artifacts,omitempty"`
	ArtifactCategory    string     `json:"artifactCategory,omitempty"`
	// OCRText is set while the document holds OCR text set by hand (PUT
	// /documents/{id}/ocr), which FULLTEXT indexes as an OCR action's.
	OCRText bool `json:"ocrText,omitempty"`
	// ArtifactOf is set on an artifact's record: its document's id
	// (artifacts.go). ArtifactCount and PromotedArtifactID are a
	// document's: how many artifacts it has, and the one it serves.
	ArtifactOf         string `json:"artifactOf,omitempty"`
	ArtifactCount      int    `json:"artifactCount,omitempty"`
	PromotedArtifactID string `json:"promotedArtifactId,omitempty"`
	// VersionKey is the key of the current state, VersionUser who made it
	// and VersionCount how many earlier states are kept (versions.go).
	VersionKey   string `json:"versionKey,omitempty"`
	VersionUser  string `json:"versionUser,omitempty"`
	VersionCount int    `json:"versionCount,omitempty"`
	// DetectContentType is set while the content type is still to be
	// detected from the uploaded bytes.
	DetectContentType bool `json:"detectContentType,omitempty"`
	// ActionSeq is the number of actions ever added (their next sequence).
	ActionSeq int `json:"actionSeq,omitempty"`
	// ActionStatuses are the listable statuses its actions are in (the
	// as/ index holds the same).
	ActionStatuses []string `json:"actionStatuses,omitempty"`
	// ThumbnailID is the artifact holding the document's first-page
	// thumbnail (thumbnails.go): kept through new content until the
	// pipeline has made the new one.
	ThumbnailID string `json:"thumbnailId,omitempty"`
}

// NewDocument is one document to create in OpAddDocuments.
type NewDocument struct {
	Document   Document         `json:"document"`
	Tags       []Tag            `json:"tags,omitempty"`
	Attributes []AttributeInput `json:"attributes,omitempty"`
	Actions    []Action         `json:"actions,omitempty"`
	Content    *Manifest        `json:"content,omitempty"`
	// Chunks carries small content inline so that the document and its
	// bytes are written in one transaction.
	Chunks []Chunk `json:"chunks,omitempty"`
	// DefaultActions: the request named no actions, so the document gets
	// its site's default processing (defaultactions.go) when Actions is
	// empty.
	DefaultActions bool `json:"defaultActions,omitempty"`
}

// AddDocuments is the payload of OpAddDocuments: a parent document first,
// then its children (whose BelongsToDocumentID is the parent's id).
type AddDocuments struct {
	Docs []NewDocument `json:"docs"`
	// Writer is the caller's rights, checked here against the folders
	// the documents go to (actionrights.go checkWriter).
	Writer *ActionActor `json:"writer,omitempty"`
}

// AddDocumentsResult reports the paths the documents got (a duplicate path
// is renamed), by document id.
type AddDocumentsResult struct {
	Paths map[string]string
	// DocumentIDs are the created documents in the command's order (the
	// parent first): a repeated request (Idempotency-Key) answers them.
	DocumentIDs []string `json:",omitempty"`
}

func applyAddDocuments(t *tx, c *Command) (any, error) {
	p, err := decode[AddDocuments](c)
	if err != nil {
		return nil, err
	}
	if err := limitsErr(CheckNewDocuments(p.Docs)); err != nil {
		return nil, err
	}
	if err := countDocuments(t, c.Site, int64(len(p.Docs))); err != nil {
		return nil, err
	}
	if p.Writer != nil {
		for i := range p.Docs {
			if err := checkWriter(t, c.Site, p.Writer, p.Docs[i].Document.Path); err != nil {
				return nil, err
			}
		}
	}
	res := &AddDocumentsResult{Paths: map[string]string{}}
	for i := range p.Docs {
		nd := &p.Docs[i]
		d := &nd.Document
		d.SiteID, d.ThumbnailID = c.Site, ""
		if d.UserID == "" {
			d.UserID = c.User
		}
		d.InsertedDate, d.LastModifiedDate = c.At, c.At
		ok, err := t.exists(docKey(c.Site, d.DocumentID))
		if err != nil {
			return nil, err
		}
		if ok {
			return nil, &ConflictError{Msg: fmt.Sprintf("documentId '%s' already exists", d.DocumentID)}
		}
		t.markFresh(c.Site, d.DocumentID)
		if err := putChunks(t, nd.Chunks); err != nil {
			return nil, err
		}
		if nd.Content != nil {
			if err := checkContentSize(t, c.Site, nd.Content.Size); err != nil {
				return nil, err
			}
			if err := attachManifest(t, *nd.Content); err != nil {
				return nil, err
			}
			d.HasContent, d.ContentSHA256, d.ContentLength = true, nd.Content.SHA256, nd.Content.Size
		}
		if err := checkContentTypeAllowed(t, c.Site, d.ContentType, nd.Content != nil); err != nil {
			return nil, err
		}
		if d.Path, err = claimPath(t, c, d.Path, d.DocumentID); err != nil {
			return nil, err
		}
		res.Paths[d.DocumentID] = d.Path
		res.DocumentIDs = append(res.DocumentIDs, d.DocumentID)
		if err := checkNotificationSender(t, c.Site, nd.Actions); err != nil {
			return nil, err
		}
		if err := addActions(t, c, d, nd.Actions); err != nil {
			return nil, err
		}
		if nd.DefaultActions && len(nd.Actions) == 0 {
			if err := addDefaultActions(t, c, d); err != nil {
				return nil, err
			}
		}
		if d.BelongsToDocumentID == "" {
			if err := t.set(insertedKey(c.Site, d.InsertedDate, d.DocumentID), nil); err != nil {
				return nil, err
			}
		}
		if err := putDoc(t, d); err != nil {
			return nil, err
		}
		if err := writeTags(t, c, d.DocumentID, nd.Tags, tagsAdd); err != nil {
			return nil, err
		}
		// Always, also without attributes: the schema's required keys,
		// its defaults and numbering sequences apply to every new document.
		if err := writeDocAttributes(t, c, d.DocumentID, nd.Attributes, AttrAdd, true); err != nil {
			return nil, err
		}
		if started, err := applyRules(t, c, d); err != nil { // rulesets.go
			return nil, err
		} else if started {
			if err := putDocActions(t, d); err != nil {
				return nil, err
			}
		}
	}
	return res, ensureSite(t, c)
}

// Site is the record of a site that has been written to.
type Site struct {
	SiteID       string    `json:"siteId"`
	Title        string    `json:"title,omitempty"` // POST /sites
	InsertedDate time.Time `json:"insertedDate"`
}

func ensureSite(t *tx, c *Command) error {
	ok, err := t.exists(siteKey(c.Site))
	if err != nil || ok {
		return err
	}
	return t.setJSON(siteKey(c.Site), Site{SiteID: c.Site, InsertedDate: c.At})
}

// FolderEntry is one entry of the folder tree: a folder, or a document
// filed in its parent folder.
type FolderEntry struct {
	Folder       bool      `json:"folder,omitempty"`
	DocumentID   string    `json:"documentId,omitempty"`
	InsertedDate time.Time `json:"insertedDate"`
	UserID       string    `json:"userId,omitempty"`
}

// splitPath returns the folder and the file name of a document path.
func splitPath(p string) (dir, name string) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "", p
	}
	return p[:i], p[i+1:]
}

// dedupPath returns FormKiQ's rename of a taken path: "name (<id>).ext".
func dedupPath(p, id string) string {
	dir, name := splitPath(p)
	ext := path.Ext(name)
	if ext == name {
		ext = ""
	}
	name = strings.TrimSuffix(name, ext) + " (" + id + ")" + ext
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// claimPath reserves p for doc in the path index and the folder tree,
// creating missing parent folders. A path held by another document is
// renamed as FormKiQ does; the final path is returned.
func claimPath(t *tx, c *Command, p, doc string) (string, error) {
	owner, err := t.getRaw(pathKey(c.Site, p))
	switch {
	case err == nil && string(owner) != doc:
		p = dedupPath(p, doc)
	case err != nil && !errors.Is(err, ErrNotFound):
		return "", err
	}
	if err := t.set(pathKey(c.Site, p), []byte(doc)); err != nil {
		return "", err
	}
	dir, name := splitPath(p)
	if err := t.setJSON(folderKey(c.Site, dir, false, name), FolderEntry{DocumentID: doc, InsertedDate: c.At, UserID: c.User}); err != nil {
		return "", err
	}
	return p, ensureFolders(t, c, dir)
}

// ensureFolders creates dir and its missing parents in the folder tree.
func ensureFolders(t *tx, c *Command, dir string) error {
	for dir != "" {
		parent, fname := splitPath(dir)
		k := folderKey(c.Site, parent, true, fname)
		ok, err := t.exists(k)
		if err != nil {
			return err
		}
		if ok {
			break
		}
		if err := t.setJSON(k, FolderEntry{Folder: true, InsertedDate: c.At, UserID: c.User}); err != nil {
			return err
		}
		dir = parent
	}
	return nil
}

// releasePath removes doc's entry for p from the path index and the folder
// tree. Folders stay, as in FormKiQ.
func releasePath(t *tx, site, p, doc string) error {
	owner, err := t.getRaw(pathKey(site, p))
	if errors.Is(err, ErrNotFound) || (err == nil && string(owner) != doc) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := t.del(pathKey(site, p)); err != nil {
		return err
	}
	dir, name := splitPath(p)
	return t.del(folderKey(site, dir, false, name))
}

func getDoc(t *tx, site, id string) (*Document, error) {
	var d Document
	if err := t.getJSON(docKey(site, id), &d); err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, docNotFound(id)
		}
		return nil, err
	}
	return &d, nil
}

// getLiveDoc returns a document that is not soft-deleted, or an artifact
// whose document is not.
func getLiveDoc(t *tx, site, id string) (*Document, error) {
	d, err := getDoc(t, site, id)
	if err != nil {
		return nil, err
	}
	if d.DeletedDate != nil || !artifactReachable(t, site, d) {
		return nil, docNotFound(id)
	}
	return d, nil
}

// UpdateDocument is the payload of OpUpdateDocument. Nil fields are left
// as they are.
type UpdateDocument struct {
	DocumentID   string  `json:"documentId"`
	Path         *string `json:"path,omitempty"`
	DeepLinkPath *string `json:"deepLinkPath,omitempty"`
	ContentType  *string `json:"contentType,omitempty"`
	Width        *string `json:"width,omitempty"`
	Height       *string `json:"height,omitempty"`
	Checksum     *string `json:"checksum,omitempty"`
	ChecksumType *string `json:"checksumType,omitempty"`
	// ArtifactCategory is an artifact's category (artifacts.go).
	ArtifactCategory *string    `json:"artifactCategory,omitempty"`
	Metadata         []Metadata `json:"metadata,omitempty"`
	// Attributes overwrite the stored attributes of the same keys.
	Attributes []AttributeInput `json:"attributes,omitempty"`
	Tags       []Tag            `json:"tags,omitempty"`
	Actions    []Action         `json:"actions,omitempty"`
	Content    *Manifest        `json:"content,omitempty"`
	Chunks     []Chunk          `json:"chunks,omitempty"`
	// Children are new child documents added to this one.
	Children []NewDocument `json:"children,omitempty"`
	// Writer is the caller's rights, checked here against the
	// document's folder (and the new path's) (actionrights.go checkWriter).
	Writer *ActionActor `json:"writer,omitempty"`
	// DefaultActions: the request named no actions, so new content (a
	// new content version) gets the site's default processing
	// (defaultactions.go) when Actions is empty.
	DefaultActions bool `json:"defaultActions,omitempty"`
}

func applyUpdateDocument(t *tx, c *Command) (any, error) {
	p, err := decode[UpdateDocument](c)
	if err != nil {
		return nil, err
	}
	if err := limitsErr(CheckUpdateDocument(p)); err != nil {
		return nil, err
	}
	d, err := getLiveDoc(t, c.Site, p.DocumentID)
	if err != nil {
		return nil, err
	}
	if p.Writer != nil {
		wp, err := writerPath(t, c.Site, d)
		if err != nil {
			return nil, err
		}
		paths := []string{wp}
		if p.Path != nil {
			paths = append(paths, *p.Path)
		}
		if err := checkWriter(t, c.Site, p.Writer, paths...); err != nil {
			return nil, err
		}
	}
	if err := checkUpdateMutable(t, c, d, p); err != nil {
		return nil, err
	}
	ver, err := startVersion(t, d, p.Content != nil) // versions.go
	if err != nil {
		return nil, err
	}
	if d.ArtifactOf != "" && len(p.Children) > 0 {
		return nil, Invalid("documents", "an artifact cannot have child documents")
	}
	if d.ArtifactOf != "" && len(p.Actions) > 0 {
		return nil, Invalid("actions", "actions cannot be added to an artifact")
	}
	if p.Path != nil && *p.Path != d.Path && d.ArtifactOf != "" {
		d.Path = *p.Path // an artifact holds no place in the folder tree
	} else if p.Path != nil && *p.Path != d.Path {
		if err := releasePath(t, c.Site, d.Path, d.DocumentID); err != nil {
			return nil, err
		}
		if d.Path, err = claimPath(t, c, *p.Path, d.DocumentID); err != nil {
			return nil, err
		}
	}
	setIf := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	setIf(&d.DeepLinkPath, p.DeepLinkPath)
	setIf(&d.ContentType, p.ContentType)
	setIf(&d.Width, p.Width)
	setIf(&d.Height, p.Height)
	setIf(&d.Checksum, p.Checksum)
	setIf(&d.ChecksumType, p.ChecksumType)
	setIf(&d.ArtifactCategory, p.ArtifactCategory)
	if p.ContentType != nil {
		d.DetectContentType = false
	}
	if len(p.Metadata) > 0 {
		d.Metadata = mergeMetadata(d.Metadata, p.Metadata)
		if len(d.Metadata) > MaxMetadata {
			return nil, Invalid("metadata", fmt.Sprintf("maximum number of metadata is %d", MaxMetadata))
		}
	}
	if len(p.Attributes) > 0 {
		if err := writeDocAttributes(t, c, d.DocumentID, p.Attributes, AttrSet, false); err != nil {
			return nil, err
		}
	}
	if err := putChunks(t, p.Chunks); err != nil {
		return nil, err
	}
	if p.Content != nil {
		if err := replaceContent(t, d, *p.Content); err != nil {
			return nil, err
		}
	}
	if p.Content != nil || p.ContentType != nil {
		if err := checkContentTypeAllowed(t, c.Site, d.ContentType, p.Content != nil); err != nil {
			return nil, err
		}
	}
	if err := checkNotificationSender(t, c.Site, p.Actions); err != nil {
		return nil, err
	}
	if err := addActions(t, c, d, p.Actions); err != nil {
		return nil, err
	}
	if p.DefaultActions && len(p.Actions) == 0 && newContentVersion(&ver.prev, d) {
		if err := addDefaultActions(t, c, d); err != nil {
			return nil, err
		}
	}
	if p.Content != nil || p.ContentType != nil {
		if err := settleDefaults(t, c, d); err != nil { // defaultactions.go
			return nil, err
		}
	}
	if len(p.Tags) > 0 {
		if err := writeTags(t, c, d.DocumentID, p.Tags, tagsUpdate); err != nil {
			return nil, err
		}
	}
	res := &AddDocumentsResult{Paths: map[string]string{d.DocumentID: d.Path}}
	if len(p.Children) > 0 {
		sub := &Command{Op: OpAddDocuments, Site: c.Site, User: c.User, At: c.At, Rules: c.Rules}
		for i := range p.Children {
			p.Children[i].Document.BelongsToDocumentID = d.DocumentID
			d.Children = append(d.Children, p.Children[i].Document.DocumentID)
		}
		sub.Data, err = json.Marshal(AddDocuments{Docs: p.Children})
		if err != nil {
			return nil, err
		}
		v, err := applyAddDocuments(t, sub)
		if err != nil {
			return nil, err
		}
		for k, v := range v.(*AddDocumentsResult).Paths {
			res.Paths[k] = v
		}
	}
	if err := ver.finish(t, c, d); err != nil { // versions.go
		return nil, err
	}
	d.LastModifiedDate = c.At
	if _, err := applyRules(t, c, d); err != nil { // rulesets.go
		return nil, err
	}
	return res, putDoc(t, d)
}

// mergeMetadata sets the entries of upd on cur (an entry with neither value
// nor values removes the key) and returns them sorted by key.
func mergeMetadata(cur, upd []Metadata) []Metadata {
	m := make(map[string]Metadata, len(cur)+len(upd))
	for _, e := range cur {
		m[e.Key] = e
	}
	for _, e := range upd {
		if e.Value == "" && len(e.Values) == 0 {
			delete(m, e.Key)
			continue
		}
		m[e.Key] = e
	}
	out := make([]Metadata, 0, len(m))
	for _, e := range m {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func replaceContent(t *tx, d *Document, m Manifest) error {
	if err := checkContentSize(t, d.SiteID, m.Size); err != nil {
		return err
	}
	if err := attachManifest(t, m); err != nil {
		return err
	}
	if d.HasContent {
		if err := releaseManifest(t, d.ContentSHA256); err != nil {
			return err
		}
	}
	d.HasContent, d.ContentSHA256, d.ContentLength = true, m.SHA256, m.Size
	return nil
}

// CommitContent is the payload of OpCommitContent: uploaded content becomes
// the document's content.
type CommitContent struct {
	DocumentID   string    `json:"documentId"`
	Content      Manifest  `json:"content"`
	Chunks       []Chunk   `json:"chunks,omitempty"`
	Checksum     string    `json:"checksum,omitempty"`
	ChecksumType string    `json:"checksumType,omitempty"`
	ContentType  string    `json:"contentType,omitempty"`
	NotAfter     time.Time `json:"notAfter,omitempty"`
	// DefaultActions: new content of a document that had content (a new
	// content version) gets the site's default processing
	// (defaultactions.go). A document's first content gets none here: the
	// request that created the document chose its actions.
	DefaultActions bool `json:"defaultActions,omitempty"`
}

func applyCommitContent(t *tx, c *Command) (any, error) {
	p, err := decode[CommitContent](c)
	if err != nil {
		return nil, err
	}
	if err := limitsErr(CheckContentType(p.ContentType)); err != nil {
		return nil, err
	}
	d, err := getLiveDoc(t, c.Site, p.DocumentID)
	if err != nil {
		return nil, err
	}
	if err := checkMutable(t, c, d); err != nil {
		return nil, err
	}
	ver, err := startVersion(t, d, true) // versions.go
	if err != nil {
		return nil, err
	}
	if err := putChunks(t, p.Chunks); err != nil {
		return nil, err
	}
	if err := replaceContent(t, d, p.Content); err != nil {
		return nil, err
	}
	if p.ChecksumType != "" {
		d.Checksum, d.ChecksumType = p.Checksum, p.ChecksumType
	}
	known := p.ContentType
	if known == "" && !d.DetectContentType {
		known = d.ContentType
	}
	if err := checkContentTypeAllowed(t, c.Site, known, true); err != nil {
		return nil, err
	}
	if p.ContentType != "" {
		d.ContentType, d.DetectContentType = p.ContentType, false
	} else if d.ContentType == "" || d.DetectContentType {
		d.DetectContentType = true
		if err := t.set(detectKey(c.Site, d.DocumentID), []byte(d.ContentSHA256)); err != nil {
			return nil, err
		}
	}
	if p.DefaultActions && newContentVersion(&ver.prev, d) {
		if err := addDefaultActions(t, c, d); err != nil {
			return nil, err
		}
	}
	if err := settleDefaults(t, c, d); err != nil { // defaultactions.go
		return nil, err
	}
	if err := ver.finish(t, c, d); err != nil { // versions.go
		return nil, err
	}
	d.LastModifiedDate = c.At
	if _, err := applyRules(t, c, d); err != nil { // rulesets.go
		return nil, err
	}
	return d, putDoc(t, d)
}

// SetContentType is the payload of OpSetContentType.
type SetContentType struct {
	DocumentID  string `json:"documentId"`
	ContentSHA  string `json:"contentSha256"` // only applies if the content is still this
	ContentType string `json:"contentType"`
}

func applySetContentType(t *tx, c *Command) (any, error) {
	p, err := decode[SetContentType](c)
	if err != nil {
		return nil, err
	}
	d, err := getDoc(t, c.Site, p.DocumentID)
	if err != nil {
		return nil, err
	}
	if !d.DetectContentType || d.ContentSHA256 != p.ContentSHA {
		return false, t.del(detectKey(c.Site, d.DocumentID))
	}
	d.ContentType, d.DetectContentType = p.ContentType, false
	if err := t.del(detectKey(c.Site, d.DocumentID)); err != nil {
		return nil, err
	}
	if err := settleDefaults(t, c, d); err != nil { // defaultactions.go
		return nil, err
	}
	if _, err := applyRules(t, c, d); err != nil { // rulesets.go
		return nil, err
	}
	return true, putDoc(t, d)
}

// DocumentRef names a document in a command payload.
type DocumentRef struct {
	DocumentID string `json:"documentId"`
}

func applySoftDelete(t *tx, c *Command) (any, error) {
	p, err := decode[DocumentRef](c)
	if err != nil {
		return nil, err
	}
	d, err := getLiveDoc(t, c.Site, p.DocumentID)
	if err != nil {
		return nil, err
	}
	if d.ArtifactOf != "" {
		return nil, docNotFound(p.DocumentID) // artifacts go with OpDeleteArtifact
	}
	if err := checkMutable(t, c, d); err != nil {
		return nil, err
	}
	if err := releasePath(t, c.Site, d.Path, d.DocumentID); err != nil {
		return nil, err
	}
	if d.BelongsToDocumentID == "" {
		if err := t.del(insertedKey(c.Site, d.InsertedDate, d.DocumentID)); err != nil {
			return nil, err
		}
		if err := t.set(deletedKey(c.Site, c.At, d.DocumentID), nil); err != nil {
			return nil, err
		}
	}
	at := c.At
	d.DeletedDate = &at
	return nil, putDoc(t, d)
}

func applyRestore(t *tx, c *Command) (any, error) {
	p, err := decode[DocumentRef](c)
	if err != nil {
		return nil, err
	}
	d, err := getDoc(t, c.Site, p.DocumentID)
	if err != nil {
		return nil, err
	}
	if d.DeletedDate == nil || d.ArtifactOf != "" {
		return nil, docNotFound(p.DocumentID)
	}
	if d.BelongsToDocumentID == "" {
		if err := t.del(deletedKey(c.Site, *d.DeletedDate, d.DocumentID)); err != nil {
			return nil, err
		}
		if err := t.set(insertedKey(c.Site, d.InsertedDate, d.DocumentID), nil); err != nil {
			return nil, err
		}
	}
	d.DeletedDate = nil
	if d.Path, err = claimPath(t, c, d.Path, d.DocumentID); err != nil {
		return nil, err
	}
	return nil, putDoc(t, d)
}

func applyDeleteDocument(t *tx, c *Command) (any, error) {
	p, err := decode[DocumentRef](c)
	if err != nil {
		return nil, err
	}
	d, err := getDoc(t, c.Site, p.DocumentID)
	if err != nil {
		return nil, err
	}
	if d.ArtifactOf != "" {
		return nil, docNotFound(p.DocumentID) // artifacts go with OpDeleteArtifact
	}
	// Take the count before the records go (see countDocuments).
	if err := countDocuments(t, c.Site, 0); err != nil {
		return nil, err
	}
	n, err := deleteDoc(t, c, d)
	if err != nil {
		return nil, err
	}
	return nil, countDocuments(t, c.Site, -n)
}
