package index

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"

	"quire/index/analysis"
	"quire/storage"
)

// fLang is the type field of the text index: the analyzer a document was
// indexed with (the analyzer of its site's main language, analysis.For),
// whose document mapping gives its text fields that analyzer.
const fLang = "_lang"

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
// analyzer indexes compound parts (analysis.Compound) gets
// compoundWordQuery instead.
func (x *Index) wordQuery(term, analyzer string) query.Query {
	if utf8.RuneCountInString(term) < minFragmentRunes {
		return newWordTerm(term)
	}
	if analysis.Compound(analyzer) {
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
		an = x.text.Mapping().AnalyzerNamed(analysis.Default)
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
	an := analysis.For(lang)
	words := x.analyze(an, q)
	if len(words) == 0 {
		return nil
	}
	var pages []int
	for i, page := range strings.Split(text, "\f") {
		if strings.TrimSpace(page) == "" {
			continue
		}
		if pageMatches(x.analyze(an, page), words, analysis.Compound(an)) {
			pages = append(pages, i+1)
		}
	}
	return pages
}

func pageMatches(terms, words []string, parts bool) bool {
	for _, t := range terms {
		for _, w := range words {
			if t == w || utf8.RuneCountInString(w) >= minFragmentRunes && strings.HasPrefix(t, w) || parts && analysis.HasPart(t, w) {
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
		if a := analysis.For(ix.siteLanguage(site)); a != analysis.Default {
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
	want := analysis.For(ix.siteLanguage(site))
	had := ix.x.internalString(langKey(site))
	if had == want || had == "" && want == analysis.Default {
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
