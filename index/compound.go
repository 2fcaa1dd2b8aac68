package index

import (
	"unicode/utf8"

	"quire/index/analysis"
)

// Compound parts (index/DESIGN.md, "Compounds"; the analysis is
// index/analysis's). A German site's text is indexed a second time, in
// field fParts, as the compound parts a query word can end
// (analysis.CompoundParts), and a query word w then matches a compound
// ending in w or with w before a linking -s- by one walk of fParts'
// dictionary from its reversal (partTerms).
//
// Parts rank below whole words: a plain query ranks the documents with
// the word itself (or, when no document has it, the words it begins) in
// their text first, then the documents with it as a compound part, then
// those with it only in their path words (collectFragment); with tag,
// attribute or folder filters, Bleve ranks them by weight (partBoost).
const (
	// fParts is the field of compound parts (German sites only).
	fParts = "parts"
	// maxPartVisits bounds the entries one part walk reads.
	maxPartVisits = 4 * maxFragmentTerms
	// partBoost is the weight of a compound part against the word itself
	// for queries run through Bleve's searchers (filtered ones).
	partBoost = 1e-3
)

// partTerms returns the terms of fParts that hold term as a part (isPart),
// at most maxFragmentTerms of them, reading at most maxPartVisits entries
// of the dictionary: nothing for a word shorter than analysis.MinPartRunes.
func (x *Index) partTerms(term string) []string {
	if utf8.RuneCountInString(term) < analysis.MinPartRunes {
		return nil
	}
	r, err := x.textReader()
	if err != nil {
		return nil
	}
	defer r.Close()
	rw := analysis.Reverse(term)
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
		if e.Count > 0 && analysis.IsPart(e.Term, rw) {
			out = append(out, e.Term)
		}
	}
	return out
}
