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
}

// ViewForIndex returns a document with its tags and attributes, or nil
// when it does not exist or is soft-deleted.
func (d *DB) ViewForIndex(site, id string) (*DocView, error) {
	var v *DocView
	err := d.view(func(t *tx) error {
		doc, err := getDoc(t, site, id)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if doc.DeletedDate != nil {
			return nil
		}
		v = &DocView{Document: doc}
		if err := eachTag(t, site, id, func(tg *Tag) error { v.Tags = append(v.Tags, *tg); return nil }); err != nil {
			return err
		}
		return t.each(docAttrPrefix(site, id), func(_, val []byte) error {
			var a DocAttribute
			if err := json.Unmarshal(val, &a); err != nil {
				return err
			}
			v.Attributes = append(v.Attributes, a)
			return nil
		})
	})
	return v, err
}

// ChangedDocs calls fn for every document whose record, tags or attributes
// were written at a Badger version above since (since 0: every document).
// Deletions are not reported (a purged document leaves no record to
// walk): the indexer reconciles its ids with storage when it was behind.
func (d *DB) ChangedDocs(since uint64, fn func(DocRef) error) error {
	return d.badgerView(func(txn *badger.Txn) error {
		seen := map[DocRef]bool{}
		for _, p := range docPrefixes {
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
				r := DocRef{Site: siteOfKey(string(rest[:i])), ID: string(id)}
				if seen[r] {
					continue
				}
				seen[r] = true
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
		n = len(t.keys([]byte(pfxDoc)))
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
			out[i] = doc.DeletedDate == nil
		}
		return nil
	})
	return out, err
}
