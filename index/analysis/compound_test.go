package analysis

import (
	"slices"
	"testing"
)

// TestCompoundParts: the terms the parts field holds for a term of the de
// analyzer.
func TestCompoundParts(t *testing.T) {
	for _, tc := range []struct {
		term string
		want []string
	}{
		{"haus", nil},
		{"gartenstrass", []string{"ssartsnetrag"}},
		{"krankenversicherungsnumm", []string{"mmunsgnurehcisrevneknark", "gnurehcisrevneknark"}},
		{"rechnungsnumm", []string{"mmunsgnunhcer", "gnunhcer"}},
		{"versicherungs", []string{"sgnurehcisrev"}}, // an s at the end links nothing
	} {
		if got := CompoundParts(tc.term); !slices.Equal(got, tc.want) {
			t.Errorf("CompoundParts(%q) = %q, want %q", tc.term, got, tc.want)
		}
	}
	for _, tc := range []struct {
		term, w string
		want    bool
	}{
		{"gartenstrass", "strass", true},
		{"krankenversicherungsnumm", "versicherung", true},
		{"krankenversicherungsnumm", "nummer", false}, // not stemmed as the index stems it
		{"krankenversicherungsnumm", "numm", true},
		{"abendstrass", "strass", true},
		{"gartenstrass", "artenstrass", false}, // "g" is too short to be a word before it
		{"gartenstrass", "garten", false},      // a prefix is the fragments' business
		{"strassenbahn", "strass", false},
		{"gartenstrass", "rass", true},
		{"gartenstrass", "ass", false}, // shorter than MinPartRunes
	} {
		if got := HasPart(tc.term, tc.w); got != tc.want {
			t.Errorf("HasPart(%q, %q) = %v, want %v", tc.term, tc.w, got, tc.want)
		}
	}
}
