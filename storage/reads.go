package storage

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"
)

var jsonUnmarshal = json.Unmarshal

// ErrBadToken is returned for a paging token that this store did not issue.
var ErrBadToken = errors.New("invalid paging token")

// GetDocument returns a document that is not soft-deleted.
func (d *DB) GetDocument(site, id string) (*Document, error) {
	var doc *Document
	err := d.view(func(t *tx) error {
		var err error
		doc, err = getLiveDoc(t, site, id)
		return err
	})
	return doc, err
}

// GetDocumentAny returns a document whether or not it is soft-deleted.
func (d *DB) GetDocumentAny(site, id string) (*Document, error) {
	var doc *Document
	err := d.view(func(t *tx) error {
		var err error
		doc, err = getDoc(t, site, id)
		return err
	})
	return doc, err
}

// GetDocuments returns the live documents among ids, in order, skipping
// missing ones.
func (d *DB) GetDocuments(site string, ids []string) ([]*Document, error) {
	out := make([]*Document, 0, len(ids))
	err := d.view(func(t *tx) error {
		for _, id := range ids {
			doc, err := getLiveDoc(t, site, id)
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			out = append(out, doc)
		}
		return nil
	})
	return out, err
}

// DocumentIDByPath returns the id of the document filed at path.
func (d *DB) DocumentIDByPath(site, path string) (string, error) {
	var id string
	err := d.view(func(t *tx) error {
		b, err := t.getRaw(pathKey(site, path))
		id = string(b)
		return err
	})
	return id, err
}

// GetTags returns a live document's tags sorted by key.
func (d *DB) GetTags(site, doc string) ([]Tag, error) {
	var out []Tag
	err := d.view(func(t *tx) error {
		if _, err := getLiveDoc(t, site, doc); err != nil {
			return err
		}
		return eachTag(t, site, doc, func(tg *Tag) error {
			out = append(out, *tg)
			return nil
		})
	})
	return out, err
}

// GetTag returns one tag of a live document.
func (d *DB) GetTag(site, doc, key string) (*Tag, error) {
	var tg Tag
	err := d.view(func(t *tx) error {
		if _, err := getLiveDoc(t, site, doc); err != nil {
			return err
		}
		return t.getJSON(tagKey(site, doc, key), &tg)
	})
	return &tg, err
}

// GetActions returns a document's actions in order.
func (d *DB) GetActions(site, doc string) ([]Action, error) {
	var out []Action
	err := d.view(func(t *tx) error {
		var err error
		out, err = loadActions(t, site, doc)
		return err
	})
	return out, err
}

// GetManifest returns the manifest of a content object.
func (d *DB) GetManifest(sha string) (*Manifest, error) {
	var m Manifest
	err := d.view(func(t *tx) error { return t.getJSON(manifestKey(sha), &m) })
	return &m, err
}

// OpenContent returns a reader over the content of a live document.
// It fails with ErrNotFound when the document has no content yet.
//
// The record, the manifest and, for content of one chunk, that chunk are
// read in one transaction: every read transaction waits for the synced
// commits under way, and three of them per action cost the pipeline as
// much as its own commits (pipeline/DESIGN.md).
func (d *DB) OpenContent(site, id string) (*ContentReader, *Document, error) {
	var doc *Document
	var r *ContentReader
	err := d.view(func(t *tx) error {
		var err error
		if doc, err = getLiveDoc(t, site, id); err != nil {
			return err
		}
		if !doc.HasContent {
			return ErrNotFound
		}
		var m Manifest
		if err := t.getJSON(manifestKey(doc.ContentSHA256), &m); err != nil {
			return err
		}
		r = &ContentReader{db: d, chunks: m.Chunks, size: m.Size, cur: -1}
		// A chunk that fails to read here is read (and its error
		// reported) by Read, as for content of several chunks.
		if len(m.Chunks) == 1 && r.loadIn(t.txn, 0) == nil {
			r.cur = 0
		} else {
			r.buf = nil
		}
		return nil
	})
	if err != nil {
		return nil, doc, err
	}
	return r, doc, nil
}

// ListOptions selects a page of documents.
type ListOptions struct {
	Limit int
	// From lists documents inserted before this instant (zero: now).
	From time.Time
	// Next and Previous are tokens from an earlier page; at most one is set.
	Next, Previous string
	// SoftDeleted lists soft-deleted documents by deletedDate instead.
	SoftDeleted bool
	// Start and End bound the deletedDate of soft-deleted documents
	// (inclusive start, exclusive end; zero means unbounded).
	Start, End time.Time
	// Ascending lists oldest first (soft-deleted listing only).
	Ascending bool
}

// Page is one page of documents with tokens to the neighbouring pages.
type Page struct {
	Documents      []*Document
	Next, Previous string
}

// ListDocuments lists top-level documents newest first (or soft-deleted
// ones, see ListOptions). Paging goes on through all older documents,
// across day boundaries.
func (d *DB) ListDocuments(site string, o ListOptions) (*Page, error) {
	if o.Limit <= 0 {
		o.Limit = 10
	}
	prefix := insertedPrefix(site)
	if o.SoftDeleted {
		prefix = deletedPrefix(site)
	}
	// lo and hi bound the suffix ("<ts>/<doc>") of the keys to list.
	lo, hi := "", "\xff"
	if !o.From.IsZero() {
		hi = tsHex(o.From)
	}
	if !o.Start.IsZero() {
		lo = tsHex(o.Start)
	}
	if !o.End.IsZero() {
		hi = tsHex(o.End)
	}
	desc := !o.Ascending
	reverse := desc
	var cursor string
	switch {
	case o.Next != "":
		c, err := decodeToken(o.Next)
		if err != nil {
			return nil, err
		}
		cursor = c
	case o.Previous != "":
		c, err := decodeToken(o.Previous)
		if err != nil {
			return nil, err
		}
		cursor = c
		reverse = !reverse
	}
	var ids []string
	var more bool
	err := d.view(func(t *tx) error {
		opts := badger.DefaultIteratorOptions
		opts.PrefetchValues = false
		opts.Reverse = reverse
		opts.Prefix = prefix
		it := t.txn.NewIterator(opts)
		defer it.Close()
		seek := string(prefix) + lo
		if reverse {
			seek = string(prefix) + hi
		}
		if cursor != "" {
			seek = string(prefix) + cursor
		}
		for it.Seek([]byte(seek)); it.ValidForPrefix(prefix); it.Next() {
			suffix := string(it.Item().Key()[len(prefix):])
			if cursor != "" && suffix == cursor {
				continue
			}
			if suffix < lo || suffix >= hi {
				if (reverse && suffix < lo) || (!reverse && suffix >= hi) {
					break
				}
				continue
			}
			if len(ids) == o.Limit {
				more = true
				break
			}
			ids = append(ids, suffix)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if reverse != desc {
		// Paging backwards: put the page back in display order.
		for i, j := 0, len(ids)-1; i < j; i, j = i+1, j-1 {
			ids[i], ids[j] = ids[j], ids[i]
		}
	}
	page := &Page{}
	docIDs := make([]string, len(ids))
	for i, s := range ids {
		docIDs[i] = s[strings.IndexByte(s, '/')+1:]
	}
	err = d.view(func(t *tx) error {
		for _, id := range docIDs {
			doc, err := getDoc(t, site, id)
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			page.Documents = append(page.Documents, doc)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(ids) > 0 {
		forwardMore := more
		backMore := o.Next != "" || (o.Previous != "" && more)
		if o.Previous != "" {
			forwardMore = true
		}
		if forwardMore {
			page.Next = encodeToken(ids[len(ids)-1])
		}
		if backMore {
			page.Previous = encodeToken(ids[0])
		}
	}
	return page, nil
}

func encodeToken(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func decodeToken(tok string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(b) < 18 || b[16] != '/' {
		return "", ErrBadToken
	}
	return string(b), nil
}

// FolderItem is an entry of a folder listing.
type FolderItem struct {
	Name  string
	Entry FolderEntry
	// Doc is the entry's document (ListFolderPage), nil when it is gone.
	Doc *Document
}

// ListFolder lists the entries of folder (""= root): folders first, then
// documents, each sorted by name.
func (d *DB) ListFolder(site, folder string) ([]FolderItem, error) {
	var out []FolderItem
	prefix := folderPrefix(site, folder)
	err := d.view(func(t *tx) error {
		return t.each(prefix, func(k, v []byte) error {
			var e FolderEntry
			if err := json.Unmarshal(v, &e); err != nil {
				return err
			}
			out = append(out, FolderItem{Name: string(k[len(prefix)+2:]), Entry: e})
			return nil
		})
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].Entry.Folder && !out[j].Entry.Folder })
	return out, err
}

// FolderLarger reports whether folder holds more than n entries, reading
// keys only (no entry or document is decoded).
func (d *DB) FolderLarger(site, folder string, n int) (bool, error) {
	var larger bool
	err := d.view(func(t *tx) error {
		larger = t.countMax(folderPrefix(site, folder), n+1) > n
		return nil
	})
	return larger, err
}

// Sites returns the ids of all sites that have been written to.
func (d *DB) Sites() ([]string, error) {
	var out []string
	err := d.view(func(t *tx) error {
		for _, k := range t.keys([]byte(pfxSite)) {
			out = append(out, siteOfKey(string(k[len(pfxSite):])))
		}
		return nil
	})
	return out, err
}

// PendingDetection is a document whose content type is still to be
// detected from its content.
type PendingDetection struct {
	Site, DocumentID, ContentSHA string
}

// PendingDetections lists up to limit documents awaiting content type
// detection (they survive a restart).
func (d *DB) PendingDetections(limit int) ([]PendingDetection, error) {
	var out []PendingDetection
	err := d.view(func(t *tx) error {
		return t.each([]byte(pfxDetect), func(k, v []byte) error {
			if len(out) >= limit {
				return nil
			}
			rest := string(k[len(pfxDetect):])
			i := strings.LastIndexByte(rest, '/')
			out = append(out, PendingDetection{Site: siteOfKey(rest[:i]), DocumentID: rest[i+1:], ContentSHA: string(v)})
			return nil
		})
	})
	return out, err
}
