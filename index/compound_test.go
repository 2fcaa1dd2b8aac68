package index

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"quire/index/analysis"
)

// compoundDocs are German letters: whole words, compounds of them, and
// words that only end like one (Rente, Ente).
var compoundDocs = []Doc{
	// The word once in a long letter, a compound thrice in a short one:
	// the word still ranks first.
	{ID: "street", Path: "a.txt", Content: "Die Straße ist gesperrt. " + strings.Repeat("Wir bitten um Verständnis für die Arbeiten. ", 40)},
	{ID: "garden-street", Path: "b.txt", Content: "Gartenstraße 5, Gartenstraße 7, Gartenstraße 9"},
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
		want              [][]string // groups in rank order, each in any order
	}{
		{"a word finds its compounds, the word first", "deu", "Straße", [][]string{{"street"}, {"garden-street", "main-street"}, {"file-name"}}},
		{"folded", "deu", "strasse", [][]string{{"street"}, {"garden-street", "main-street"}, {"file-name"}}},
		{"capitals", "deu", "STRASSE", [][]string{{"street"}, {"garden-street", "main-street"}, {"file-name"}}},
		{"the head of a compound", "deu", "Rechnung", [][]string{{"bill"}, {"power-bill"}}},
		{"its plural", "deu", "Rechnungen", [][]string{{"bill"}, {"power-bill"}}},
		{"the first part, itself a word", "deu", "Garten", [][]string{{"garden"}, {"garden-street"}}},
		{"a part before a linking s", "deu", "Versicherung", [][]string{{"insurance-no"}}},
		{"the head after a linking s", "deu", "Nummer", [][]string{{"insurance-no"}}},
		{"the compound itself", "deu", "Gartenstraße", [][]string{{"garden-street"}}},
		{"a word ending another is no part of it", "deu", "Ente", [][]string{{"duck"}}},
		{"two words, one a part", "deu", "Strasse Garten", [][]string{{"garden-street"}}},
		{"English site: the word only", "", "Straße", [][]string{{"street"}, {"file-name"}}},
		{"English site: no head", "", "Rechnung", [][]string{{"bill"}}},
		{"English site: no middle part", "", "Versicherung", nil},
		{"English site: a fragment as before", "", "Garten", [][]string{{"garden"}}},
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
				n := 0
				for _, g := range tc.want {
					n += len(g)
				}
				if total != uint64(n) || !inTiers(got, tc.want) {
					t.Errorf("%s: %q found %v (total %d), want %v (groups in that order)", setup.name, tc.query, got, total, tc.want)
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

// inTiers reports whether got is want's groups one after another, each
// group's members in any order among themselves.
func inTiers(got []string, want [][]string) bool {
	for _, g := range want {
		if len(got) < len(g) {
			return false
		}
		a, b := slices.Clone(got[:len(g)]), slices.Clone(g)
		slices.Sort(a)
		slices.Sort(b)
		if !slices.Equal(a, b) {
			return false
		}
		got = got[len(g):]
	}
	return len(got) == 0
}

// TestText_CompoundWordFromBestHits: a German word the index has, with
// compounds, is ranked unfiltered from the word's best hits (cached in a
// segment where it is common) and then the parts' and path words'
// postings; that gives every page and the total exactly as summing every
// tier's postings does (the path an index of several sites takes).
func TestText_CompoundWordFromBestHits(t *testing.T) {
	x := openTest(t)
	filler := strings.Repeat("Wir bitten um Verständnis. ", 9)
	var docs []Doc
	for i := range 5000 {
		d := Doc{ID: fmt.Sprintf("d%04d", i), Site: "office", Language: "deu", Path: fmt.Sprintf("post/%d.txt", i)}
		switch i % 3 {
		case 0, 1:
			d.Content = strings.Repeat("Straße ", i%5+1) + filler[:i%7*20]
		default:
			d.Content = "Hauptstraße " + filler[:i%7*20]
		}
		if i%4 == 0 {
			d.Content += " Gartenstraße"
		}
		if i%10 == 0 {
			d.Path, d.Content = fmt.Sprintf("post/strasse-%d.txt", i), "Ein Plan"
		}
		docs = append(docs, d)
	}
	if err := x.Put(docs, nil); err != nil {
		t.Fatal(err)
	}
	f, ok := x.wordQuery("strass", analysis.De).(*fragmentTerms)
	if !ok || !f.word {
		t.Fatalf("strass is no word with parts: %#v", f)
	}
	used := x.best.Used.Load()
	for _, page := range []struct{ from, size int }{{0, 10}, {3000, 40}, {3290, 30}, {3300, 50}, {4490, 20}, {4990, 10}} {
		got, total, err := x.Text("office", "Straße", TextOptions{From: page.from, Size: page.size, Language: "deu"})
		if err != nil {
			t.Fatal(err)
		}
		want, wantTotal, err := x.collectFragment(context.Background(), f, "office", page.from, page.size)
		if err != nil {
			t.Fatal(err)
		}
		if total != wantTotal || total != 5000 || len(got) != len(want) {
			t.Fatalf("page %v: %d hits of %d, summed %d of %d", page, len(got), total, len(want), wantTotal)
		}
		for i := range got {
			if got[i].ID != want[i].ID {
				t.Fatalf("page %v, hit %d: %s, summed %s", page, i, got[i].ID, want[i].ID)
			}
		}
	}
	if x.best.Used.Load() == used {
		t.Fatal("no cached best hits used")
	}
}
