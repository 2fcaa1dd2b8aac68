package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// An Archive is a set of documents' content to download as one ZIP
// (POST /documents/compress): the entries are fixed when it is made, and
// it holds a reference on each entry's content until it expires, so the
// download serves what was asked for even if the documents change.

// Archive limits.
const (
	MaxArchiveDocuments = 1000  // documents named in one request
	MaxArchiveEntries   = 10000 // files in one archive (documents and artifacts)
)

// ArchiveEntry is one file of an archive.
type ArchiveEntry struct {
	Name        string    `json:"name"`
	ContentSHA  string    `json:"contentSha256"`
	Size        int64     `json:"size"`
	ContentType string    `json:"contentType,omitempty"`
	Modified    time.Time `json:"modified"`
	// Watermarks are the watermark definitions the entry is stamped with
	// (fixed when the archive is made; none without or with a bypass).
	Watermarks []json.RawMessage `json:"watermarks,omitempty"`
}

// Archive is the record of an archive.
type Archive struct {
	ID           string         `json:"id"`
	Entries      []ArchiveEntry `json:"entries"`
	UserID       string         `json:"userId,omitempty"`
	InsertedDate time.Time      `json:"insertedDate"`
	Expires      time.Time      `json:"expires"`
}

// ArchiveItem is a requested document: with ArtifactID that artifact only,
// else the document's content and all its artifacts'.
type ArchiveItem struct {
	DocumentID string `json:"documentId"`
	ArtifactID string `json:"artifactId,omitempty"`
}

// AddArchive is the payload of OpAddArchive.
type AddArchive struct {
	ID      string        `json:"id"`
	Items   []ArchiveItem `json:"items"`
	Expires time.Time     `json:"expires"`
	// BypassWatermark: entries are not stamped (the caller may bypass
	// watermarks, API.md "Watermarks").
	BypassWatermark bool `json:"bypassWatermark,omitempty"`
}

// DeleteArchive is the payload of OpDeleteArchive; with Expired set only
// an archive expired at the command's time is removed (the sweep).
type DeleteArchive struct {
	ID      string `json:"id"`
	Expired bool   `json:"expired,omitempty"`
}

func archiveNotFound(id string) error {
	return &NotFoundError{Msg: fmt.Sprintf("Archive '%s' not found", id)}
}

func applyAddArchive(t *tx, c *Command) (any, error) {
	p, err := decode[AddArchive](c)
	if err != nil {
		return nil, err
	}
	if len(p.Items) == 0 {
		return nil, Invalid("documentIds", "'documentIds' or 'documents' is required")
	}
	if len(p.Items) > MaxArchiveDocuments {
		return nil, Invalid("documentIds", fmt.Sprintf("an archive holds at most %d documents", MaxArchiveDocuments))
	}
	a := Archive{ID: p.ID, UserID: c.User, InsertedDate: c.At, Expires: p.Expires}
	seen := map[string]string{} // entry name → document id
	add := func(name string, d *Document) error {
		if !d.HasContent {
			return nil
		}
		name = ArchiveEntryName(name, d.DocumentID)
		if by, ok := seen[name]; ok {
			if by == d.DocumentID {
				return nil // asked for twice
			}
			// Two paths that name the same entry once made safe: the
			// later one goes beside it under its id, never lost.
			dir, base := splitPath(name)
			if name = d.DocumentID + "-" + base; dir != "" {
				name = dir + "/" + name
			}
			if _, ok := seen[name]; ok {
				return nil
			}
		}
		seen[name] = d.DocumentID
		if len(a.Entries) == MaxArchiveEntries {
			return Invalid("documentIds", fmt.Sprintf("an archive holds at most %d files", MaxArchiveEntries))
		}
		var marks []json.RawMessage
		if !p.BypassWatermark {
			var err error
			if marks, err = docWatermarks(t, c.Site, d.DocumentID); err != nil {
				return err
			}
			if len(marks) > 0 && WatermarkKind(d.ContentType) == "" {
				return Invalid("documentIds", fmt.Sprintf("'%s' carries a watermark and its content of type '%s' cannot be watermarked (PDF, PNG and JPEG can); 'bypassWatermark' (GOVERN) archives it as stored", name, d.ContentType))
			}
		}
		a.Entries = append(a.Entries, ArchiveEntry{Name: name, ContentSHA: d.ContentSHA256, Size: d.ContentLength,
			ContentType: d.ContentType, Modified: d.LastModifiedDate, Watermarks: marks})
		return nil
	}
	for _, it := range p.Items {
		if it.ArtifactID != "" {
			parent, art, err := getArtifact(t, c.Site, it.DocumentID, it.ArtifactID)
			if err != nil {
				return nil, err
			}
			if err := add(artifactName(parent, art.DocumentID), art); err != nil {
				return nil, err
			}
			continue
		}
		d, err := getLiveDoc(t, c.Site, it.DocumentID)
		if err != nil {
			return nil, err
		}
		if d.ArtifactOf != "" {
			return nil, docNotFound(it.DocumentID)
		}
		if err := add(d.Path, d); err != nil {
			return nil, err
		}
		for _, k := range t.keys(artifactPrefix(c.Site, d.DocumentID)) {
			id := string(k[strings.LastIndexByte(string(k), '/')+1:])
			art, err := getDoc(t, c.Site, id)
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, err
			}
			if art.ArtifactCategory == ThumbnailCategory && c.Rules >= RulesThumbnailsWithContent {
				// A thumbnail is the console's picture of the content,
				// made for every PDF and image: an archive of documents
				// leaves it out (named by its artifactId, it is in).
				continue
			}
			if err := add(artifactName(d, id), art); err != nil {
				return nil, err
			}
		}
	}
	for _, e := range a.Entries {
		var m Manifest
		if err := t.getJSON(manifestKey(e.ContentSHA), &m); err != nil {
			return nil, err
		}
		if err := attachManifest(t, m); err != nil {
			return nil, err
		}
	}
	return len(a.Entries), t.setJSON(archiveKey(c.Site, a.ID), a)
}

// ArchiveEntryName is the ZIP entry name of a document at docPath: a
// relative name that no unzip tool, naive or not, writes outside the
// folder it extracts to (zip-slip). Document paths are FormKiQ's free-text
// keys and are stored as given (API.md "Compress documents"); here "\" is
// a separator as "/" is (Windows tools split on both), "." and empty
// segments go, ".." goes up only within the name (never above its root),
// a drive letter ("C:") or any other ':' becomes '_', and control
// characters become '_'. A name left empty is the document's id.
func ArchiveEntryName(docPath, docID string) string {
	var out []string
	for _, seg := range strings.FieldsFunc(docPath, func(r rune) bool { return r == '/' || r == '\\' }) {
		switch seg {
		case ".":
			continue
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			continue
		}
		seg = strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f || r == ':' {
				return '_'
			}
			return r
		}, seg)
		out = append(out, seg)
	}
	if len(out) == 0 {
		return docID
	}
	return strings.Join(out, "/")
}

// artifactName is where an artifact goes in an archive: beside its
// document, under <path>.artifacts/.
func artifactName(parent *Document, artifactID string) string {
	return parent.Path + ".artifacts/" + artifactID
}

func applyDeleteArchive(t *tx, c *Command) (any, error) {
	p, err := decode[DeleteArchive](c)
	if err != nil {
		return nil, err
	}
	var a Archive
	switch err := t.getJSON(archiveKey(c.Site, p.ID), &a); {
	case errors.Is(err, ErrNotFound):
		return nil, archiveNotFound(p.ID)
	case err != nil:
		return nil, err
	}
	if p.Expired && c.At.Before(a.Expires) {
		return false, nil
	}
	for _, e := range a.Entries {
		if err := releaseManifest(t, e.ContentSHA); err != nil {
			return nil, err
		}
	}
	return true, t.del(archiveKey(c.Site, p.ID))
}

// GetArchive returns an archive that has not expired at time at.
func (d *DB) GetArchive(site, id string, at time.Time) (*Archive, error) {
	var a Archive
	err := d.view(func(t *tx) error { return t.getJSON(archiveKey(site, id), &a) })
	if errors.Is(err, ErrNotFound) || err == nil && !at.Before(a.Expires) {
		return nil, archiveNotFound(id)
	}
	if err != nil {
		return nil, err
	}
	return &a, nil
}

// ExpiredArchives lists up to limit archives of every site expired at at.
func (d *DB) ExpiredArchives(at time.Time, limit int) ([]DocRef, error) {
	return expired(d, pfxArchive, at, limit, func(v []byte) (string, time.Time, error) {
		var a Archive
		err := json.Unmarshal(v, &a)
		return a.ID, a.Expires, err
	})
}

// expired walks records under prefix (<prefix><site>/<id>) and lists those
// whose expiry is not after at.
func expired(d *DB, prefix string, at time.Time, limit int, read func(v []byte) (string, time.Time, error)) ([]DocRef, error) {
	var out []DocRef
	err := d.view(func(t *tx) error {
		err := t.each([]byte(prefix), func(k, v []byte) error {
			id, exp, err := read(v)
			if err != nil {
				return err
			}
			if at.Before(exp) {
				return nil
			}
			rest := string(k[len(prefix):])
			out = append(out, DocRef{Site: siteOfKey(rest[:strings.IndexByte(rest, '/')]), ID: id})
			if len(out) >= limit {
				return errStop
			}
			return nil
		})
		if errors.Is(err, errStop) {
			err = nil
		}
		return err
	})
	return out, err
}
