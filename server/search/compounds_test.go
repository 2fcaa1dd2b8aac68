package search_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// TestSearch_GermanCompounds: on a site whose language is German a word
// finds the compounds it is part of (Straße: Gartenstraße, Hauptstrasse;
// Rechnung: Stromrechnung; Versicherung: Krankenversicherungsnummer;
// Garten: Gartenstraße though Garten is a word of another letter), the
// documents with the word itself first and those with it only in their
// file name last, in /search, /searchFulltext and the console's
// /queryFulltext; the same letters in an English site are found as
// before, by the word alone (issue 46).
func TestSearch_GermanCompounds(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	const german, english = "?siteId=finance", ""
	servertest.MustStatus(t, s.Do(http.MethodPatch, "/sites/finance/configuration",
		map[string]any{"processing": map[string]any{"languages": []string{"deu"}, "defaultActions": []string{}}}, admin), http.StatusOK)
	letters := []struct{ name, path, content string }{
		// The word once in a long letter, a compound thrice in a short
		// one: the word still ranks first.
		{"street", "post/a.txt", "Die Straße ist ab Montag gesperrt. " + strings.Repeat("Wir bitten um Verständnis für die Arbeiten. ", 40)},
		{"garden-street", "post/b.txt", "Gartenstraße 5, Gartenstraße 7, Gartenstraße 9"},
		{"main-street", "post/c.txt", "Lieferung an die Hauptstrasse 12"},
		{"garden", "post/d.txt", "Der Garten blüht im Mai"},
		{"bill", "post/e.txt", "Die Rechnung liegt bei"},
		{"power-bill", "post/f.txt", "Ihre Stromrechnung für März"},
		{"insurance-no", "post/g.txt", "Ihre Krankenversicherungsnummer lautet A123"},
		{"pension", "post/h.txt", "Die Rente kommt im Mai"},
		{"file-name", "post/strasse-plan.txt", "Ein Plan der Stadt"},
	}
	name := map[string]string{}
	for _, site := range []string{german, english} {
		for _, l := range letters {
			id := servertest.AddDoc(t, s, admin, site, map[string]any{"path": l.path, "contentType": "text/plain", "content": l.content, "actions": []any{}})
			name[id] = l.name
		}
	}
	// A scanned letter whose recognized text (two pages) names the
	// street on its second page: the hit says so (matchedPages).
	scan := servertest.AddDoc(t, s, admin, german, map[string]any{"path": "post/scan.png", "contentType": "image/png", "isBase64": true,
		"content": servertest.B64(quiretest.PNG(quiretest.TextImage("x"))), "actions": []any{}})
	servertest.MustStatus(t, s.Do(http.MethodPut, "/documents/"+scan+"/fulltext"+german,
		map[string]any{"content": "Sehr geehrte Damen und Herren\fWir wohnen jetzt in der Gartenstraße 5", "contentType": "text/plain"}, admin), http.StatusOK)
	name[scan] = "scan"
	servertest.WaitIndexed(t, s)
	for _, tt := range []struct {
		name, site, text string
		want             [][]string // groups in rank order, each in any order
	}{
		{"German: the word, then its compounds, then the file name", german, "Straße", [][]string{{"street"}, {"garden-street", "main-street", "scan"}, {"file-name"}}},
		{"German: folded", german, "strasse", [][]string{{"street"}, {"garden-street", "main-street", "scan"}, {"file-name"}}},
		{"German: capitals", german, "STRASSE", [][]string{{"street"}, {"garden-street", "main-street", "scan"}, {"file-name"}}},
		{"German: the head of a compound", german, "Rechnung", [][]string{{"bill"}, {"power-bill"}}},
		{"German: the first part, a word itself", german, "Garten", [][]string{{"garden"}, {"garden-street", "scan"}}},
		{"German: a part before a linking s", german, "Versicherung", [][]string{{"insurance-no"}}},
		{"German: the compound", german, "Hauptstraße", [][]string{{"main-street"}}},
		{"German: two words", german, "Garten Strasse", [][]string{{"garden-street", "scan"}}},
		{"German: a word that only ends another", german, "Ente", nil},
		{"English: the word and the file name", english, "Straße", [][]string{{"street"}, {"file-name"}}},
		{"English: no compound", english, "Rechnung", [][]string{{"bill"}}},
		{"English: no part", english, "Versicherung", nil},
		{"English: the word alone", english, "Garten", [][]string{{"garden"}}},
	} {
		for _, route := range servertest.TextRoutes {
			t.Run(tt.name+" "+route, func(t *testing.T) {
				_, ids, _ := servertest.TextHits(t, s, admin, route, tt.site, tt.text)
				var got []string
				for _, id := range ids {
					got = append(got, name[id])
				}
				if !inTiers(got, tt.want) {
					t.Errorf("%q found %v, want %v (groups in that order)", tt.text, got, tt.want)
				}
			})
		}
	}
	for _, route := range servertest.TextRoutes {
		t.Run("the page of the compound "+route, func(t *testing.T) {
			hits, ids, body := servertest.TextHits(t, s, admin, route, german, "Straße")
			i := slices.Index(ids, scan)
			if i < 0 {
				t.Fatalf("the scan is not found: %s", body)
			}
			if pages := quiretest.List(t, hits[i], "matchedPages"); len(pages) != 1 || pages[0] != float64(2) {
				t.Errorf("matchedPages %v, want [2]", pages)
			}
		})
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
