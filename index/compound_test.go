package index

import (
	"slices"
	"testing"
)

// compoundDocs are German letters: whole words, compounds of them, and
// words that only end like one (Rente, Ente).
var compoundDocs = []Doc{
	{ID: "street", Path: "a.txt", Content: "Die Straße ist gesperrt"},
	{ID: "garden-street", Path: "b.txt", Content: "Wir wohnen in der Gartenstraße 5"},
	{ID: "main-street", Path: "c.txt", Content: "Lieferung an die Hauptstrasse 12"},
	{ID: "garden", Path: "d.txt", Content: "Der Garten blüht"},
	{ID: "bill", Path: "e.txt", Content: "Die Rechnung liegt bei"},
	{ID: "power-bill", Path: "f.txt", Content: "Ihre Stromrechnung für März"},
	{ID: "insurance-no", Path: "g.txt", Content: "Ihre Krankenversicherungsnummer lautet A123"},
	{ID: "pension", Path: "h.txt", Content: "Die Rente kommt im Mai"},
	{ID: "duck", Path: "i.txt", Content: "Eine Ente am Teich"},
	{ID: "file-name", Path: "post/strasse-plan.txt", Content: "Ein Plan der Stadt"},
}

// TestText_Compounds: on a German site a word finds the compounds it ends
// (Gartenstraße, Stromrechnung) or stands before a linking -s- in
// (Krankenversicherungs|nummer), and those it begins even when it is a
// word of the index itself (Garten), ranked below the documents with the
// word itself and above those with it only in their file name; an
// English site (the default analyzer) finds what it found before, no
// compound. Each case runs on an index of the site alone (ranked from the
// postings), beside the other site (the site filter) and with an
// exclusion (through Bleve's searchers, ranked by weight).
func TestText_Compounds(t *testing.T) {
	for _, tc := range []struct {
		name, lang, query string
		want              []string // in rank order; a group in [] any order is written in order of id
		head              int      // how many of want are ranked exactly (the rest any order)
	}{
		{"a word finds its compounds, the word first", "deu", "Straße", []string{"street", "garden-street", "main-street", "file-name"}, 1},
		{"folded", "deu", "strasse", []string{"street", "garden-street", "main-street", "file-name"}, 1},
		{"capitals", "deu", "STRASSE", []string{"street", "garden-street", "main-street", "file-name"}, 1},
		{"the head of a compound", "deu", "Rechnung", []string{"bill", "power-bill"}, 2},
		{"its plural", "deu", "Rechnungen", []string{"bill", "power-bill"}, 2},
		{"the first part, itself a word", "deu", "Garten", []string{"garden", "garden-street"}, 2},
		{"a part before a linking s", "deu", "Versicherung", []string{"insurance-no"}, 1},
		{"the head after a linking s", "deu", "Nummer", []string{"insurance-no"}, 1},
		{"the compound itself", "deu", "Gartenstraße", []string{"garden-street"}, 1},
		{"a word ending another is no part of it", "deu", "Ente", []string{"duck"}, 1},
		{"two words, one a part", "deu", "Strasse Garten", []string{"garden-street"}, 1},
		{"English site: the word only", "", "Straße", []string{"street", "file-name"}, 2},
		{"English site: no head", "", "Rechnung", []string{"bill"}, 1},
		{"English site: no middle part", "", "Versicherung", nil, 0},
		{"English site: a fragment as before", "", "Garten", []string{"garden"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			other := map[string]string{"deu": "", "": "deu"}[tc.lang]
			for _, setup := range []struct {
				name   string
				others bool
				o      TextOptions
			}{
				{"alone", false, TextOptions{}},
				{"beside another site", true, TextOptions{}},
				{"with an exclusion", true, TextOptions{Exclude: []string{"absent"}}},
			} {
				x := openTest(t)
				var docs []Doc
				for _, d := range compoundDocs {
					d.Site, d.Language = "office", tc.lang
					docs = append(docs, d)
					if setup.others {
						d.Site, d.Language = "other", other
						docs = append(docs, d)
					}
				}
				if err := x.Put(docs, nil); err != nil {
					t.Fatal(err)
				}
				o := setup.o
				o.Size, o.Language = 20, tc.lang
				hits, total, err := x.Text("office", tc.query, o)
				if err != nil {
					t.Fatalf("%s: %v", setup.name, err)
				}
				var got []string
				for _, h := range hits {
					got = append(got, h.ID)
				}
				ok := total == uint64(len(tc.want)) && len(got) == len(tc.want) && slices.Equal(got[:tc.head], tc.want[:tc.head])
				if ok {
					rest, want := slices.Clone(got[tc.head:]), slices.Clone(tc.want[tc.head:])
					slices.Sort(rest)
					slices.Sort(want)
					ok = slices.Equal(rest, want)
				}
				if !ok {
					t.Errorf("%s: %q found %v (total %d), want %v (the first %d in that order)", setup.name, tc.query, got, total, tc.want, tc.head)
				}
			}
		})
	}
}

// TestMatchedPages_Compounds: on a German site the page of a compound is
// named for its part; on an English one it is not.
func TestMatchedPages_Compounds(t *testing.T) {
	x := openTest(t)
	text := "Sehr geehrte Damen\fWir wohnen in der Gartenstraße 5\fIhre Krankenversicherungsnummer"
	for _, tc := range []struct {
		lang, q string
		want    []int
	}{
		{"deu", "Straße", []int{2}},
		{"deu", "Versicherung", []int{3}},
		{"deu", "Garten", []int{2}},
		{"", "Straße", nil},
		{"", "Versicherung", nil},
	} {
		if got := x.MatchedPages(tc.lang, text, tc.q); !slices.Equal(got, tc.want) {
			t.Errorf("MatchedPages(%q, %q) = %v, want %v", tc.lang, tc.q, got, tc.want)
		}
	}
}

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
		if got := compoundParts(tc.term); !slices.Equal(got, tc.want) {
			t.Errorf("compoundParts(%q) = %q, want %q", tc.term, got, tc.want)
		}
	}
}
