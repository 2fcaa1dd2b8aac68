package index

import (
	"strings"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/registry"
)

// Compounds (index/DESIGN.md, "Compounds"). German writes compounds as
// one word: Gartenstraße, Stromrechnung, Krankenversicherungsnummer. A
// German site's text is indexed a second time, in field fParts, as the
// compound parts a query word can end: every long word of the text (after
// the de analyzer: lower case, folded, stemmed) reversed, and reversed the
// part before each reliable linking -s- (after -ung, -heit, -keit,
// -schaft, -ion, -ität, -ling, which always take it in a compound:
// Krankenversicherungs|nummer gives krankenversicherung). A query word w
// then matches a compound ending in w (strasse: gartenstrasse) or with w
// before a linking -s- (versicherung: krankenversicherungsnummer) by one
// walk of fParts' dictionary from reverse(w), as a fragment walks the
// content dictionary from w. No word list is needed: the algorithm is
// the dictionary, and the binary works air-gapped.
//
// Parts rank below whole words: a plain query ranks the documents with
// the word itself (or, when no document has it, the words it begins) in
// their text first, then the documents with it as a compound part, then
// those with it only in their path words (collectFragment); with tag,
// attribute or folder filters, Bleve ranks them by weight (partBoost).
// Only sites whose analyzer is in compoundAnalyzers (German) index and
// query parts: other sites get no extra term and no extra lookup.
const (
	// fParts is the field of compound parts (German sites only).
	fParts = "parts"
	// partsAnalyzer is the German analyzer (deAnalyzer) followed by
	// decompoundFilter (analyzerChains).
	partsAnalyzer = "de_parts"
	// decompoundFilter turns each term into its reversed parts.
	decompoundFilter = "quire_decompound"
	// minCompoundRunes: a word this long (after stemming) may be a
	// compound; shorter words have no parts indexed.
	minCompoundRunes = 8
	// minPartRunes: a query word this long is looked up as a part
	// (haus finds krankenhaus; amt is too short to tell from gesamt).
	minPartRunes = 4
	// minModifierRunes: a part leaves at least this much of the compound
	// before it (the first part of a compound is a word).
	minModifierRunes = 3
	// maxPartVisits bounds the entries one part walk reads.
	maxPartVisits = 4 * maxFragmentTerms
	// partBoost is the weight of a compound part against the word itself
	// for queries run through Bleve's searchers (filtered ones).
	partBoost = 1e-3
)

// compoundAnalyzers are the analyzers whose sites index compound parts.
var compoundAnalyzers = map[string]bool{deAnalyzer: true}

// linkingEnds are the endings (German letters folded, as normalize_de
// leaves them) after which a compound takes a linking -s-.
var linkingEnds = []string{"ung", "heit", "keit", "schaft", "ion", "itat", "ling"}

// compoundParts returns the terms fParts holds for term (a term of the de
// analyzer): none for a short word; else the word reversed, and the part
// before each linking -s- after one of linkingEnds, reversed, when that
// part is long enough to be a compound itself.
func compoundParts(term string) []string {
	if utf8.RuneCountInString(term) < minCompoundRunes {
		return nil
	}
	out := []string{reverse(term)}
	for _, end := range linkingEnds {
		link := end + "s"
		for from := 0; ; {
			i := strings.Index(term[from:], link)
			if i < 0 {
				break
			}
			cut := from + i + len(end) // the part ends before the s
			from = cut + 1
			if utf8.RuneCountInString(term[cut+1:]) < minModifierRunes {
				continue // too little after the s for a word: no link
			}
			if utf8.RuneCountInString(term[:cut]) >= minCompoundRunes {
				out = append(out, reverse(term[:cut]))
			}
		}
	}
	return out
}

// isPart reports whether the fParts term rpart holds the reversed word rw
// as a part: rpart begins with rw and is either rw itself (a part before
// a link) or leaves minModifierRunes before it.
func isPart(rpart, rw string) bool {
	if !strings.HasPrefix(rpart, rw) {
		return false
	}
	rest := utf8.RuneCountInString(rpart[len(rw):])
	return rest == 0 || rest >= minModifierRunes
}

// hasPart reports whether term (of the de analyzer) has the word w as a
// compound part, as the index matches it (compoundParts, isPart).
func hasPart(term, w string) bool {
	if utf8.RuneCountInString(w) < minPartRunes {
		return false
	}
	rw := reverse(w)
	for _, p := range compoundParts(term) {
		if isPart(p, rw) {
			return true
		}
	}
	return false
}

func reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

// decompound is the token filter decompoundFilter: each token becomes its
// compoundParts, at the token's position.
type decompound struct{}

func (decompound) Filter(in analysis.TokenStream) analysis.TokenStream {
	out := make(analysis.TokenStream, 0, len(in))
	for _, tk := range in {
		for _, p := range compoundParts(string(tk.Term)) {
			c := *tk
			c.Term = []byte(p)
			out = append(out, &c)
		}
	}
	return out
}

func init() {
	err := registry.RegisterTokenFilter(decompoundFilter, func(map[string]any, *registry.Cache) (analysis.TokenFilter, error) {
		return decompound{}, nil
	})
	if err != nil {
		panic(err) // registered once
	}
}

// partTerms returns the terms of fParts that hold term as a part (isPart),
// at most maxFragmentTerms of them, reading at most maxPartVisits entries
// of the dictionary: nothing for a word shorter than minPartRunes.
func (x *Index) partTerms(term string) []string {
	if utf8.RuneCountInString(term) < minPartRunes {
		return nil
	}
	r, err := x.textReader()
	if err != nil {
		return nil
	}
	defer r.Close()
	rw := reverse(term)
	d, err := r.FieldDictPrefix(fParts, []byte(rw))
	if err != nil {
		return nil
	}
	defer d.Close()
	var out []string
	for n := 0; n < maxPartVisits && len(out) < maxFragmentTerms; n++ {
		e, err := d.Next()
		if err != nil || e == nil {
			break
		}
		if e.Count > 0 && isPart(e.Term, rw) {
			out = append(out, e.Term)
		}
	}
	return out
}
