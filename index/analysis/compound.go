package analysis

import (
	"strings"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/registry"
)

// Compounds (index/DESIGN.md, "Compounds"). German writes compounds as
// one word: Gartenstraße, Stromrechnung, Krankenversicherungsnummer. A
// German site's text is indexed a second time, in the index's parts
// field, as the compound parts a query word can end: every long word of
// the text (after the de analyzer: lower case, folded, stemmed) reversed,
// and reversed the part before each reliable linking -s- (after -ung,
// -heit, -keit, -schaft, -ion, -ität, -ling, which always take it in a
// compound: Krankenversicherungs|nummer gives krankenversicherung). A
// query word w then matches a compound ending in w (strasse:
// gartenstrasse) or with w before a linking -s- (versicherung:
// krankenversicherungsnummer) by one walk of the parts field's dictionary
// from Reverse(w), as a fragment walks the content dictionary from w. No
// word list is needed: the algorithm is the dictionary, and the binary
// works air-gapped.
//
// Only sites whose analyzer is Compound (German) index and query parts:
// other sites get no extra term and no extra lookup. How parts rank
// against whole words is the index's business (its collectFragment and
// partBoost).
const (
	// DeParts is the analyzer of the parts field: De followed by
	// decompoundFilter (chains).
	DeParts = "de_parts"
	// decompoundFilter turns each term into its reversed parts.
	decompoundFilter = "quire_decompound"
	// minCompoundRunes: a word this long (after stemming) may be a
	// compound; shorter words have no parts indexed.
	minCompoundRunes = 8
	// MinPartRunes: a query word this long is looked up as a part
	// (haus finds krankenhaus; amt is too short to tell from gesamt).
	MinPartRunes = 4
	// minModifierRunes: a part leaves at least this much of the compound
	// before it (the first part of a compound is a word).
	minModifierRunes = 3
)

// Compound reports whether sites of analyzer index compound parts (with
// DeParts).
func Compound(analyzer string) bool { return analyzer == De }

// linkingEnds are the endings (German letters folded, as normalize_de
// leaves them) after which a compound takes a linking -s-.
var linkingEnds = []string{"ung", "heit", "keit", "schaft", "ion", "itat", "ling"}

// CompoundParts returns the terms the parts field holds for term (a term
// of the de analyzer): none for a short word; else the word reversed, and
// the part before each linking -s- after one of linkingEnds, reversed,
// when that part is long enough to be a compound itself.
func CompoundParts(term string) []string {
	if utf8.RuneCountInString(term) < minCompoundRunes {
		return nil
	}
	out := []string{Reverse(term)}
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
				out = append(out, Reverse(term[:cut]))
			}
		}
	}
	return out
}

// IsPart reports whether the parts field's term rpart holds the reversed
// word rw as a part: rpart begins with rw and is either rw itself (a part
// before a link) or leaves minModifierRunes before it.
func IsPart(rpart, rw string) bool {
	if !strings.HasPrefix(rpart, rw) {
		return false
	}
	rest := utf8.RuneCountInString(rpart[len(rw):])
	return rest == 0 || rest >= minModifierRunes
}

// HasPart reports whether term (of the de analyzer) has the word w as a
// compound part, as the index matches it (CompoundParts, IsPart).
func HasPart(term, w string) bool {
	if utf8.RuneCountInString(w) < MinPartRunes {
		return false
	}
	rw := Reverse(w)
	for _, p := range CompoundParts(term) {
		if IsPart(p, rw) {
			return true
		}
	}
	return false
}

// Reverse returns s with its letters (code points) in reverse order.
func Reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

// decompound is the token filter decompoundFilter: each token becomes its
// CompoundParts, at the token's position.
type decompound struct{}

func (decompound) Filter(in analysis.TokenStream) analysis.TokenStream {
	out := make(analysis.TokenStream, 0, len(in))
	for _, tk := range in {
		for _, p := range CompoundParts(string(tk.Term)) {
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
