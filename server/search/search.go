package search

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"quire/index"
	"quire/server/documents"
	"quire/server/internal/api"
	"quire/storage"
)

type searchRange struct {
	Start *documents.FlexString `json:"start"`
	End   *documents.FlexString `json:"end"`
	Type  string                `json:"type"`
}

type searchMatch struct {
	Key        *string                `json:"key"`
	Eq         *documents.FlexString  `json:"eq"`
	EqOr       []documents.FlexString `json:"eqOr"`
	BeginsWith *string                `json:"beginsWith"`
	Range      *searchRange           `json:"range"`
}

type searchMeta struct {
	Folder                *string `json:"folder"`
	Path                  *string `json:"path"`
	Eq                    *string `json:"eq"`
	IndexType             *string `json:"indexType"`
	IndexFilterBeginsWith *string `json:"indexFilterBeginsWith"`
}

type beginsWith struct {
	BeginsWith *string `json:"beginsWith"`
}

type searchQueryIn struct {
	Text        *string       `json:"text"`
	Meta        *searchMeta   `json:"meta"`
	Filename    *beginsWith   `json:"filename"`
	Folder      *beginsWith   `json:"folder"`
	Attribute   *searchMatch  `json:"attribute"`
	Attributes  []searchMatch `json:"attributes"`
	Tag         *searchMatch  `json:"tag"`
	Tags        []searchMatch `json:"tags"`
	DocumentIDs []string      `json:"documentIds"`
}

type responseFields struct {
	Attributes []string `json:"attributes"`
	Tags       []string `json:"tags"`
}

type searchRequest struct {
	Query          *searchQueryIn  `json:"query"`
	ResponseFields *responseFields `json:"responseFields"`
}

func (q *searchQueryIn) empty() bool {
	return q.Text == nil && q.Meta == nil && q.Tag == nil && len(q.Tags) == 0 && q.Attribute == nil &&
		len(q.Attributes) == 0 && (q.Filename == nil || q.Filename.BeginsWith == nil) &&
		(q.Folder == nil || q.Folder.BeginsWith == nil) && len(q.DocumentIDs) == 0
}

// validate applies FormKiQ's QueryRequestValidator rules (API-NAMES §8).
func (q *searchQueryIn) validate() error {
	var errs []storage.ValidationItem
	add := func(key, msg string) { errs = append(errs, storage.ValidationItem{Key: key, Msg: msg}) }
	hasTags := q.Tag != nil || len(q.Tags) > 0
	hasAttrs := q.Attribute != nil || len(q.Attributes) > 0
	if q.Meta != nil && (hasTags || hasAttrs) {
		add("", "'meta' cannot be combined with 'tags' or 'attributes'")
	}
	if q.Text != nil && hasTags {
		add("", "'text' search cannot be combined with 'tags'")
	}
	if q.Text != nil && hasAttrs {
		add("", "'text' search cannot be combined with 'attributes'")
	}
	check := func(kind string, m *searchMatch) {
		if m.Key == nil || *m.Key == "" {
			add(kind+"/key", kind+" 'key' is required")
		}
		if m.Range != nil {
			if m.Range.Start == nil {
				add("range/start", "range start is required")
			}
			if m.Range.End == nil {
				add("range/end", "range end is required")
			}
			switch strings.ToUpper(m.Range.Type) {
			case "", "STRING", "NUMBER", "DATE":
			default:
				add("range/type", "invalid range type")
			}
		}
	}
	if q.Tag != nil {
		check("tag", q.Tag)
	}
	for i := range q.Tags {
		check("tag", &q.Tags[i])
	}
	if q.Attribute != nil {
		check("attribute", q.Attribute)
	}
	for i := range q.Attributes {
		check("attribute", &q.Attributes[i])
	}
	return api.CheckErrors(errs)
}

// HandleSearch serves POST /search.
func (s *Handlers) HandleSearch(r *api.Request) error {
	var in searchRequest
	if err := r.ReadBody(&in, storage.MaxSearchBytes); err != nil {
		return err
	}
	if in.Query == nil || in.Query.empty() {
		return api.ErrInvalidBody
	}
	q := in.Query
	if len(q.DocumentIDs) > 100 {
		return api.BadRequest("Maximum number of DocumentIds is 100")
	}
	if err := q.validate(); err != nil {
		return err
	}
	limit, err := api.ListLimit(r)
	if err != nil {
		return err
	}
	var ids map[string]bool
	if len(q.DocumentIDs) > 0 {
		ids = map[string]bool{}
		for _, id := range q.DocumentIDs {
			ids[id] = true
		}
	}
	run := func(tok string) (*searchResults, error) {
		r.PageTok = &tok
		switch {
		case q.Meta != nil:
			return s.searchMeta(r, q.Meta, limit)
		case q.Text != nil:
			return s.searchText(r, *q.Text, ids, limit)
		case q.Tag != nil || len(q.Tags) > 0 || q.Attribute != nil || len(q.Attributes) > 0:
			return s.searchIndex(r, q, ids, limit)
		case q.Filename != nil && q.Filename.BeginsWith != nil:
			return s.searchPrefix(r, "filename", *q.Filename.BeginsWith, ids, limit)
		case q.Folder != nil && q.Folder.BeginsWith != nil:
			return s.searchPrefix(r, "folder", *q.Folder.BeginsWith, ids, limit)
		}
		return s.searchIDs(r, q.DocumentIDs)
	}
	start := r.Query("next")
	var res *searchResults
	if prev := r.Query("previous"); prev != "" {
		start, res, err = pageBefore(run, prev)
	} else {
		res, err = run(start)
	}
	if err != nil {
		return err
	}
	if in.ResponseFields != nil {
		if err := s.addResponseFields(r, res, in.ResponseFields); err != nil {
			return err
		}
	}
	out := map[string]any{"documents": api.NonNil(res.docs)}
	if res.next != "" {
		out["next"] = res.next
	}
	if start != "" {
		// The previous page is the one that ends where this one starts.
		out["previous"] = start
	}
	return r.JSON(out)
}

// maxPreviousPages bounds the walk of pageBefore.
const maxPreviousPages = 1000

// pageBefore finds the page that ends where the page starting at tok
// begins: the token of a `previous` link is the start of the page it was
// given with. Search tokens only lead forward, so the pages are walked
// from the first; each step costs one page, and a client paging back
// through a long result list pays for the pages before it. It returns the
// found page and its own start token.
func pageBefore(run func(tok string) (*searchResults, error), tok string) (string, *searchResults, error) {
	start := ""
	for range maxPreviousPages {
		res, err := run(start)
		if err != nil {
			return "", nil, err
		}
		if res.next == tok {
			return start, res, nil
		}
		if res.next == "" {
			break
		}
		start = res.next
	}
	return "", nil, storage.ErrBadToken
}

type searchResults struct {
	docs []map[string]any
	ids  []string // document id of each entry ("" for folders)
	next string
	// visible, when set, tells whether the caller may see a folder
	// (folder permissions): documents are checked against their folder,
	// folder entries against themselves.
	visible func(folder string) bool
}

// newResults returns results that keep out what the caller's folder
// permissions do not let them read.
func (s *Handlers) newResults(r *api.Request) *searchResults {
	return &searchResults{visible: func(dir string) bool { return s.FolderAllows(r, dir, storage.FolderRead) }}
}

// add appends a document (its JSON carries its full path).
func (res *searchResults) add(m map[string]any, id string) {
	if res.visible != nil {
		p, _ := m["path"].(string)
		if dir, _ := api.SplitDocPath(p); !res.visible(dir) {
			return
		}
	}
	res.docs = append(res.docs, m)
	res.ids = append(res.ids, id)
}

// addFolder appends a folder entry for the folder at full.
func (res *searchResults) addFolder(m map[string]any, full string) {
	if res.visible != nil && !res.visible(full) {
		return
	}
	res.docs = append(res.docs, m)
	res.ids = append(res.ids, "")
}

// indexValue converts a query value of key to the index form: numbers of
// NUMBER attributes encoded, DATE values normalized.
func (s *Handlers) indexValue(r *api.Request, attr bool, key, v string, dataType string) (string, error) {
	if !attr {
		return v, nil
	}
	switch dataType {
	case storage.DataNumber:
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return "", api.Invalid(key, "attribute only support number value")
		}
		return storage.EncodeNumber(n), nil
	case storage.DataDate:
		if d, ok := storage.NormalizeDate(v); ok {
			return d, nil
		}
		return "", api.Invalid(key, fmt.Sprintf("invalid date value '%s'", v))
	case storage.DataBoolean:
		return strings.ToLower(v), nil
	}
	return v, nil
}

// toIndexMatch converts one request match.
func (s *Handlers) toIndexMatch(r *api.Request, attr bool, m *searchMatch) (storage.IndexMatch, error) {
	key := *m.Key
	out := storage.IndexMatch{Key: key}
	dataType := ""
	if attr {
		def, err := s.DB.AttributeDefinition(r.Site, key)
		if err != nil && !api.IsNotFound(err) {
			return out, err
		}
		if def != nil {
			dataType = def.DataType
		}
	}
	conv := func(v string) (string, error) { return s.indexValue(r, attr, key, v, dataType) }
	switch {
	case m.Eq != nil:
		v, err := conv(m.Eq.V)
		if err != nil {
			return out, err
		}
		out.Eq = &v
	case m.EqOr != nil:
		for _, e := range m.EqOr {
			v, err := conv(e.V)
			if err != nil {
				return out, err
			}
			out.EqOr = append(out.EqOr, v)
		}
	case m.BeginsWith != nil:
		v := *m.BeginsWith
		out.BeginsWith = &v
	case m.Range != nil:
		rt := strings.ToUpper(m.Range.Type)
		lo, hi := m.Range.Start.V, m.Range.End.V
		switch {
		case attr && (dataType == storage.DataNumber || rt == "NUMBER"):
			a, err1 := strconv.ParseFloat(lo, 64)
			b, err2 := strconv.ParseFloat(hi, 64)
			if err1 != nil || err2 != nil {
				return out, api.Invalid("range", "range start and end must be numbers")
			}
			out.Range = &storage.IndexRange{Start: storage.EncodeNumber(a), End: storage.EncodeNumber(b)}
		case attr && (dataType == storage.DataDate || rt == "DATE"):
			a, ok1 := storage.NormalizeDate(lo)
			b, ok2 := storage.NormalizeDate(hi)
			if !ok1 || !ok2 {
				return out, api.Invalid("range", "range start and end must be dates")
			}
			out.Range = &storage.IndexRange{Start: a, End: b}
		case rt == "NUMBER":
			out.Range = &storage.IndexRange{Start: lo, End: hi, Numeric: true}
		default:
			out.Range = &storage.IndexRange{Start: lo, End: hi}
		}
	}
	return out, nil
}

// searchIndex runs tag and attribute queries on storage's exact indexes.
func (s *Handlers) searchIndex(r *api.Request, q *searchQueryIn, ids map[string]bool, limit int) (*searchResults, error) {
	var sq storage.SearchQuery
	sq.DocumentIDs = ids
	attrs := q.Attributes
	if q.Attribute != nil {
		attrs = append([]searchMatch{*q.Attribute}, attrs...)
	}
	tags := q.Tags
	if q.Tag != nil {
		tags = append([]searchMatch{*q.Tag}, tags...)
	}
	var primaryIsAttr bool
	primaryType := ""
	for i := range attrs {
		m, err := s.toIndexMatch(r, true, &attrs[i])
		if err != nil {
			return nil, err
		}
		if i == 0 {
			if def, err := s.DB.AttributeDefinition(r.Site, m.Key); err == nil {
				primaryType = def.DataType
			}
			sq.Attribute, sq.Primary, primaryIsAttr = true, m, true
			continue
		}
		sq.And = append(sq.And, m)
	}
	for i := range tags {
		m, err := s.toIndexMatch(r, false, &tags[i])
		if err != nil {
			return nil, err
		}
		switch {
		case i == 0 && !primaryIsAttr:
			sq.Primary = m
		case primaryIsAttr:
			sq.AndTags = append(sq.AndTags, m)
		default:
			sq.And = append(sq.And, m)
		}
	}
	hits, next, err := s.DB.Search(r.Site, sq, r.PageToken(), limit)
	if err != nil {
		return nil, err
	}
	res := s.newResults(r)
	res.next = next
	for _, h := range hits {
		m := s.WithThumbnail(r, api.DocumentJSON(h.Document), h.Document)
		if sq.Attribute {
			m["matchedAttribute"] = matchedAttribute(h, primaryType)
		} else {
			m["matchedTag"] = map[string]any{"key": h.Key, "value": h.Value, "type": storage.TagUserDefined}
		}
		res.add(m, h.Document.DocumentID)
	}
	return res, nil
}

func matchedAttribute(h storage.SearchHit, dataType string) map[string]any {
	m := h.Attribute(dataType)
	m["key"] = h.Key
	return m
}

// searchMeta lists a folder (meta.folder, meta.indexType) or finds a path.
func (s *Handlers) searchMeta(r *api.Request, m *searchMeta, limit int) (*searchResults, error) {
	if m.IndexType != nil && !strings.EqualFold(*m.IndexType, "folder") {
		return nil, api.Invalid("indexType", "invalid 'indexType'")
	}
	if m.Path != nil {
		res := s.newResults(r)
		id, err := s.DB.DocumentIDByPath(r.Site, *m.Path)
		if api.IsNotFound(err) {
			return res, nil
		}
		if err != nil {
			return nil, err
		}
		d, err := s.DB.GetDocument(r.Site, id)
		if api.IsNotFound(err) {
			return res, nil
		}
		if err != nil {
			return nil, err
		}
		res.add(s.WithThumbnail(r, api.DocumentJSON(d), d), id)
		return res, nil
	}
	folder := ""
	if m.Folder != nil {
		folder = strings.Trim(*m.Folder, "/")
	} else if m.Eq != nil {
		folder = strings.Trim(*m.Eq, "/")
	}
	onlyFolders := m.IndexType != nil && strings.EqualFold(*m.IndexType, "folder") && m.Folder == nil
	filter := ""
	if m.IndexFilterBeginsWith != nil {
		filter = *m.IndexFilterBeginsWith
	}
	return s.listFolder(r, folder, onlyFolders, filter, limit)
}

// listFolder renders one page of a folder: subfolders first, then files.
func (s *Handlers) listFolder(r *api.Request, folder string, onlyFolders bool, filter string, limit int) (*searchResults, error) {
	if ok, err := s.DB.FolderExists(r.Site, folder); err != nil {
		return nil, err
	} else if !ok {
		return s.newResults(r), nil
	}
	res := s.newResults(r)
	after := r.PageToken()
	for {
		page, err := s.DB.ListFolderPage(r.Site, folder, after, limit-len(res.docs))
		if err != nil {
			return nil, err
		}
		for _, it := range page.Items {
			if !strings.HasPrefix(it.Name, filter) || (onlyFolders && !it.Entry.Folder) {
				continue
			}
			full := it.Name
			if folder != "" {
				full = folder + "/" + it.Name
			}
			if it.Entry.Folder {
				res.addFolder(folderJSON(r, it, full), full)
				continue
			}
			d := it.Doc
			if d == nil {
				continue
			}
			m := s.WithThumbnail(r, api.DocumentJSON(d), d)
			m["indexKey"] = FolderIndexKey(full)
			res.add(m, d.DocumentID)
		}
		if page.Next == "" || len(res.docs) >= limit {
			res.next = page.Next
			return res, nil
		}
		after = page.Next
	}
}

// FolderIndexKey is the opaque key of a folder or filed document: its full
// path, base64url-encoded.
func FolderIndexKey(p string) string { return base64.RawURLEncoding.EncodeToString([]byte(p)) }

// ParseFolderIndexKey decodes a folder's indexKey; anything that is not
// one (a folder path, garbage) is FormKiQ's 404 "invalid indexKey".
func ParseFolderIndexKey(k string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(k)
	if err != nil || len(b) == 0 || !utf8.Valid(b) || strings.ContainsRune(string(b), 0) {
		return "", errInvalidIndexKey(k)
	}
	return string(b), nil
}

// maxEchoedIndexKey bounds the indexKey a message repeats.
const maxEchoedIndexKey = 256

// errInvalidIndexKey is FormKiQ's answer to an indexKey that names no
// folder: 404 "invalid indexKey '<as sent>'". The echo is valid UTF-8
// (invalid bytes become U+FFFD) and cut to maxEchoedIndexKey bytes at a
// character boundary, with "..." when cut.
func errInvalidIndexKey(k string) error {
	k = strings.ToValidUTF8(k, "\uFFFD")
	if len(k) > maxEchoedIndexKey {
		n := maxEchoedIndexKey
		for n > 0 && !utf8.RuneStart(k[n]) {
			n--
		}
		k = k[:n] + "..."
	}
	return &storage.NotFoundError{Msg: fmt.Sprintf("invalid indexKey '%s'", k)}
}

// folderOfIndexKey decodes the indexKey of a route and checks that the
// folder exists (an early answer: appliers check again).
func (s *Handlers) folderOfIndexKey(r *api.Request, k string) (string, error) {
	p, err := ParseFolderIndexKey(k)
	if err != nil {
		return "", err
	}
	ok, err := s.DB.FolderExists(r.Site, p)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", errInvalidIndexKey(k)
	}
	return p, nil
}

// folderID is a stable id for a folder, derived from its site and path.
func folderID(site, p string) string { return storage.NameUUID(site + "/" + p) }

// searchPrefix finds documents by file name or folder prefix (Bleve).
func (s *Handlers) searchPrefix(r *api.Request, field, prefix string, ids map[string]bool, limit int) (*searchResults, error) {
	var after []string
	if tok := r.PageToken(); tok != "" {
		b, err := base64.RawURLEncoding.DecodeString(tok)
		if err != nil || json.Unmarshal(b, &after) != nil || len(after) != 1 {
			return nil, storage.ErrBadToken
		}
	}
	res := s.newResults(r)
	lower := strings.ToLower(prefix)
	for {
		hits, next, more, err := s.Deps.Indexer.Prefix(r.Site, field, prefix, after, limit)
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			after = h.Sort
			if ids != nil && !ids[h.ID] {
				continue
			}
			// The index may lag a crash or hold a stale entry: storage
			// has the last word.
			d, err := s.DB.GetDocument(r.Site, h.ID)
			if api.IsNotFound(err) {
				continue
			}
			if err != nil {
				return nil, err
			}
			dir, name := api.SplitDocPath(d.Path)
			if field == "filename" && !strings.HasPrefix(strings.ToLower(name), lower) ||
				field == "folder" && !strings.HasPrefix(strings.ToLower(dir), lower) {
				continue
			}
			res.add(s.WithThumbnail(r, api.DocumentJSON(d), d), d.DocumentID)
			if len(res.docs) == limit {
				b, _ := json.Marshal(after)
				res.next = base64.RawURLEncoding.EncodeToString(b)
				return res, nil
			}
		}
		if !more {
			return res, nil
		}
		after = next
	}
}

// searchText runs query.text on the fulltext index.
func (s *Handlers) searchText(r *api.Request, text string, ids map[string]bool, limit int) (*searchResults, error) {
	from, err := api.ParseOffsetToken(r.PageToken())
	if err != nil {
		return nil, err
	}
	// The last page of the result window may be short.
	size := min(limit, index.MaxResultWindow-from)
	if size == 0 {
		return s.newResults(r), nil
	}
	opts := index.TextOptions{From: from, Size: size, Hide: s.textHide(r)}
	if ids != nil {
		opts.IDs = make([]string, 0, len(ids))
		for id := range ids {
			opts.IDs = append(opts.IDs, id)
		}
	}
	hits, total, err := s.Deps.Indexer.SearchText(r.Site, text, opts, func(id string) (bool, error) { return s.textVisible(r, id) })
	if err != nil {
		return nil, err
	}
	res := s.newResults(r)
	for _, h := range hits {
		d, err := s.DB.GetDocument(r.Site, h.ID)
		if api.IsNotFound(err) {
			continue // deleted since the search
		}
		if err != nil {
			return nil, err
		}
		m := s.WithThumbnail(r, api.DocumentJSON(d), d)
		s.addMatchedPages(r, m, d, text)
		res.add(m, d.DocumentID)
	}
	if n := from + len(hits); uint64(n) < total && n < index.MaxResultWindow {
		res.next = api.OffsetToken(n)
	}
	return res, nil
}

// searchIDs returns the listed documents.
func (s *Handlers) searchIDs(r *api.Request, ids []string) (*searchResults, error) {
	docs, err := s.DB.GetDocuments(r.Site, ids)
	if err != nil {
		return nil, err
	}
	res := s.newResults(r)
	for _, d := range docs {
		res.add(s.WithThumbnail(r, api.DocumentJSON(d), d), d.DocumentID)
	}
	return res, nil
}

// addResponseFields adds the requested tags and attributes to each result.
func (s *Handlers) addResponseFields(r *api.Request, res *searchResults, f *responseFields) error {
	for i, id := range res.ids {
		if id == "" {
			continue
		}
		if len(f.Tags) > 0 {
			tags := map[string]any{}
			for _, k := range f.Tags {
				t, err := s.DB.GetTag(r.Site, id, k)
				if api.IsNotFound(err) {
					continue
				}
				if err != nil {
					return err
				}
				if len(t.Values) > 0 {
					tags[k] = t.Values
				} else {
					tags[k] = t.Value
				}
			}
			res.docs[i]["tags"] = tags
		}
		if len(f.Attributes) > 0 {
			attrs := map[string]any{}
			for _, k := range f.Attributes {
				a, err := s.DB.DocAttribute(r.Site, id, k)
				if api.IsNotFound(err) {
					continue
				}
				if err != nil {
					return err
				}
				attrs[k] = searchAttributeJSON(a)
			}
			res.docs[i]["attributes"] = attrs
		}
	}
	return nil
}

// searchAttributeJSON is FormKiQ's SearchResultDocumentAttribute: values
// always as lists.
func searchAttributeJSON(a *storage.DocAttribute) map[string]any {
	m := map[string]any{"valueType": a.ValueType}
	if len(a.Strings) > 0 {
		m["stringValues"] = a.Strings
	}
	if len(a.Numbers) > 0 {
		m["numberValues"] = a.Numbers
	}
	if a.Boolean != nil {
		m["booleanValue"] = *a.Boolean
	}
	return m
}
