// Package analysis is the text analysis of Quire's fulltext index
// (index/DESIGN.md, "Analyzers", "Token cap" and "Compounds"): the
// analyzers the text mapping defines, one for sites without a language and
// one per site language, each dropping a word over the token cap first;
// which analyzer a site language gets; and the German compound parts, with
// the token filter that indexes them, registered with Bleve's registry
// when this package is loaded (the index package imports it, so before any
// index opens).
//
// The names below are stored in every index's mapping on disk: an index
// reopened reads its analyzers back by them. Changing one is a change of
// the index format (index.formatVersion).
package analysis

import (
	"maps"
	"slices"

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
)

// Analyzers (index/DESIGN.md, "Analyzers"). A site's text is analysed by
// the analyzer of its main language (the first of the site's
// processing.languages, tesseract's codes): every document of the site
// is indexed under a Bleve type of that name, whose mapping gives its
// text fields that analyzer, and its queries are analysed the same way.
// Sites without a language, English ones and languages without an
// analyzer here get Default.
const (
	// Default: Unicode words, lower case, German letters folded
	// (ä/ae → a, ö/oe → o, ü/ue → u, ß → ss: Müller, Mueller and muller
	// are one word, Straße and Strasse too), English stop words, Porter's
	// stemmer (Zebracorns → zebracorn).
	Default = "quire"
	// The language analyzers: Bleve's de, fr, it, es and nl chains, each
	// with the token cap (chains).
	De = "quire_de"
	Fr = "quire_fr"
	It = "quire_it"
	Es = "quire_es"
	Nl = "quire_nl"
)

// The token cap (index/DESIGN.md, "Token cap"): a token of the tokenizer
// longer than MaxTokenRunes letters (Lucene's StandardTokenizer default)
// is dropped, before any other filter, by every analyzer of the text
// mapping, at indexing and at query time alike. No word a person types is
// that long; a base64 blob, a hex dump or a run of OCR noise is, and each
// such "word" was a term of its own in the dictionary (a 256 KiB one cost
// every merge of its segment the copy of 256 KiB). A query word over the
// cap analyses to nothing, as a stop word does, and matches nothing.
const (
	MaxTokenRunes = 255
	// TokenCapFilter is Bleve's length filter with MaxTokenRunes, defined
	// in the text mapping.
	TokenCapFilter = "quire_token_cap"
)

// chains is every analyzer the text mapping defines (and the only
// analyzers its text fields use; the index package's
// TestAnalyzers_AllCapped checks the mapping against it): each is
// Bleve's unicode tokenizer, TokenCapFilter, then these token filters.
// The language analyzers' filters are those of Bleve's analyzer of the
// language, in its order.
var chains = map[string][]string{
	Default: {lowercase.Name, de.NormalizeName, en.StopName, porter.Name},
	De:      deFilters,
	Fr:      {lowercase.Name, fr.ElisionName, fr.StopName, fr.LightStemmerName},
	It:      {lowercase.Name, it.ElisionName, it.StopName, it.LightStemmerName},
	Es:      {lowercase.Name, es.StopName, es.NormalizeName, es.LightStemmerName},
	Nl:      {lowercase.Name, nl.StopName, nl.SnowballStemmerName},
	DeParts: append(slices.Clip(deFilters), decompoundFilter), // compound.go
}

// deFilters are the token filters of Bleve's de analyzer.
var deFilters = []string{lowercase.Name, de.StopName, de.NormalizeName, de.LightStemmerName}

// languages maps tesseract's language codes to analyzers.
var languages = map[string]string{
	"deu": De, // lower case, German stop words, German folding (as above), light stemmer
	"fra": Fr, // lower case, elision (l', d'), French stop words, light stemmer
	"ita": It,
	"spa": Es,
	"nld": Nl,
}

// For returns the analyzer of a site whose main language is lang (a
// tesseract code; "" for none).
func For(lang string) string {
	if a, ok := languages[lang]; ok {
		return a
	}
	return Default
}

// Languages returns the analyzers of the site languages (For's answers
// other than Default), sorted.
func Languages() []string { return slices.Sorted(maps.Values(languages)) }

// Names returns every analyzer AddTo defines, sorted.
func Names() []string { return slices.Sorted(maps.Keys(chains)) }

// AddTo defines the token cap and every analyzer in the text mapping im.
func AddTo(im *mapping.IndexMappingImpl) {
	// The length filter reads its bounds as JSON numbers (float64).
	err := im.AddCustomTokenFilter(TokenCapFilter, map[string]any{"type": length.Name, "max": float64(MaxTokenRunes)})
	if err != nil {
		panic(err) // constant input
	}
	for _, name := range Names() {
		filters := []any{TokenCapFilter}
		for _, f := range chains[name] {
			filters = append(filters, f)
		}
		err := im.AddCustomAnalyzer(name, map[string]any{"type": custom.Name, "tokenizer": unicode.Name, "token_filters": filters})
		if err != nil {
			panic(err) // constant input
		}
	}
}
