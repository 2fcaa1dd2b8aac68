// Package index holds Quire's Bleve indexes: fulltext over content, path,
// tags and attribute values, and the filename and folder indexes used for
// prefix searches. Everything in it is derived from storage and can be
// rebuilt; queries re-check their hits against storage, so a stale entry
// never shows a document that is gone or moved.
package index

import (
	"errors"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/standard"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/single"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"
)

// Doc is what the index holds of one document.
type Doc struct {
	Site        string
	ID          string
	Path        string
	ContentType string
	ContentSHA  string
	Tags        []string // "key value" pairs as text
	Attributes  []string // attribute values as text
	Content     string   // extracted text; see KeepContent
	// KeepContent keeps the text already indexed for this ContentSHA
	// (metadata changed, content did not).
	KeepContent bool
	Inserted    time.Time
}

// Index is a Bleve index in one directory.
type Index struct {
	b bleve.Index
}

const (
	fSite     = "site"
	fPath     = "path"     // words of the path (fulltext)
	fPathKey  = "pathkey"  // the path, lowercased, as one term (sort, prefix)
	fFilename = "filename" // the file name, lowercased, as one term
	fFolder   = "folder"   // the folder, lowercased, as one term
	fContent  = "content"
	fTags     = "tags"
	fAttrs    = "attrs"
	fSHA      = "sha"
	fType     = "contentType"
	fInserted = "inserted"
)

func newMapping() mapping.IndexMapping {
	im := bleve.NewIndexMapping()
	_ = im.AddCustomAnalyzer("lowerKeyword", map[string]any{
		"type":          custom.Name,
		"tokenizer":     single.Name,
		"token_filters": []string{lowercase.Name},
	})
	kw := func(store bool) *mapping.FieldMapping {
		f := bleve.NewKeywordFieldMapping()
		f.Store, f.IncludeInAll = store, false
		return f
	}
	lk := func() *mapping.FieldMapping {
		f := bleve.NewTextFieldMapping()
		f.Analyzer, f.Store, f.IncludeInAll, f.IncludeTermVectors = "lowerKeyword", false, false, false
		f.DocValues = true
		return f
	}
	text := func(store bool) *mapping.FieldMapping {
		f := bleve.NewTextFieldMapping()
		f.Analyzer, f.Store, f.IncludeTermVectors, f.IncludeInAll = standard.Name, store, true, true
		return f
	}
	dm := bleve.NewDocumentStaticMapping()
	dm.AddFieldMappingsAt(fSite, kw(false))
	dm.AddFieldMappingsAt(fPath, text(false))
	dm.AddFieldMappingsAt(fPathKey, lk())
	dm.AddFieldMappingsAt(fFilename, lk())
	dm.AddFieldMappingsAt(fFolder, lk())
	dm.AddFieldMappingsAt(fContent, text(true))
	dm.AddFieldMappingsAt(fTags, text(false))
	dm.AddFieldMappingsAt(fAttrs, text(false))
	dm.AddFieldMappingsAt(fSHA, kw(true))
	dm.AddFieldMappingsAt(fType, kw(false))
	dt := bleve.NewDateTimeFieldMapping()
	dt.IncludeInAll = false
	dm.AddFieldMappingsAt(fInserted, dt)
	im.DefaultMapping = dm
	im.DefaultAnalyzer = standard.Name
	return im
}

// Open opens the index in dir, creating it when missing.
func Open(dir string) (*Index, error) {
	b, err := bleve.Open(dir)
	if errors.Is(err, bleve.ErrorIndexPathDoesNotExist) {
		if err := os.MkdirAll(path.Dir(dir), 0o750); err != nil {
			return nil, err
		}
		b, err = bleve.New(dir, newMapping())
	}
	if err != nil {
		return nil, fmt.Errorf("open index %s: %w", dir, err)
	}
	return &Index{b: b}, nil
}

// OpenMemory opens an index that lives in memory (tests, tools).
func OpenMemory() (*Index, error) {
	b, err := bleve.NewMemOnly(newMapping())
	if err != nil {
		return nil, err
	}
	return &Index{b: b}, nil
}

// Close closes the index.
func (x *Index) Close() error { return x.b.Close() }

func docID(site, id string) string { return site + "/" + id }

// SplitID splits a Bleve document id into site and document id.
func SplitID(bid string) (site, id string) {
	i := strings.LastIndexByte(bid, '/')
	if i < 0 {
		return "", bid
	}
	return bid[:i], bid[i+1:]
}

// maxContent bounds the text indexed per document.
const maxContent = 1 << 20

// Put indexes docs (replacing earlier versions) and deletes the ids in del
// ("site/id"), in one batch. Once it returns, searches see the change.
func (x *Index) Put(docs []Doc, del []string) error {
	batch := x.b.NewBatch()
	for i := range docs {
		d := &docs[i]
		if d.KeepContent && d.Content == "" {
			d.Content = x.storedContent(docID(d.Site, d.ID), d.ContentSHA)
		}
		if len(d.Content) > maxContent {
			d.Content = d.Content[:maxContent]
		}
		dir, name := path.Split(d.Path)
		fields := map[string]any{
			fSite:     d.Site,
			fPath:     strings.NewReplacer("/", " ", "_", " ", "-", " ", ".", " ").Replace(d.Path),
			fPathKey:  d.Path,
			fFilename: name,
			fFolder:   strings.TrimSuffix(dir, "/"),
			fContent:  d.Content,
			fTags:     strings.Join(d.Tags, " \n "),
			fAttrs:    strings.Join(d.Attributes, " \n "),
			fSHA:      d.ContentSHA,
			fType:     d.ContentType,
			fInserted: d.Inserted,
		}
		if err := batch.Index(docID(d.Site, d.ID), fields); err != nil {
			return err
		}
	}
	for _, id := range del {
		batch.Delete(id)
	}
	return x.b.Batch(batch)
}

// storedContent returns the indexed text of id when it was indexed for
// content sha.
func (x *Index) storedContent(id, sha string) string {
	req := bleve.NewSearchRequest(bleve.NewDocIDQuery([]string{id}))
	req.Fields = []string{fContent, fSHA}
	res, err := x.b.Search(req)
	if err != nil || len(res.Hits) == 0 {
		return ""
	}
	if s, _ := res.Hits[0].Fields[fSHA].(string); s != sha {
		return ""
	}
	c, _ := res.Hits[0].Fields[fContent].(string)
	return c
}

// SetContent replaces the indexed text of one document, when its content
// is still sha.
func (x *Index) SetContent(d Doc) error {
	d.KeepContent = false
	return x.Put([]Doc{d}, nil)
}

// SetInternal and GetInternal keep index bookkeeping (the storage version
// the index has caught up with).
func (x *Index) SetInternal(key string, v uint64) error {
	return x.b.SetInternal([]byte(key), []byte(strconv.FormatUint(v, 10)))
}

// GetInternal reads a value written by SetInternal (0 when absent).
func (x *Index) GetInternal(key string) uint64 {
	b, err := x.b.GetInternal([]byte(key))
	if err != nil || len(b) == 0 {
		return 0
	}
	n, _ := strconv.ParseUint(string(b), 10, 64)
	return n
}

// Count returns the number of indexed documents.
func (x *Index) Count() (uint64, error) { return x.b.DocCount() }

// Hit is one search result.
type Hit struct {
	Site, ID  string
	Score     float64
	Fragments map[string][]string
	Sort      []string
}

func siteQuery(site string) query.Query {
	q := bleve.NewTermQuery(site)
	q.SetField(fSite)
	return q
}

// Prefix finds documents whose file name (field "filename") or folder
// ("folder") starts with prefix, case-insensitively, ordered by path.
// after is the Sort of the last hit of the previous page.
func (x *Index) Prefix(site, field, prefix string, after []string, limit int) ([]Hit, error) {
	if field != fFilename && field != fFolder {
		return nil, fmt.Errorf("prefix on %q", field)
	}
	pq := bleve.NewPrefixQuery(strings.ToLower(prefix))
	pq.SetField(field)
	req := bleve.NewSearchRequestOptions(bleve.NewConjunctionQuery(siteQuery(site), pq), limit, 0, false)
	req.SortBy([]string{fPathKey, "_id"})
	if len(after) == 2 {
		req.SearchAfter = after
	}
	return x.run(req)
}

func (x *Index) run(req *bleve.SearchRequest) ([]Hit, error) {
	res, err := x.b.Search(req)
	if err != nil {
		return nil, err
	}
	out := make([]Hit, 0, len(res.Hits))
	for _, h := range res.Hits {
		site, id := SplitID(h.ID)
		hit := Hit{Site: site, ID: id, Score: h.Score, Sort: h.Sort}
		if len(h.Fragments) > 0 {
			hit.Fragments = map[string][]string(h.Fragments)
		}
		out = append(out, hit)
	}
	return out, nil
}

// TextOptions shape a fulltext search.
type TextOptions struct {
	// Syntax accepts Bleve's query string syntax: "phrases", prefix*,
	// fuzzy~1, +required, -excluded, field:value.
	Syntax    bool
	Highlight bool
	From      int
	Size      int
	// Filter restricts results further (tags and attributes).
	Filter query.Query
}

// Text runs a fulltext search over content, path, tags and attribute
// values of site. It returns the hits and the total number of matches.
func (x *Index) Text(site, text string, o TextOptions) ([]Hit, uint64, error) {
	var tq query.Query
	if o.Syntax {
		tq = bleve.NewQueryStringQuery(text)
	} else {
		mq := bleve.NewMatchQuery(text)
		mq.SetOperator(query.MatchQueryOperatorAnd)
		tq = mq
	}
	qs := []query.Query{siteQuery(site), tq}
	if o.Filter != nil {
		qs = append(qs, o.Filter)
	}
	if o.Size <= 0 {
		o.Size = 10
	}
	req := bleve.NewSearchRequestOptions(bleve.NewConjunctionQuery(qs...), o.Size, o.From, false)
	if o.Highlight {
		req.Highlight = bleve.NewHighlightWithStyle("html")
		req.Highlight.AddField(fContent)
	}
	req.SortBy([]string{"-_score", "_id"})
	res, err := x.b.Search(req)
	if err != nil {
		return nil, 0, err
	}
	out := make([]Hit, 0, len(res.Hits))
	for _, h := range res.Hits {
		site, id := SplitID(h.ID)
		hit := Hit{Site: site, ID: id, Score: h.Score}
		if len(h.Fragments) > 0 {
			hit.Fragments = map[string][]string(h.Fragments)
		}
		out = append(out, hit)
	}
	return out, res.Total, nil
}

// Query is a Bleve query, for filters built by callers.
type Query = query.Query

// TermFilter matches documents whose tags or attributes field holds text.
func TermFilter(field, text string) query.Query {
	f := fTags
	if field == "attributes" {
		f = fAttrs
	}
	q := bleve.NewMatchPhraseQuery(text)
	q.SetField(f)
	return q
}

// Or combines queries with OR.
func Or(qs ...query.Query) query.Query { return bleve.NewDisjunctionQuery(qs...) }

// And combines queries with AND.
func And(qs ...query.Query) query.Query { return bleve.NewConjunctionQuery(qs...) }
