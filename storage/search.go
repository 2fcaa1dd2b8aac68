package storage

import (
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/dgraph-io/badger/v4"
)

// IndexMatch selects the values of one tag or attribute key. Values are in
// index form: attribute numbers as EncodeNumber, dates normalized.
type IndexMatch struct {
	Key        string
	Eq         *string
	EqOr       []string
	BeginsWith *string
	Range      *IndexRange
}

// IndexRange is an inclusive range. Numeric compares parsed numbers (tag
// values are stored as written).
type IndexRange struct {
	Start, End string
	Numeric    bool
}

func (m *IndexMatch) matchValue(v string) bool {
	switch {
	case m.Eq != nil:
		return v == *m.Eq
	case m.EqOr != nil:
		for _, x := range m.EqOr {
			if v == x {
				return true
			}
		}
		return false
	case m.BeginsWith != nil:
		return strings.HasPrefix(v, *m.BeginsWith)
	case m.Range != nil:
		if m.Range.Numeric {
			n, err := strconv.ParseFloat(v, 64)
			lo, err1 := strconv.ParseFloat(m.Range.Start, 64)
			hi, err2 := strconv.ParseFloat(m.Range.End, 64)
			return err == nil && err1 == nil && err2 == nil && n >= lo && n <= hi
		}
		return v >= m.Range.Start && v <= m.Range.End
	}
	return true
}

// SearchHit is a document found by an index search, with the value that
// matched.
type SearchHit struct {
	Document *Document
	Key      string
	Value    string // index form
}

// SearchQuery is an exact search over the tag or attribute index: Primary
// drives the iteration (and the order of results); every match in And must
// hold too on the same document.
type SearchQuery struct {
	Attribute bool // attribute index, else tag index
	Primary   IndexMatch
	And       []IndexMatch
	// AndTags are tag matches combined with an attribute search.
	AndTags []IndexMatch
	// DocumentIDs, when set, restricts results to these documents.
	DocumentIDs map[string]bool
}

func (q *SearchQuery) pfx() string {
	if q.Attribute {
		return pfxAttrIndex
	}
	return pfxTagIndex
}

// Search runs q in site and returns up to limit hits after the token after,
// and the token of the next page ("" at the end). Soft-deleted documents
// are skipped; a document matching several values appears once a page.
func (d *DB) Search(site string, q SearchQuery, after string, limit int) ([]SearchHit, string, error) {
	var start []byte
	if after != "" {
		b, err := base64.RawURLEncoding.DecodeString(after)
		if err != nil {
			return nil, "", ErrBadToken
		}
		start = b
	}
	base := []byte(q.pfx() + sk(site) + "/" + q.Primary.Key + "\x00")
	// The scanned span: a value prefix narrows it, a range seeks to its start.
	var scan []byte
	seek := base
	switch {
	case q.Primary.Eq != nil:
		scan = append(append(append([]byte(nil), base...), *q.Primary.Eq...), 0)
		seek = scan
	case q.Primary.BeginsWith != nil:
		scan = append(append([]byte(nil), base...), *q.Primary.BeginsWith...)
		seek = scan
	case q.Primary.Range != nil && !q.Primary.Range.Numeric:
		scan = base
		seek = append(append([]byte(nil), base...), q.Primary.Range.Start...)
	default:
		scan = base
	}
	if start != nil {
		if !bytes.HasPrefix(start, scan) {
			return nil, "", ErrBadToken
		}
		if bytes.Compare(start, seek) >= 0 {
			seek = append(append([]byte(nil), start...), 0) // strictly after
		}
	}
	var hits []SearchHit
	var next string
	seen := map[string]bool{}
	err := d.view(func(t *tx) error {
		opts := badger.DefaultIteratorOptions
		opts.PrefetchValues = false
		opts.Prefix = scan
		it := t.txn.NewIterator(opts)
		defer it.Close()
		for it.Seek(seek); it.ValidForPrefix(scan); it.Next() {
			k := it.Item().Key()
			rest := k[len(base):]
			i := bytes.LastIndexByte(rest, 0)
			if i < 0 {
				continue
			}
			val, doc := string(rest[:i]), string(rest[i+1:])
			if r := q.Primary.Range; r != nil && !r.Numeric && val > r.End {
				break
			}
			if !q.Primary.matchValue(val) {
				continue
			}
			if q.DocumentIDs != nil && !q.DocumentIDs[doc] {
				continue
			}
			if seen[doc] {
				continue
			}
			if len(hits) == limit {
				next = base64.RawURLEncoding.EncodeToString(lastKey(hits, base, q))
				return nil
			}
			dd, err := getDoc(t, site, doc)
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if dd.DeletedDate != nil || !artifactReachable(t, site, dd) {
				continue
			}
			ok, err := q.matchesRest(t, site, doc)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			seen[doc] = true
			hits = append(hits, SearchHit{Document: dd, Key: q.Primary.Key, Value: val})
		}
		return nil
	})
	return hits, next, err
}

// lastKey is the index key of the last hit, where the next page starts.
func lastKey(hits []SearchHit, base []byte, q SearchQuery) []byte {
	h := hits[len(hits)-1]
	return append(append(append(append([]byte(nil), base...), h.Value...), 0), h.Document.DocumentID...)
}

// matchesRest checks the And matches of q on doc.
func (q *SearchQuery) matchesRest(t *tx, site, doc string) (bool, error) {
	check := func(attr bool, m IndexMatch) (bool, error) {
		var vals []string
		if attr {
			var a DocAttribute
			err := t.getJSON(docAttrKey(site, doc, m.Key), &a)
			if errors.Is(err, ErrNotFound) {
				return false, nil
			}
			if err != nil {
				return false, err
			}
			vals = a.indexValues()
		} else {
			var tg Tag
			err := t.getJSON(tagKey(site, doc, m.Key), &tg)
			if errors.Is(err, ErrNotFound) {
				return false, nil
			}
			if err != nil {
				return false, err
			}
			vals = tg.AllValues()
		}
		for _, v := range vals {
			if m.matchValue(v) {
				return true, nil
			}
		}
		return false, nil
	}
	for _, m := range q.And {
		if ok, err := check(q.Attribute, m); !ok || err != nil {
			return false, err
		}
	}
	for _, m := range q.AndTags {
		if ok, err := check(false, m); !ok || err != nil {
			return false, err
		}
	}
	return true, nil
}

// CompositeKeys returns the composite keys of the site schema and of every
// classification.
func (d *DB) CompositeKeys(site string) ([][]string, error) {
	var out [][]string
	err := d.view(func(t *tx) error {
		return eachSchema(t, site, func(s *Schema) bool {
			for _, ck := range s.Attributes.CompositeKeys {
				out = append(out, ck.AttributeKeys)
			}
			return true
		})
	})
	return out, err
}

// FolderPage is one page of a folder listing.
type FolderPage struct {
	Items []FolderItem
	Next  string
}

// ListFolderPage lists folder (""= root) from the token after: folders
// first, then documents, each by name.
func (d *DB) ListFolderPage(site, folder, after string, limit int) (*FolderPage, error) {
	prefix := folderPrefix(site, folder)
	seek := prefix
	if after != "" {
		b, err := base64.RawURLEncoding.DecodeString(after)
		if err != nil || !bytes.HasPrefix(b, prefix) {
			return nil, ErrBadToken
		}
		seek = append(b, 0)
	}
	p := &FolderPage{}
	err := d.view(func(t *tx) error {
		// No prefetching: a page is a handful of small values, and
		// Badger would fetch a hundred ahead.
		opts := badger.DefaultIteratorOptions
		opts.Prefix = prefix
		opts.PrefetchValues = false
		it := t.txn.NewIterator(opts)
		defer it.Close()
		var last []byte
		for it.Seek(seek); it.ValidForPrefix(prefix); it.Next() {
			if limit > 0 && len(p.Items) == limit {
				p.Next = base64.RawURLEncoding.EncodeToString(last)
				return nil
			}
			item := it.Item()
			var e FolderEntry
			if err := item.Value(func(v []byte) error { return json.Unmarshal(v, &e) }); err != nil {
				return err
			}
			k := item.Key()
			fi := FolderItem{Name: string(k[len(prefix)+2:]), Entry: e}
			if !e.Folder {
				// The document, read in the same transaction.
				d, err := getLiveDoc(t, site, e.DocumentID)
				if err != nil && !errors.Is(err, ErrNotFound) {
					return err
				}
				fi.Doc = d
			}
			p.Items = append(p.Items, fi)
			last = item.KeyCopy(nil)
		}
		return nil
	})
	return p, err
}

// FolderExists reports whether folder exists (the root always does).
func (d *DB) FolderExists(site, folder string) (bool, error) {
	if folder == "" {
		return true, nil
	}
	var ok bool
	err := d.view(func(t *tx) error {
		parent, name := splitPath(folder)
		var err error
		ok, err = t.exists(folderKey(site, parent, true, name))
		return err
	})
	return ok, err
}

// FolderNames lists the folders of site whose path starts with prefix
// (case-sensitive), sorted, at most limit.
func (d *DB) FolderNames(site, prefix string, limit int) ([]string, error) {
	var out []string
	err := d.view(func(t *tx) error {
		var walk func(folder string) bool
		walk = func(folder string) bool {
			for _, k := range t.keys(append(folderPrefix(site, folder), 'd', 0)) {
				name := string(k[len(folderPrefix(site, folder))+2:])
				full := name
				if folder != "" {
					full = folder + "/" + name
				}
				if strings.HasPrefix(full, prefix) || strings.HasPrefix(prefix, full+"/") {
					if strings.HasPrefix(full, prefix) {
						out = append(out, full)
						if limit > 0 && len(out) >= limit {
							return false
						}
					}
					if !walk(full) {
						return false
					}
				}
			}
			return true
		}
		walk("")
		return nil
	})
	sort.Strings(out)
	return out, err
}

// Attribute renders the matched value of an attribute hit as FormKiQ's
// matchedAttribute fields, decoding the index form.
func (h *SearchHit) Attribute(dataType string) map[string]any {
	v := h.Value
	switch dataType {
	case DataNumber:
		if n, err := strconv.ParseUint(v, 16, 64); err == nil {
			return map[string]any{"numberValue": decodeNumber(n)}
		}
	case DataBoolean:
		return map[string]any{"booleanValue": v == "true"}
	case DataDate:
		return map[string]any{"dateValue": v}
	}
	return map[string]any{"stringValue": v}
}

// decodeNumber inverts EncodeNumber.
func decodeNumber(b uint64) float64 {
	if b&(1<<63) != 0 {
		b ^= 1 << 63
	} else {
		b = ^b
	}
	return math.Float64frombits(b)
}

// NameUUID derives a stable UUID (version 5 layout, SHA-1) from name.
func NameUUID(name string) string {
	h := sha1.Sum([]byte("quire:" + name))
	h[6] = (h[6] & 0x0f) | 0x50
	h[8] = (h[8] & 0x3f) | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// TagKeys lists the distinct tag keys of site's documents in key order,
// after after, at most limit (POST /indices/search {"indexType":"tags"}),
// and the key to continue from when more remain. It skips from key to
// key in the tag index, so its cost grows with the keys returned, not
// with the documents tagged.
func (d *DB) TagKeys(site, after string, limit int) ([]string, string, error) {
	var out []string
	var next string
	err := d.view(func(t *tx) error {
		prefix := []byte(pfxTagIndex + sk(site) + "/")
		opts := badger.DefaultIteratorOptions
		opts.Prefix, opts.PrefetchValues = prefix, false
		it := t.txn.NewIterator(opts)
		defer it.Close()
		seek := prefix
		if after != "" {
			seek = append(append([]byte{}, prefix...), after+"\x01"...)
		}
		for it.Seek(seek); it.ValidForPrefix(prefix); {
			rest := it.Item().Key()[len(prefix):]
			i := bytes.IndexByte(rest, 0)
			if i < 0 {
				it.Next()
				continue
			}
			key := string(rest[:i])
			if limit > 0 && len(out) == limit {
				next = out[len(out)-1]
				return nil
			}
			out = append(out, key)
			it.Seek(append(append([]byte{}, prefix...), key+"\x01"...))
		}
		return nil
	})
	return out, next, err
}
