package index

import (
	"context"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/lang/de"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/lang/es"
	"github.com/blevesearch/bleve/v2/analysis/lang/fr"
	"github.com/blevesearch/bleve/v2/analysis/lang/it"
	"github.com/blevesearch/bleve/v2/analysis/lang/nl"
	"github.com/blevesearch/bleve/v2/analysis/token/length"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/token/porter"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"

	"quire/storage"
)

// Analyzers (index/DESIGN.md, "Analyzers"). A site's text is analysed by
// the analyzer of its main language (the first of the site's
// processing.languages, tesseract's codes): every document of the site
// is indexed under a Bleve type of that name (fLang), whose mapping gives
// its text fields that analyzer, and its queries are analysed the same
// way. Sites without a language, English ones and languages without an
// analyzer here get defaultAnalyzer.
const (
	// defaultAnalyzer: Unicode words, lower case, German letters folded
	// (ä/ae → a, ö/oe → o, ü/ue → u, ß → ss: Müller, Mueller and muller
	// are one word, Straße and Strasse too), English stop words, Porter's
	// stemmer (Zebracorns → zebracorn).
	defaultAnalyzer = "quire"
	// The language analyzers: Bleve's de, fr, it, es and nl chains, each
	// with the token cap (analyzerChains).
	deAnalyzer = "quire_de"
	frAnalyzer = "quire_fr"
	itAnalyzer = "quire_it"
	esAnalyzer = "quire_es"
	nlAnalyzer = "quire_nl"
	// fLang is the type field: the analyzer a document was indexed with.
	fLang = "_lang"
)

// The token cap (index/DESIGN.md, "Token cap"): a token of the tokenizer
// longer than maxTokenRunes letters (Lucene's StandardTokenizer default)
// is dropped, before any other filter, by every analyzer of the text
// mapping, at indexing and at query time alike. No word a person types is
// that long; a base64 blob, a hex dump or a run of OCR noise is, and each
// such "word" was a term of its own in the dictionary (a 256 KiB one cost
// every merge of its segment the copy of 256 KiB). A query word over the
// cap analyses to nothing, as a stop word does, and matches nothing.
const (
	maxTokenRunes = 255
	// tokenCapFilter is Bleve's length filter with maxTokenRunes, defined
	// in the text mapping.
	tokenCapFilter = "quire_token_cap"
)

// analyzerChains is every analyzer the text mapping defines (and the only
// analyzers its text fields use; TestAnalyzers_AllCapped checks the
// mapping against it): each is Bleve's unicode tokenizer, tokenCapFilter,
// then these token filters. The language analyzers' filters are those of
// Bleve's analyzer of the language, in its order.
var analyzerChains = map[string][]string{
	defaultAnalyzer: {lowercase.Name, de.NormalizeName, en.StopName, porter.Name},
	deAnalyzer:      deFilters,
	frAnalyzer:      {lowercase.Name, fr.ElisionName, fr.StopName, fr.LightStemmerName},
	itAnalyzer:      {lowercase.Name, it.ElisionName, it.StopName, it.LightStemmerName},
	esAnalyzer:      {lowercase.Name, es.StopName, es.NormalizeName, es.LightStemmerName},
	nlAnalyzer:      {lowercase.Name, nl.StopName, nl.SnowballStemmerName},
	partsAnalyzer:   append(slices.Clip(deFilters), decompoundFilter), // compound.go
}

// deFilters are the token filters of Bleve's de analyzer.
var deFilters = []string{lowercase.Name, de.StopName, de.NormalizeName, de.LightStemmerName}

// languageAnalyzers maps tesseract's language codes to analyzers.
var languageAnalyzers = map[string]string{
	"deu": deAnalyzer, // lower case, German stop words, German folding (as above), light stemmer
	"fra": frAnalyzer, // lower case, elision (l', d'), French stop words, light stemmer
	"ita": itAnalyzer,
	"spa": esAnalyzer,
	"nld": nlAnalyzer,
}

// AnalyzerFor returns the analyzer of a site whose main language is lang
// (a tesseract code; "" for none).
func AnalyzerFor(lang string) string {
	if a, ok := languageAnalyzers[lang]; ok {
		return a
	}
	return defaultAnalyzer
}

// addAnalyzers defines the token cap and every analyzer of analyzerChains
// in the text mapping.
func addAnalyzers(im *mapping.IndexMappingImpl) {
	// The length filter reads its bounds as JSON numbers (float64).
	err := im.AddCustomTokenFilter(tokenCapFilter, map[string]any{"type": length.Name, "max": float64(maxTokenRunes)})
	if err != nil {
		panic(err) // constant input
	}
	for _, name := range slices.Sorted(maps.Keys(analyzerChains)) {
		filters := []any{tokenCapFilter}
		for _, f := range analyzerChains[name] {
			filters = append(filters, f)
		}
		err := im.AddCustomAnalyzer(name, map[string]any{"type": custom.Name, "tokenizer": unicode.Name, "token_filters": filters})
		if err != nil {
			panic(err) // constant input
		}
	}
}

// Fragments: a word of a plain text query that is no term of the index
// (zebracor, the first part of Rechnungsnummer) stands for the terms it
// begins, up to maxFragmentTerms of them, when it has at least
// minFragmentRunes letters. A word that is a term is searched as itself:
// the one-word fast path (collectTerm and the best hits) stays.
const (
	minFragmentRunes = 3
	maxFragmentTerms = 64
)

// wordQuery is the query of one analysed term of a plain text query: the
// term when the index has it (in the text or in the path words), else the
// terms it is a prefix of. A term is looked up in the text (content) and
// in the path words (path): a document that has it only in its path ranks
// below every document that has it in its text (pathBoost). A site whose
// analyzer indexes compound parts (compoundAnalyzers) gets
// compoundWordQuery instead.
func (x *Index) wordQuery(term, analyzer string) query.Query {
	if utf8.RuneCountInString(term) < minFragmentRunes {
		return newWordTerm(term)
	}
	if compoundAnalyzers[analyzer] {
		return x.compoundWordQuery(term)
	}
	cterms, cexact := x.expand(fContent, term)
	pterms, pexact := x.expand(fPath, term)
	if cexact || pexact || len(cterms)+len(pterms) == 0 {
		return newWordTerm(term)
	}
	return newFragmentTerms(cterms, nil, nil, pterms)
}

// compoundWordQuery is wordQuery for a site that indexes compound parts
// (compound.go), in three tiers. When the index has the term: the term in
// the text; then, as parts, the words of the text it begins (garten:
// gartenstrasse) and the compounds it ends or precedes a link in
// (partTerms: strasse, gartenstrasse); then the term in the path words.
// Otherwise the words it begins in the text (a fragment, as wordQuery),
// then the compounds, then the path words it begins. Without parts it is
// wordQuery's query. Its extra work is two dictionary walks, each bounded
// (maxFragmentTerms terms).
func (x *Index) compoundWordQuery(term string) query.Query {
	cterms, cexact := x.prefixTerms(fContent, term, true)
	parts := x.partTerms(term)
	if !cexact {
		if pterms, pexact := x.expand(fPath, term); !pexact {
			if len(cterms)+len(parts)+len(pterms) == 0 {
				return newWordTerm(term)
			}
			return newFragmentTerms(cterms, nil, parts, pterms)
		}
	}
	if len(cterms)+len(parts) == 0 {
		return newWordTerm(term)
	}
	q := newFragmentTerms([]string{term}, cterms, parts, []string{term})
	if f, ok := q.(*fragmentTerms); ok {
		f.word = true // collectFragment ranks it from its best hits
	}
	return q
}

// pathBoost is the weight of a match in the path words against one in the
// text, for queries run through Bleve's searchers (a lone word is ranked
// in tiers by collectWord instead). A match in the text scores above 1e-3
// even once in the longest text the index takes (the field's length norm;
// idf is at least 1); one in the path words below 1e-4 even for the
// rarest term of a million documents (idf squared under 250, times
// pathBoost). So a document with a word only in its path ranks below
// every document with it in its text.
const pathBoost = 1e-7

// pathQuery weighs q, a query of the path words, by pathBoost.
func pathQuery(q query.Query) query.Query { return boosted(q, pathBoost) }

// boosted weighs q by boost.
func boosted(q query.Query, boost float64) query.Query {
	if b, ok := q.(query.BoostableQuery); ok {
		b.SetBoost(boost)
	}
	return q
}

// wordTerm is the query of one term of plain text: the term in the text or
// in the path words, text matches first. Text recognizes it to answer a
// lone word from the postings (collectWord) instead of through a searcher.
type wordTerm struct {
	*query.DisjunctionQuery
	term string
}

func newWordTerm(term string) *wordTerm {
	return &wordTerm{
		DisjunctionQuery: bleve.NewDisjunctionQuery(termQuery(fContent, term), pathQuery(termQuery(fPath, term))),
		term:             term,
	}
}

// expand reads field's dictionary from term on: whether term itself is
// there, and else up to maxFragmentTerms terms that begin with it.
func (x *Index) expand(field, term string) ([]string, bool) {
	return x.prefixTerms(field, term, false)
}

// prefixTerms is expand; past goes on past term itself, returning the
// terms that begin with it (term left out) and whether term is there.
func (x *Index) prefixTerms(field, term string, past bool) ([]string, bool) {
	r, err := x.textReader()
	if err != nil {
		return nil, false
	}
	defer r.Close()
	d, err := r.FieldDictPrefix(field, []byte(term))
	if err != nil {
		return nil, false
	}
	defer d.Close()
	var out []string
	exact := false
	for len(out) < maxFragmentTerms {
		e, err := d.Next()
		if err != nil || e == nil {
			break
		}
		if e.Count == 0 {
			continue
		}
		if e.Term == term {
			if !past {
				return nil, true
			}
			exact = true
			continue
		}
		out = append(out, e.Term)
	}
	return out, exact
}

// analyze returns the terms the analyzer makes of text.
func (x *Index) analyze(analyzer, text string) []string {
	an := x.text.Mapping().AnalyzerNamed(analyzer)
	if an == nil {
		an = x.text.Mapping().AnalyzerNamed(defaultAnalyzer)
	}
	var out []string
	for _, tk := range an.Analyze([]byte(text)) {
		out = append(out, string(tk.Term))
	}
	return out
}

// MatchedPages returns the pages (1 on; pages are separated by form
// feeds, as OCR and pdftotext write them) of text on which a word of the
// plain text query occurs as the index matches it: the same term after
// the site language's analysis, or for a fragment a term it begins, or on
// a site that indexes compound parts a compound it is a part of. It
// names the page of a hit without the index storing positions: the hit's
// text is read back from storage anyway for its snippet.
func (x *Index) MatchedPages(lang, text, q string) []int {
	an := AnalyzerFor(lang)
	words := x.analyze(an, q)
	if len(words) == 0 {
		return nil
	}
	var pages []int
	for i, page := range strings.Split(text, "\f") {
		if strings.TrimSpace(page) == "" {
			continue
		}
		if pageMatches(x.analyze(an, page), words, compoundAnalyzers[an]) {
			pages = append(pages, i+1)
		}
	}
	return pages
}

func pageMatches(terms, words []string, parts bool) bool {
	for _, t := range terms {
		for _, w := range words {
			if t == w || utf8.RuneCountInString(w) >= minFragmentRunes && strings.HasPrefix(t, w) || parts && hasPart(t, w) {
				return true
			}
		}
	}
	return false
}

// MatchedPages returns the pages of a document's text (as storage holds
// it) that a plain text query matched, in the site's language.
func (ix *Indexer) MatchedPages(site, id, q string) []int {
	return ix.x.MatchedPages(ix.siteLanguage(site), ix.Text(site, id), q)
}

// HitPages returns the pages of a search hit's text that a plain text
// query matched (MatchedPages), for a document whose text is in pages:
// the text a FULLTEXT action read from a PDF, a scan or an Office
// document (pages separated by form feeds). Plain text types, whose text
// is their content, and texts without a form feed have no pages to name:
// nil. Only the text record is read, never a text type's content.
func (ix *Indexer) HitPages(site, id, contentType, q string) []int {
	if Extractable(contentType) {
		return nil
	}
	text := ix.Text(site, id)
	if !strings.ContainsRune(text, '\f') {
		return nil
	}
	return ix.x.MatchedPages(ix.siteLanguage(site), text, q)
}

// siteLanguage is the main language of a site's documents ("" when unset
// or unreadable: the default analyzer).
func (ix *Indexer) siteLanguage(site string) string {
	c, err := ix.db.SiteConfig(site)
	if err != nil {
		return ""
	}
	return c.SearchLanguage()
}

// langKey is the internal key recording the analyzer a site's documents
// are indexed with.
func langKey(site string) string { return "analyzer/" + site }

// recordSiteAnalyzers records, for a new index, the analyzer each
// configured site's documents are about to be indexed with. Without it
// the next configuration change of a site with a language of its own
// (any change, its language kept) found no record and indexed the whole
// site a second time.
func (ix *Indexer) recordSiteAnalyzers() error {
	sites, err := ix.db.ConfiguredSites()
	if err != nil {
		return err
	}
	for _, site := range sites {
		if a := AnalyzerFor(ix.siteLanguage(site)); a != defaultAnalyzer {
			if err := ix.x.setInternalString(langKey(site), a); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkSiteAnalyzer reindexes a site's documents when its analyzer
// changed (a new main language in its processing.languages): their terms
// were made by the old one. It runs after the site configuration's commit,
// in the background; the documents go through the indexer's queue and
// overlay like any change.
func (ix *Indexer) checkSiteAnalyzer(ctx context.Context, site string) error {
	want := AnalyzerFor(ix.siteLanguage(site))
	had := ix.x.internalString(langKey(site))
	if had == want || had == "" && want == defaultAnalyzer {
		return nil
	}
	ix.log.Info("site language changed: reindexing its documents", "site", site, "analyzer", want, "was", had)
	var refs []storage.DocRef
	err := ix.db.ChangedDocs(0, func(r storage.DocRef) error {
		if r.Site == site {
			refs = append(refs, r)
		}
		return ctx.Err()
	})
	if err != nil {
		return err
	}
	for len(refs) > 0 {
		n := min(len(refs), maxBatch)
		if err := ix.index(refs[:n]); err != nil {
			return err
		}
		ix.overlayMark(refs[:n])
		refs = refs[n:]
	}
	return ix.x.setInternalString(langKey(site), want)
}
