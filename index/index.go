// Package index holds Quire's Bleve indexes: fulltext over content, path,
// tags and attribute values, and the filename and folder indexes used for
// prefix searches. Everything in it is derived from storage and can be
// rebuilt; queries re-check their hits against storage, so a stale entry
// never shows a document that is gone or moved.
package index

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/blevesearch/bleve/v2/search/searcher"

	"quire/index/analysis"
	"quire/index/besthits"
	"quire/index/segments"
	"quire/storage"
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
	Content     string   // text of the content
	Inserted    time.Time
	// TagValues and AttrValues hold each tag's and attribute's values as
	// exact filters compare them (storage.Tag.AllValues; attribute
	// strings, numbers by storage.FormatNumber, booleans), by key.
	TagValues  map[string][]string
	AttrValues map[string][]string
	// NoText keeps the document out of the fulltext index (its names and
	// folders are still indexed).
	NoText bool
	// Language is the main language of the document's site (tesseract's
	// code, "" for none): it chooses the analyzer of its text (analysis.For).
	Language string
}

const (
	fSite      = "site"
	fPath      = "path"      // words of the path (fulltext)
	fNameKey   = "namekey"   // names index: file name search term (nameTerm)
	fFolderKey = "folderkey" // names index: folder search term (nameTerm)
	fContent   = "content"
	fTags      = "tags"
	fAttrs     = "attrs"
	fSHA       = "sha"
	fType      = "contentType"
	fInserted  = "inserted"
	// Filter fields of the text index (keywords, exact): a query filters,
	// counts and pages inside the index with them (DESIGN.md, "Filter
	// fields").
	fFolders = "folders" // the document's folder and each folder above it, as "/a/b"
	fTagKey  = "tagkey"  // each tag key
	fTagVal  = "tagval"  // key NUL value, for each value of each tag
	fAttrKey = "attrkey" // each attribute key
	fAttrVal = "attrval" // key NUL value, for each value of each attribute
)

// newNamesMapping maps the names index: one term per document and field,
// built so that the field's term dictionary, which Bleve keeps sorted, is
// itself the ordered index a prefix search pages through (see nameTerm).
func newNamesMapping() mapping.IndexMapping {
	im := bleve.NewIndexMapping()
	key := func() *mapping.FieldMapping {
		f := bleve.NewKeywordFieldMapping()
		f.Store, f.IncludeInAll, f.IncludeTermVectors, f.DocValues = false, false, false, false
		return f
	}
	dm := bleve.NewDocumentStaticMapping()
	dm.AddFieldMappingsAt(fNameKey, key())
	dm.AddFieldMappingsAt(fFolderKey, key())
	im.DefaultMapping = dm
	return im
}

// nameTerm is a document's term in the names index for a file name
// (field fNameKey) or folder (fFolderKey) search: the site, then what the
// search matches a prefix of (lowercased), then what orders the results,
// then the document id, which makes each term one document's. A prefix
// search reads terms in order from the dictionary and stops after a page:
// its cost does not grow with the number of matching documents.
func nameTerm(field, site, p, id string) string {
	dir, name := splitDocPath(p)
	lp, ldir, lname := strings.ToLower(p), strings.ToLower(dir), strings.ToLower(name)
	if field == fFolderKey {
		return site + "\x00" + ldir + "\x00" + lname + "\x00" + id
	}
	return site + "\x00" + lname + "\x00" + lp + "\x00" + id
}

func splitDocPath(p string) (dir, name string) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "", p
	}
	return p[:i], p[i+1:]
}

// newTextMapping maps the fulltext index. Only content keeps term vectors
// (phrase queries), nothing is stored and nothing goes to Bleve's "_all"
// field: each of those cost a noticeable share of the server's CPU under
// a creation load. Each analyzer has a document type of its own (fLang),
// the same fields analysed its way; the default mapping is the default
// analyzer's.
func newTextMapping() mapping.IndexMapping {
	im := bleve.NewIndexMapping()
	analysis.AddTo(im)
	im.DefaultMapping = textDocMapping(analysis.Default)
	for _, a := range analysis.Languages() {
		im.AddDocumentMapping(a, textDocMapping(a))
	}
	im.TypeField = fLang
	im.DefaultAnalyzer = analysis.Default
	im.DefaultField = fContent // query-string terms without a field
	return im
}

// textDocMapping maps the text index's fields, text analysed by analyzer.
func textDocMapping(analyzer string) *mapping.DocumentMapping {
	kw := func(store bool) *mapping.FieldMapping {
		f := bleve.NewKeywordFieldMapping()
		f.Store, f.IncludeInAll, f.DocValues = store, false, false
		return f
	}
	// Text is not stored: storage has it, and snippets are cut from there.
	text := func(vectors bool) *mapping.FieldMapping {
		f := bleve.NewTextFieldMapping()
		f.Analyzer, f.Store, f.IncludeTermVectors, f.IncludeInAll = analyzer, false, vectors, false
		f.DocValues = false
		return f
	}
	dm := bleve.NewDocumentStaticMapping()
	dm.DefaultAnalyzer = analyzer
	dm.AddFieldMappingsAt(fSite, kw(false))
	dm.AddFieldMappingsAt(fPath, text(false))
	dm.AddFieldMappingsAt(fContent, text(true))
	dm.AddFieldMappingsAt(fTags, text(false))
	dm.AddFieldMappingsAt(fAttrs, text(false))
	if analysis.Compound(analyzer) {
		parts := text(false)
		parts.Analyzer = analysis.DeParts
		dm.AddFieldMappingsAt(fParts, parts)
	}
	dm.AddFieldMappingsAt(fSHA, kw(false))
	dm.AddFieldMappingsAt(fType, kw(false))
	dt := bleve.NewDateTimeFieldMapping()
	dt.IncludeInAll, dt.DocValues = false, false
	dm.AddFieldMappingsAt(fInserted, dt)
	// Filter fields: matched term by term, never scored, sorted or
	// shown, so nothing but the postings is kept.
	filter := func() *mapping.FieldMapping {
		f := bleve.NewKeywordFieldMapping()
		f.Store, f.IncludeInAll, f.IncludeTermVectors, f.DocValues = false, false, false, false
		return f
	}
	for _, name := range []string{fFolders, fTagKey, fTagVal, fAttrKey, fAttrVal} {
		dm.AddFieldMappingsAt(name, filter())
	}
	return dm
}

// Index is Quire's search index: two Bleve indexes in one directory. The
// names index (path, file name, folder) is updated before a write
// returns; the text index (content, path words, tags, attribute values)
// follows within a second.
type Index struct {
	names   bleve.Index
	text    bleve.Index
	rebuilt string // see Rebuilt
	best    *besthits.Cache
}

// floorSegmentSize is the merge plan's FloorSegmentSize: segments
// smaller than it count as that many documents when the plan sorts them
// into tiers. Scorch's 2,000 makes every small batch's segment look like
// 2,000 documents, so a stream of batches of tens to hundreds of
// documents (a cluster member, a steady trickle under the freshness
// target) is merged and rewritten again and again; 500 wrote a quarter of
// the merge bytes and raised the 3-node ingest from 0.25 to 0.38 of one
// node with query latency unchanged (index/DESIGN.md, "Merge plan").
const floorSegmentSize = 500

// persistNap is how long the persister of a small index (fewer than
// floorSegmentSize live documents) naps after each persist, so that a
// trickle of batches is persisted and merged as one file
// (index/segments, "The persister's nap"; index/DESIGN.md, "Persister
// nap for a small index"). A test of scorch's own plan sets it to 0
// before opening its index.
var persistNap = defaultPersistNap

const defaultPersistNap = 2 * time.Second

// scorchExtra are scorch options added to openOne's (benchmarks of the
// merge plan and persister settings; nil in Quire).
var scorchExtra map[string]any

func openOne(dir string, m mapping.IndexMapping) (bleve.Index, error) {
	// unsafe_batch: a batch returns once it is searchable, without waiting
	// for its segment to be fsynced. The index is derived data: after a
	// crash, the storage version recorded with it (persisted in order with
	// the segments before it) tells the indexer what to redo.
	// The merge plan rounds small segments up to floorSegmentSize
	// documents instead of scorch's 2,000 and makes no segment of
	// maxSegmentDocs (merge.go) instead of 5,000,000; the persister keeps its
	// defaults but naps while the index is small (persistNap,
	// index/segments; index/DESIGN.md, "Batching", "Merge plan" and
	// "Persister nap for a small index").
	cfg := map[string]any{"unsafe_batch": true, "eventCallbackName": segments.NapCallback,
		"scorchMergePlanOptions": map[string]any{"FloorSegmentSize": floorSegmentSize, "MaxSegmentSize": maxSegmentDocs}}
	for k, v := range scorchExtra {
		cfg[k] = v
	}
	b, err := bleve.OpenUsing(dir, cfg)
	if errors.Is(err, bleve.ErrorIndexPathDoesNotExist) {
		if err := os.MkdirAll(path.Dir(dir), 0o750); err != nil {
			return nil, err
		}
		// Create with safe batches, so the mapping is on disk before the
		// first unsafe batch (or a quick close) can leave it behind.
		b, err = bleve.NewUsing(dir, m, scorch.Name, scorch.Name, nil)
		if err == nil {
			if err = b.Close(); err == nil {
				b, err = bleve.OpenUsing(dir, cfg)
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("open index %s: %w", dir, err)
	}
	segments.WatchNap(b, persistNap, floorSegmentSize)
	return b, nil
}

// formatVersion names the layout of the index (its mappings included); a
// change rebuilds it. 4: the filter fields of the text index. 5: no doc
// values (nothing is sorted or faceted by a text-index field). 6: an
// analyzer per site language (stems, German folding; index/analysis). 7:
// path words out of content. 8: German compound parts (index/analysis). 9:
// the token cap in every analyzer (index/analysis), whose analyzers are now
// Quire's (quire_de for Bleve's de …).
const formatVersion = "9"

// Open opens the index in dir, creating it when missing.
func Open(dir string) (*Index, error) {
	// An index of another format is rebuilt: it is derived data, and the
	// indexer catches a new index up from storage.
	vf := path.Join(dir, "FORMAT")
	var rebuilt string
	if b, err := os.ReadFile(vf); err != nil || strings.TrimSpace(string(b)) != formatVersion {
		if err == nil {
			rebuilt = strings.TrimSpace(string(b))
		} else if _, serr := os.Stat(path.Join(dir, "text")); serr == nil {
			rebuilt = "unknown"
		}
		if err := os.RemoveAll(dir); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, err
		}
		if err := os.WriteFile(vf, []byte(formatVersion+"\n"), 0o640); err != nil {
			return nil, err
		}
	}
	names, err := openOne(path.Join(dir, "names"), newNamesMapping())
	if err != nil {
		return nil, err
	}
	text, err := openOne(path.Join(dir, "text"), newTextMapping())
	if err != nil {
		names.Close()
		return nil, err
	}
	return &Index{names: names, text: text, rebuilt: rebuilt, best: besthits.New()}, nil
}

// Rebuilt returns the format of the index Open found and removed because
// it was not the current one ("" when it kept it or found none): the
// indexer then rebuilds it from storage, and says so.
func (x *Index) Rebuilt() string { return x.rebuilt }

// Close closes the index once what was written is on disk. With
// unsafe_batch, Bleve's Close drops batches its persister has not written
// yet: the storage version recorded last (the Indexer's closing
// checkpoint) was lost, and the next start caught up from an older one,
// or from nothing.
func (x *Index) Close() error {
	for _, b := range []bleve.Index{x.names, x.text} {
		segments.WakeNap(b)
		segments.WaitPersisted(b, 10*time.Second)
	}
	return errors.Join(x.names.Close(), x.text.Close())
}

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

// PutNames updates the names index: docs replace earlier versions, the
// ids in del ("site/id") go. Once it returns, prefix searches see it.
func (x *Index) PutNames(docs []Doc, del []string) error {
	batch := x.names.NewBatch()
	for i := range docs {
		d := &docs[i]
		if err := batch.Index(docID(d.Site, d.ID), map[string]any{
			fNameKey:   nameTerm(fNameKey, d.Site, d.Path, d.ID),
			fFolderKey: nameTerm(fFolderKey, d.Site, d.Path, d.ID),
		}); err != nil {
			return err
		}
	}
	for _, id := range del {
		batch.Delete(id)
	}
	return x.names.Batch(batch)
}

// PutText updates the text index with docs (their Content is the text to
// index) and removes the ids in del.
func (x *Index) PutText(docs []Doc, del []string) error {
	batch := x.text.NewBatch()
	for i := range docs {
		d := &docs[i]
		if len(d.Content) > maxContent {
			d.Content = d.Content[:maxContent]
		}
		pathWords := strings.NewReplacer("/", " ", "_", " ", "-", " ", ".", " ").Replace(d.Path)
		tags, attrs := strings.Join(d.Tags, " \n "), strings.Join(d.Attributes, " \n ")
		// content also holds the tags and attribute values: a word query
		// then reads one posting list instead of three. The path words
		// are apart, so that a word in the text ranks above a word in
		// the file name (pathBoost, collectWord).
		fields := map[string]any{
			fSite:     d.Site,
			fPath:     pathWords,
			fContent:  d.Content + "\n\n" + tags + "\n" + attrs,
			fTags:     tags,
			fAttrs:    attrs,
			fSHA:      d.ContentSHA,
			fType:     d.ContentType,
			fInserted: d.Inserted,
			fFolders:  folderTerms(d.Path),
		}
		if a := analysis.For(d.Language); a != analysis.Default {
			fields[fLang] = a
			if analysis.Compound(a) {
				fields[fParts] = fields[fContent] // compound.go
			}
		}
		addKV(fields, fTagKey, fTagVal, d.TagValues)
		addKV(fields, fAttrKey, fAttrVal, d.AttrValues)
		if err := batch.Index(docID(d.Site, d.ID), fields); err != nil {
			return err
		}
	}
	for _, id := range del {
		batch.Delete(id)
	}
	return x.text.Batch(batch)
}

// folderTerms returns the terms of field fFolders for a document path:
// its folder and every folder above it, each with a leading "/" ("/" is
// the root), so one term query finds everything below a folder.
func folderTerms(p string) []string {
	dir, _ := splitDocPath(p)
	out := []string{"/"}
	for i := 0; i <= len(dir); i++ {
		if dir != "" && (i == len(dir) || dir[i] == '/') {
			out = append(out, "/"+dir[:i])
		}
	}
	return out
}

func kvTerm(key, value string) string { return key + "\x00" + value }

// addKV adds the key and key-value terms of tags or attributes.
func addKV(fields map[string]any, fk, fv string, m map[string][]string) {
	if len(m) == 0 {
		return
	}
	keys := make([]string, 0, len(m))
	var vals []string
	for k, vs := range m {
		keys = append(keys, k)
		for _, v := range vs {
			vals = append(vals, kvTerm(k, v))
		}
	}
	fields[fk] = keys
	if len(vals) > 0 {
		fields[fv] = vals
	}
}

// Put updates both indexes (tools and tests).
func (x *Index) Put(docs []Doc, del []string) error {
	if err := x.PutNames(docs, del); err != nil {
		return err
	}
	return x.PutText(docs, del)
}

// SetInternal records bookkeeping (the storage version the index has
// caught up with) in the text index, which is written last.
func (x *Index) SetInternal(key string, v uint64) error {
	return x.text.SetInternal([]byte(key), []byte(strconv.FormatUint(v, 10)))
}

// internalString reads a string recorded with setInternalString ("" when
// absent).
func (x *Index) internalString(key string) string {
	b, _ := x.text.GetInternal([]byte(key))
	return string(b)
}

func (x *Index) setInternalString(key, v string) error {
	return x.text.SetInternal([]byte(key), []byte(v))
}

// GetInternal reads a value written by SetInternal (0 when absent).
func (x *Index) GetInternal(key string) uint64 {
	b, err := x.text.GetInternal([]byte(key))
	if err != nil || len(b) == 0 {
		return 0
	}
	n, _ := strconv.ParseUint(string(b), 10, 64)
	return n
}

// EachID calls fn with the id ("site/id") of every document in either
// index (an id in both comes twice).
func (x *Index) EachID(fn func(bid string) error) error {
	for _, b := range []bleve.Index{x.names, x.text} {
		if err := eachID(b, fn); err != nil {
			return err
		}
	}
	return nil
}

func eachID(b bleve.Index, fn func(bid string) error) error {
	adv, err := b.Advanced()
	if err != nil {
		return err
	}
	r, err := adv.Reader()
	if err != nil {
		return err
	}
	defer r.Close()
	all, err := r.DocIDReaderAll()
	if err != nil {
		return err
	}
	defer all.Close()
	for {
		iid, err := all.Next()
		if err != nil || iid == nil {
			return err
		}
		bid, err := r.ExternalID(iid)
		if err != nil {
			return err
		}
		if err := fn(bid); err != nil {
			return err
		}
	}
}

// Count returns the number of documents in the names index.
func (x *Index) Count() (uint64, error) { return x.names.DocCount() }

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

// Prefix finds documents of site whose file name (field "filename") or
// folder ("folder") starts with prefix, case-insensitively: file names in
// name order, folders in folder and then name order. after is the Sort of
// the previous page's last hit. Hits carry their term as Sort.
func (x *Index) Prefix(site, field, prefix string, after []string, limit int) ([]Hit, error) {
	f, err := prefixField(field)
	if err != nil {
		return nil, err
	}
	adv, err := x.names.Advanced()
	if err != nil {
		return nil, err
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	lo := site + "\x00" + strings.ToLower(prefix)
	start := lo
	if len(after) == 1 && after[0] >= lo {
		start = after[0] + "\x00" // just past the previous page
	}
	// 0xff never occurs in UTF-8: every term with the prefix sorts below.
	dict, err := r.FieldDictRange(f, []byte(start), append([]byte(lo), 0xff))
	if err != nil {
		return nil, err
	}
	defer dict.Close()
	var out []Hit
	ctx := context.Background()
	for len(out) < limit {
		e, err := dict.Next()
		if err != nil {
			return nil, err
		}
		if e == nil {
			break
		}
		// A dictionary may still hold the term of a document changed
		// since: only a live posting counts.
		tfr, err := r.TermFieldReader(ctx, []byte(e.Term), f, false, false, false)
		if err != nil {
			return nil, err
		}
		d, err := tfr.Next(nil)
		tfr.Close()
		if err != nil {
			return nil, err
		}
		if d == nil {
			continue
		}
		ext, err := r.ExternalID(d.ID)
		if err != nil {
			return nil, err
		}
		hs, hid := SplitID(ext)
		out = append(out, Hit{Site: hs, ID: hid, Sort: []string{e.Term}})
	}
	return out, nil
}

func prefixField(field string) (string, error) {
	switch field {
	case "filename":
		return fNameKey, nil
	case "folder":
		return fFolderKey, nil
	}
	return "", fmt.Errorf("prefix on %q", field)
}

func (x *Index) run(req *bleve.SearchRequest) ([]Hit, error) {
	res, err := x.names.Search(req)
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

// onlySite reports whether every document of the text index belongs to
// site. Then a search needs no site filter, which matters: the site term's
// postings list holds every document, and walking it alongside a word's
// was half the cost of a fulltext query at 100,000 documents. (Hits are
// checked against storage for the site anyway.)
func (x *Index) onlySite(site string) bool {
	adv, err := x.text.Advanced()
	if err != nil {
		return false
	}
	r, err := adv.Reader()
	if err != nil {
		return false
	}
	defer r.Close()
	total, err := r.DocCount()
	if err != nil {
		return false
	}
	tfr, err := r.TermFieldReader(context.Background(), []byte(site), fSite, false, false, false)
	if err != nil {
		return false
	}
	defer tfr.Close()
	return tfr.Count() == total
}

// MaxResultWindow bounds From+Size of a Text search, as OpenSearch's
// index.max_result_window does: Bleve allocates From+Size hits up front,
// so an unbounded window from a client is an allocation of its choosing.
const MaxResultWindow = 10000

// ErrResultWindow is returned for a Text search outside the result window.
var ErrResultWindow = errors.New("index: from and size outside the result window")

// TextOptions shape a fulltext search.
type TextOptions struct {
	// Syntax accepts Bleve's query string syntax: "phrases", prefix*,
	// fuzzy~1, +required, -excluded, field:value.
	Syntax bool
	From   int
	Size   int
	// Filter restricts results further (tags and attributes: TagFilter,
	// AttrFilter); it does not change scores.
	Filter query.Query
	// Hide leaves out the documents it matches (FolderHide).
	Hide query.Query
	// IDs, when not nil, restricts results to these document ids.
	IDs []string
	// Exclude leaves out these document ids.
	Exclude []string
	// Language is the site's main language (tesseract's code, "" for
	// none): the query is analysed as the site's documents were.
	Language string
}

// Limits of a fulltext query (API.md, "Fulltext query limits"): a query
// string can ask Bleve for work without bound (a regular expression or
// wildcard over every word of the index, thousands of clauses), and one
// such query would hold a core and memory while everyone else waits.
const (
	maxQueryBytes   = 4096
	maxQueryClauses = 256
	maxPatternBytes = 256
	// maxTermExpansion is how many index words one wildcard, regular
	// expression, prefix or fuzzy term may match (OpenSearch's
	// max_clause_count is 1024; Quire's documents are fewer and longer).
	maxTermExpansion = 4096
)

// queryTimeout cancels a fulltext query that runs longer.
var queryTimeout = 10 * time.Second

func init() {
	// Bleve's own bound on the terms a multi-term query expands to
	// (0, its default, is unbounded); the only multi-term queries of the
	// process are fulltext queries.
	searcher.DisjunctionMaxClauseCount = maxTermExpansion
}

// parseQueryString parses a query string within the limits.
func parseQueryString(text, analyzer string) (query.Query, error) {
	if len(text) > maxQueryBytes {
		return nil, storage.Invalid("query", fmt.Sprintf("the query is longer than %d bytes", maxQueryBytes))
	}
	if strings.TrimSpace(text) == "*" {
		// Every document: a wildcard would expand to every word.
		return bleve.NewMatchAllQuery(), nil
	}
	q, err := query.NewQueryStringQuery(text).Parse()
	if err != nil {
		return nil, storage.Invalid("query", "invalid query: "+err.Error())
	}
	clauses := 0
	var walk func(q query.Query) error
	walk = func(q query.Query) error {
		switch t := q.(type) {
		case nil:
		case *query.BooleanQuery:
			for _, c := range []query.Query{t.Must, t.Should, t.MustNot, t.Filter} {
				if err := walk(c); err != nil {
					return err
				}
			}
		case *query.ConjunctionQuery:
			for _, c := range t.Conjuncts {
				if err := walk(c); err != nil {
					return err
				}
			}
		case *query.DisjunctionQuery:
			for _, c := range t.Disjuncts {
				if err := walk(c); err != nil {
					return err
				}
			}
		case *query.MatchQuery:
			clauses++
			if t.Analyzer == "" {
				t.Analyzer = analyzer // the site's, not the mapping's default
			}
		case *query.MatchPhraseQuery:
			clauses++
			if t.Analyzer == "" {
				t.Analyzer = analyzer
			}
		case *query.WildcardQuery:
			clauses++
			if len(t.Wildcard) > maxPatternBytes {
				return storage.Invalid("query", fmt.Sprintf("a wildcard term is longer than %d bytes", maxPatternBytes))
			}
		case *query.RegexpQuery:
			clauses++
			if len(t.Regexp) > maxPatternBytes {
				return storage.Invalid("query", fmt.Sprintf("a regular expression is longer than %d bytes", maxPatternBytes))
			}
		default:
			clauses++
		}
		if clauses > maxQueryClauses {
			return storage.Invalid("query", fmt.Sprintf("the query has more than %d clauses", maxQueryClauses))
		}
		return nil
	}
	if err := walk(q); err != nil {
		return nil, err
	}
	return widen(q), nil
}

// widen makes each clause of a query string that names no field search
// the path words too, weighed by pathBoost, as a plain query does: the
// text (content, the default field) does not hold them.
func widen(q query.Query) query.Query {
	switch t := q.(type) {
	case *query.BooleanQuery:
		t.Must, t.Should, t.MustNot, t.Filter = widen(t.Must), widen(t.Should), widen(t.MustNot), widen(t.Filter)
	case *query.ConjunctionQuery:
		for i, c := range t.Conjuncts {
			t.Conjuncts[i] = widen(c)
		}
	case *query.DisjunctionQuery:
		for i, c := range t.Disjuncts {
			t.Disjuncts[i] = widen(c)
		}
	case query.FieldableQuery:
		if t.Field() != "" {
			return q
		}
		p := cloneFieldable(t)
		if p == nil {
			return q
		}
		t.SetField(fContent)
		p.SetField(fPath)
		return bleve.NewDisjunctionQuery(q, pathQuery(p))
	}
	return q
}

// cloneFieldable returns a copy of the word queries a query string makes
// (nil for others, which are left on the default field).
func cloneFieldable(q query.FieldableQuery) query.FieldableQuery {
	switch t := q.(type) {
	case *query.MatchQuery:
		c := *t
		return &c
	case *query.MatchPhraseQuery:
		c := *t
		return &c
	case *query.TermQuery:
		c := *t
		return &c
	case *query.PrefixQuery:
		c := *t
		return &c
	case *query.WildcardQuery:
		c := *t
		return &c
	case *query.RegexpQuery:
		c := *t
		return &c
	case *query.FuzzyQuery:
		c := *t
		return &c
	case *query.PhraseQuery:
		c := *t
		return &c
	}
	return nil
}

// searchErr turns the errors of a query that asked too much into
// validation errors, and with a query string (syntax) any error: Bleve
// reports a bad regular expression or fuzziness only when it searches.
// Bleve's too-many-clauses error has no type of its own: its text is what
// tells it apart.
func searchErr(err error, syntax bool) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return storage.Invalid("query", fmt.Sprintf("the query did not finish within %s; make it more specific", queryTimeout))
	case strings.Contains(err.Error(), "TooManyClauses"):
		return storage.Invalid("query", fmt.Sprintf("a wildcard, regular expression, prefix or fuzzy term of the query matches more than %d words; make it more specific", maxTermExpansion))
	case syntax:
		return storage.Invalid("query", "invalid query: "+err.Error())
	}
	return err
}

// Text runs a fulltext search over content, path, tags and attribute
// values of site. It returns the hits and the total number of matches.
// A query that asks too much (see the limits above) is a
// *storage.ValidationError.
func (x *Index) Text(site, text string, o TextOptions) ([]Hit, uint64, error) {
	var tq query.Query
	if o.Syntax {
		var err error
		if tq, err = parseQueryString(text, analysis.For(o.Language)); err != nil {
			return nil, 0, err
		}
	} else {
		// Plain text has the query string's bounds (API.md): each word
		// may expand to the words it begins, so a long text would ask
		// for thousands of expansions.
		if len(text) > maxQueryBytes {
			return nil, 0, storage.Invalid("query", fmt.Sprintf("the query is longer than %d bytes", maxQueryBytes))
		}
		if n := len(strings.Fields(text)); n > maxQueryClauses {
			return nil, 0, storage.Invalid("query", fmt.Sprintf("the query has %d words; at most %d", n, maxQueryClauses))
		}
		tq = x.wordsQuery(text, analysis.For(o.Language))
		if tq == nil {
			return nil, 0, nil
		}
	}
	if o.Size <= 0 {
		o.Size = 10
	}
	if o.From < 0 || o.From > MaxResultWindow-o.Size {
		return nil, 0, ErrResultWindow
	}
	if o.IDs != nil && len(o.IDs) == 0 {
		return nil, 0, nil
	}
	// Filters and exclusions are matched in the index, so the total is
	// exact and only the page's documents are read from storage.
	var filters, hide []query.Query
	siteFilter := !x.onlySite(site)
	if siteFilter {
		filters = append(filters, siteQuery(site))
	}
	if o.Filter != nil {
		filters = append(filters, o.Filter)
	}
	if o.IDs != nil {
		// A few ids (documentIds, the overlay): they drive the search
		// (Bleve's conjunction walks its shortest list and skips ahead in
		// the others), where a filter would walk every match of the text.
		tq = bleve.NewConjunctionQuery(tq, bleve.NewDocIDQuery(docIDs(site, o.IDs)))
	}
	if o.Hide != nil {
		hide = append(hide, o.Hide)
	}
	if len(o.Exclude) > 0 {
		hide = append(hide, bleve.NewDocIDQuery(docIDs(site, o.Exclude)))
	}
	// Must is a conjunction even of one query, so it never searches as
	// Bleve's match-none (which BooleanQuery would take for "no must
	// clause" and, with MustNot, turn into "every document").
	bq := bleve.NewBooleanQuery()
	_, all := tq.(*query.MatchAllQuery)
	switch {
	case len(filters) == 0 && len(hide) == 0:
		// Nothing but the text: its searcher alone, without a boolean
		// and a conjunction wrapped around each match (a third of the
		// cost of a word in most documents), and one word's postings
		// without even a searcher (a quarter less again).
		if w, ok := tq.(*wordTerm); ok {
			ctx, cancel := context.WithTimeout(context.Background(), queryTimeout)
			defer cancel()
			hits, total, err := x.collectWord(ctx, w.term, o.From, o.Size)
			if err != nil {
				return nil, 0, searchErr(err, false)
			}
			return hits, total, nil
		}
		if f, ok := tq.(*fragmentTerms); ok {
			ctx, cancel := context.WithTimeout(context.Background(), queryTimeout)
			defer cancel()
			hits, total, err := x.collectFragment(ctx, f, "", o.From, o.Size)
			if err != nil {
				return nil, 0, searchErr(err, false)
			}
			return hits, total, nil
		}
		if t, ok := tq.(*query.TermQuery); ok && !o.Syntax {
			ctx, cancel := context.WithTimeout(context.Background(), queryTimeout)
			defer cancel()
			hits, total, err := x.collectTerm(ctx, t.Field(), t.Term, o.From, o.Size)
			if err != nil {
				return nil, 0, searchErr(err, false)
			}
			return hits, total, nil
		}
		return x.textSearch(tq, o)
	case siteFilter && len(filters) == 1 && len(hide) == 0 && isCompound(tq):
		// A word with compound parts in an index of several sites: its
		// tiers from the postings, the site's documents only, so parts
		// rank below the word itself here too.
		ctx, cancel := context.WithTimeout(context.Background(), queryTimeout)
		defer cancel()
		hits, total, err := x.collectFragment(ctx, tq.(*fragmentTerms), site, o.From, o.Size)
		if err != nil {
			return nil, 0, searchErr(err, false)
		}
		return hits, total, nil
	case all && len(filters) > 0:
		// Tags or attributes alone (/searchFulltext without text): the
		// filters' postings drive instead of every document's.
		bq.AddMust(filters...)
	case len(filters) == 0:
		bq.AddMust(tq)
	case len(filters) == 1:
		bq.AddMust(tq)
		bq.AddFilter(filters[0])
	default:
		bq.AddMust(tq)
		bq.AddFilter(bleve.NewConjunctionQuery(filters...))
	}
	if len(hide) > 0 {
		bq.AddMustNot(hide...)
	}
	return x.textSearch(bq, o)
}

func (x *Index) textSearch(q query.Query, o TextOptions) ([]Hit, uint64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), queryTimeout)
	defer cancel()
	hits, total, err := x.collect(ctx, q, o.From, o.Size)
	if err != nil {
		return nil, 0, searchErr(err, o.Syntax)
	}
	return hits, total, nil
}

// wordsQuery is the query of plain text: every word must occur in
// content (which holds path, tags and attribute values too), a word being
// any of the terms the site's analyzer makes of it (Bleve's match query,
// built here without its wrappers: a word is one term query), and a term
// the index lacks the terms it begins (wordQuery: fragments). It is nil
// when a word has no term (a stop word): such a query matches nothing.
func (x *Index) wordsQuery(text, analyzer string) query.Query {
	var words []query.Query
	for _, w := range strings.Fields(text) {
		tokens := x.analyze(analyzer, w)
		terms := make([]query.Query, len(tokens))
		for i, tk := range tokens {
			terms[i] = x.wordQuery(tk, analyzer)
		}
		switch len(terms) {
		case 0:
			return nil
		case 1:
			words = append(words, terms[0])
		default:
			words = append(words, bleve.NewDisjunctionQuery(terms...))
		}
	}
	switch len(words) {
	case 0:
		return nil
	case 1:
		return words[0]
	}
	return bleve.NewConjunctionQuery(words...)
}

// Query is a Bleve query, for filters built by callers.
type Query = query.Query

func docIDs(site string, ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = docID(site, id)
	}
	return out
}

// TagFilter matches the documents with a tag key and, when values are
// given, one of them (exactly, as storage.Tag.AllValues holds them).
func TagFilter(key string, values []string) query.Query {
	return kvFilter(fTagKey, fTagVal, key, values)
}

// AttrFilter matches the documents with an attribute key and, when values
// are given, one of them (exactly: strings, numbers as
// storage.FormatNumber writes them, booleans as "true" and "false").
func AttrFilter(key string, values []string) query.Query {
	return kvFilter(fAttrKey, fAttrVal, key, values)
}

func kvFilter(fk, fv, key string, values []string) query.Query {
	if len(values) == 0 {
		return termQuery(fk, key)
	}
	or := make([]query.Query, len(values))
	for i, v := range values {
		or[i] = termQuery(fv, kvTerm(key, v))
	}
	if len(or) == 1 {
		return or[0]
	}
	return bleve.NewDisjunctionQuery(or...)
}

func termQuery(field, term string) query.Query {
	q := bleve.NewTermQuery(term)
	q.SetField(field)
	return q
}

// FolderHide returns the query matching the documents whose folder does
// not grant a caller in groups perm under the folder permissions set
// (storage.FolderPermissionSet.Allows), or nil when it hides nothing. A
// document is hidden when the nearest folder with permissions at or above
// its own denies: it is below that folder and below none of the folders
// with permissions further down (whichever they decide).
func FolderHide(set storage.FolderPermissionSet, groups []string, perm string) query.Query {
	var hidden []query.Query
	for p := range set {
		if set.Allows(p, groups, perm) {
			continue
		}
		q := bleve.NewBooleanQuery()
		q.AddMust(termQuery(fFolders, "/"+p))
		for r := range set {
			if r != p && (p == "" || strings.HasPrefix(r, p+"/")) {
				q.AddMustNot(termQuery(fFolders, "/"+r))
			}
		}
		hidden = append(hidden, q)
	}
	if len(hidden) == 0 {
		return nil
	}
	return bleve.NewDisjunctionQuery(hidden...)
}

// FolderFilter matches the documents in folder or any folder below it
// ("" is the root: every document).
func FolderFilter(folder string) query.Query {
	return termQuery(fFolders, "/"+strings.Trim(folder, "/"))
}

// InsertedRange matches the documents inserted at or after from and
// before to; a zero time leaves that end open (not both).
func InsertedRange(from, to time.Time) query.Query {
	incl, excl := true, false
	q := bleve.NewDateRangeInclusiveQuery(from, to, &incl, &excl)
	q.SetField(fInserted)
	return q
}

// MatchAll matches every document.
func MatchAll() query.Query { return bleve.NewMatchAllQuery() }

// MatchNone matches no document.
func MatchNone() query.Query { return bleve.NewMatchNoneQuery() }

// Or combines queries with OR.
func Or(qs ...query.Query) query.Query { return bleve.NewDisjunctionQuery(qs...) }

// And combines queries with AND.
func And(qs ...query.Query) query.Query { return bleve.NewConjunctionQuery(qs...) }

// hasIDs reports which of the document ids bids ("site/id") either index
// holds.
func (x *Index) hasIDs(bids []string) (map[string]bool, error) {
	out := make(map[string]bool, len(bids))
	for _, b := range []bleve.Index{x.names, x.text} {
		adv, err := b.Advanced()
		if err != nil {
			return nil, err
		}
		r, err := adv.Reader()
		if err != nil {
			return nil, err
		}
		if s, ok := r.(*scorch.IndexSnapshot); ok && s == nil {
			return nil, bleve.ErrorIndexClosed // scorch's reader once closed
		}
		err = func() error {
			defer r.Close()
			ids, err := r.DocIDReaderOnly(bids)
			if err != nil {
				return err
			}
			defer ids.Close()
			for {
				iid, err := ids.Next()
				if err != nil || iid == nil {
					return err
				}
				bid, err := r.ExternalID(iid)
				if err != nil {
					return err
				}
				out[bid] = true
			}
		}()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
