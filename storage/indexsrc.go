package storage

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/dgraph-io/badger/v4"
)

// DocView is everything the search index holds of a document.
type DocView struct {
	Document   *Document
	Tags       []Tag
	Attributes []DocAttribute
	// Text, when set, is the text the fulltext index holds instead of the
	// content's; NoText keeps the document out of the fulltext index (it
	// stays in the name and folder indexes). Both come from a
	// FulltextOverride (fulltextdoc.go).
	Text   *string
	NoText bool
}

// ViewForIndex returns a document with its tags and attributes, or nil
// when it does not exist or is soft-deleted.
func (d *DB) ViewForIndex(site, id string) (*DocView, error) {
	var v *DocView
	err := d.view(func(t *tx) error {
		var err error
		v, err = viewForIndex(t, site, id)
		return err
	})
	return v, err
}

func viewForIndex(t *tx, site, id string) (*DocView, error) {
	doc, err := getDoc(t, site, id)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if doc.DeletedDate != nil || doc.ArtifactOf != "" {
		return nil, nil // artifacts stay out of the search index (artifacts.go)
	}
	v := &DocView{Document: doc}
	if err := eachTag(t, site, id, func(tg *Tag) error { v.Tags = append(v.Tags, *tg); return nil }); err != nil {
		return nil, err
	}
	err = t.each(docAttrPrefix(site, id), func(_, val []byte) error {
		var a DocAttribute
		if err := json.Unmarshal(val, &a); err != nil {
			return err
		}
		v.Attributes = append(v.Attributes, a)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return v, applyOverride(t, v)
}

// IndexDoc is what the indexer reads of one document: its view (nil when
// it is gone or soft-deleted) and its text.
type IndexDoc struct {
	Ref  DocRef
	View *DocView
	Text string
}

// ViewsForIndex reads the documents of refs, with their text, in one read
// transaction: the content of types extractable reports true for (up to
// maxText bytes), otherwise the text a FULLTEXT action recorded for the
// current content. One transaction matters under a write load: with
// SyncWrites every new Badger transaction waits until the commits already
// under way are synced (the oracle's read watermark), so reading a batch
// of a hundred documents through four transactions each waited for four
// hundred fsyncs, and the indexer fell tens of seconds behind.
func (d *DB) ViewsForIndex(refs []DocRef, extractable func(contentType string) bool, maxText int64) ([]IndexDoc, error) {
	out := make([]IndexDoc, 0, len(refs))
	err := d.view(func(t *tx) error {
		out = out[:0]
		for _, r := range refs {
			v, err := viewForIndex(t, r.Site, r.ID)
			if err != nil {
				return err
			}
			x := IndexDoc{Ref: r, View: v}
			if v != nil && v.Text != nil {
				x.Text = *v.Text
			} else if v != nil && v.Document.ContentSHA256 != "" {
				if x.Text, err = d.indexText(t, r, v.Document, extractable, maxText); err != nil {
					return err
				}
			}
			out = append(out, x)
		}
		return nil
	})
	return out, err
}

// indexText reads doc's text for the index inside t. A missing manifest,
// chunk or text record gives no text, as the separate reads did.
func (d *DB) indexText(t *tx, r DocRef, doc *Document, extractable func(string) bool, maxText int64) (string, error) {
	if !extractable(doc.ContentType) {
		var tr TextRecord
		err := t.getJSON(textKey(r.Site, r.ID, TextFulltext), &tr)
		if err != nil || tr.ContentSHA != doc.ContentSHA256 {
			return "", nil
		}
		if err := resolveText(t, r.Site, r.ID, &tr); err != nil { // textref.go
			return "", err
		}
		return tr.Text, nil
	}
	if !doc.HasContent {
		return "", nil
	}
	var m Manifest
	if err := t.getJSON(manifestKey(doc.ContentSHA256), &m); err != nil {
		return "", nil
	}
	var b []byte
	var buf []byte
	for _, ch := range m.Chunks {
		if int64(len(b)) >= maxText {
			break
		}
		item, err := t.txn.Get(chunkKey(ch.SHA))
		if err != nil {
			return "", nil
		}
		d.touched(int(item.ValueSize()))
		err = item.Value(func(val []byte) error {
			buf, err = decodeChunk(val, buf)
			return err
		})
		if err != nil {
			return "", nil
		}
		b = append(b, buf[:min(int64(len(buf)), maxText-int64(len(b)))]...)
	}
	return string(b), nil
}

// ChangedDocs calls fn for every document whose record, tags or attributes
// were written at a Badger version above since (since 0: every document).
// Deletions are not reported (a purged document leaves no record to
// walk): the indexer reconciles its ids with storage when it was behind.
//
// A full walk (since 0) reads the document records only: every document
// has one, and the index wants nothing of tags or attributes without it.
// A document's keys under one prefix are adjacent, so only a walk over
// several prefixes keeps a set of the documents reported, and that set
// holds the changes since a checkpoint, not every document (it took 11
// MB of heap at 100,000 documents, 110 MB at a million, in quire
// reindex: index/DESIGN.md, "Reindex memory").
func (d *DB) ChangedDocs(since uint64, fn func(DocRef) error) error {
	prefixes := docPrefixes
	if since == 0 {
		prefixes = []string{pfxDoc}
	}
	return d.badgerView(func(txn *badger.Txn) error {
		var seen map[DocRef]bool
		if len(prefixes) > 1 {
			seen = map[DocRef]bool{}
		}
		for _, p := range prefixes {
			var last []byte // the previous key's site/id
			opts := badger.DefaultIteratorOptions
			opts.PrefetchValues = false
			opts.Prefix = []byte(p)
			opts.SinceTs = since
			it := txn.NewIterator(opts)
			for it.Rewind(); it.Valid(); it.Next() {
				k := it.Item().Key()
				if it.Item().Version() <= since {
					continue
				}
				rest := k[len(p):]
				i := bytes.IndexByte(rest, '/')
				if i < 0 {
					continue
				}
				id := rest[i+1:]
				if j := bytes.IndexByte(id, '/'); j >= 0 {
					id = id[:j]
				}
				raw := rest[:i+1+len(id)] // site/id
				if bytes.Equal(raw, last) {
					continue
				}
				last = append(last[:0], raw...)
				r := DocRef{Site: siteOfKey(string(rest[:i])), ID: string(id)}
				if seen != nil {
					if seen[r] {
						continue
					}
					seen[r] = true
				}
				if err := fn(r); err != nil {
					it.Close()
					return err
				}
			}
			it.Close()
		}
		return nil
	})
}

// CountDocs returns the number of document records (all sites, soft-deleted
// included), for progress reports.
func (d *DB) CountDocs() (int, error) {
	n := 0
	err := d.view(func(t *tx) error {
		n = t.count([]byte(pfxDoc))
		return nil
	})
	return n, err
}

// Indexable reports, for each of refs, whether the index should hold it:
// the document exists and is not soft-deleted (as ViewForIndex).
func (d *DB) Indexable(refs []DocRef) ([]bool, error) {
	out := make([]bool, len(refs))
	err := d.view(func(t *tx) error {
		for i, r := range refs {
			doc, err := getDoc(t, r.Site, r.ID)
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			out[i] = doc.DeletedDate == nil && doc.ArtifactOf == ""
		}
		return nil
	})
	return out, err
}
