package index

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/mapping"

	"quire/index/analysis"
)

// TestText_TokenCap: per site language, a text holding a 64 KiB "word",
// a 256-letter one (one over the cap) and a 255-letter one (at the cap)
// among ordinary words leaves no term over analysis.MaxTokenRunes letters in any
// text field's dictionary; the ordinary words and the word at the cap are
// found, the words over it are not (alone or beside a word the document
// has: a word the index does not hold matches nothing), and the page
// named for a hit follows the same rule.
func TestText_TokenCap(t *testing.T) {
	x := openTest(t)
	giant := strings.Repeat("g", 64<<10)
	over := strings.Repeat("z", analysis.MaxTokenRunes+1)
	atCap := strings.Repeat("ж", analysis.MaxTokenRunes) // two bytes a letter: the cap counts letters
	overWide := strings.Repeat("ж", analysis.MaxTokenRunes+1)
	pathWord := strings.Repeat("p", analysis.MaxTokenRunes+1)
	langs := []struct{ lang, word, other string }{
		{"", "zebracorn", "invoice"},
		{"eng", "zebracorn", "invoice"},
		{"deu", "Rechnungsnummer", "Straße"},
		{"fra", "facture", "l'avion"},
		{"ita", "fattura", "l'aereo"},
		{"spa", "factura", "camión"},
		{"nld", "factuur", "vliegtuig"},
	}
	var docs []Doc
	for _, l := range langs {
		docs = append(docs, Doc{
			Site: "s" + l.lang, ID: "doc", Language: l.lang, Path: "a/" + pathWord + ".txt",
			Content:    l.word + " " + giant + " " + over + "\f" + atCap + " " + overWide + " " + l.other,
			Tags:       []string{"k " + over},
			Attributes: []string{over},
		})
	}
	if err := x.Put(docs, nil); err != nil {
		t.Fatal(err)
	}
	r, err := x.textReader()
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{fContent, fPath, fTags, fAttrs, fParts} {
		d, err := r.FieldDict(field)
		if err != nil {
			t.Fatal(err)
		}
		for e, err := d.Next(); e != nil && err == nil; e, err = d.Next() {
			if n := utf8.RuneCountInString(e.Term); n > analysis.MaxTokenRunes {
				t.Errorf("field %s holds a term of %d letters (%.20s…)", field, n, e.Term)
			}
		}
		d.Close()
	}
	r.Close()
	for i, l := range langs {
		site := "s" + l.lang
		for _, tc := range []struct {
			query string
			want  uint64
			pages []int
		}{
			{l.word, 1, []int{1}},
			{l.other, 1, []int{2}},
			{atCap, 1, []int{2}},
			{l.word + " " + l.other, 1, []int{1, 2}},
			{giant[:4000], 0, nil}, // as long as a query may be (4,096 bytes)
			{over, 0, nil},
			{overWide, 0, nil},
			{pathWord, 0, nil},
			{l.word + " " + over, 0, []int{1}}, // a page names any word of the query the index holds
		} {
			_, total, err := x.Text(site, tc.query, TextOptions{Size: 10, Language: l.lang})
			if err != nil {
				t.Fatalf("%.30q in site %q: %v", tc.query, site, err)
			}
			if total != tc.want {
				t.Errorf("%.30q in site %q: %d matches, want %d", tc.query, site, total, tc.want)
			}
			if got := x.MatchedPages(l.lang, docs[i].Content, tc.query); !slices.Equal(got, tc.pages) {
				t.Errorf("MatchedPages(%q, %.30q) = %v, want %v", l.lang, tc.query, got, tc.pages)
			}
		}
	}
}

// exactFields are the keyword fields of both mappings: each holds whole
// values as exact filters and the names index's ordered paging compare
// them, so no analyzer (and no token cap) touches them; what bounds their
// length is storage's validation (storage/limits.go), named here.
var exactFields = map[string]string{
	fSite:      "site id (MaxKeyBytes)",
	fSHA:       "content checksum (SHA-256, hex)",
	fType:      "content type (MaxContentTypeBytes)",
	fFolders:   "folders of the path (MaxPathBytes)",
	fTagKey:    "tag key (MaxKeyBytes)",
	fTagVal:    "tag key and value (MaxKeyBytes + MaxValueBytes)",
	fAttrKey:   "attribute key (MaxKeyBytes)",
	fAttrVal:   "attribute key and value (MaxKeyBytes + MaxValueBytes)",
	fNameKey:   "site, file name, path and id (MaxPathBytes twice)",
	fFolderKey: "site, folder, file name and id (MaxPathBytes twice)",
}

// mappedAnalyzers returns the analyzers im's text fields, document
// mappings and the index itself name, failing on a keyword field
// exactFields does not list and on a dynamic document mapping (it would
// index fields no one listed, with the default analyzer).
func mappedAnalyzers(t *testing.T, name string, im *mapping.IndexMappingImpl) map[string]bool {
	t.Helper()
	used := map[string]bool{}
	docs := map[string]*mapping.DocumentMapping{"default": im.DefaultMapping}
	maps.Copy(docs, im.TypeMapping)
	for typ, dm := range docs {
		if dm.Dynamic {
			t.Errorf("%s: document mapping %q is dynamic", name, typ)
		}
		if dm.DefaultAnalyzer != "" {
			used[dm.DefaultAnalyzer] = true
		}
		for prop, sub := range dm.Properties {
			if len(sub.Properties) != 0 {
				t.Errorf("%s: field %q of %q has sub-fields", name, prop, typ)
			}
			for _, f := range sub.Fields {
				switch {
				case f.Type != "text":
				case f.Analyzer == keyword.Name:
					if exactFields[prop] == "" {
						t.Errorf("%s: keyword field %q is not in exactFields", name, prop)
					}
				case f.Analyzer == "":
					t.Errorf("%s: text field %q names no analyzer", name, prop)
				default:
					used[f.Analyzer] = true
				}
			}
		}
	}
	return used
}

// TestAnalyzers_AllCapped: the analyzers index/analysis defines and the
// mappings agree. Every analyzer a text field (or a document mapping's or
// the text index's default) names is defined there and every one is used;
// every language analyzer is; each analyzer, as the mapping
// defines it and as an index reopened from disk reads it back, has the
// cap first and drops a word over it while keeping one at it; and the
// names index has keyword fields only.
func TestAnalyzers_AllCapped(t *testing.T) {
	tm := newTextMapping().(*mapping.IndexMappingImpl)
	used := mappedAnalyzers(t, "text", tm)
	used[tm.DefaultAnalyzer] = true
	for _, a := range analysis.Languages() {
		used[a] = true
	}
	if got, want := slices.Sorted(maps.Keys(used)), analysis.Names(); !slices.Equal(got, want) {
		t.Errorf("the text mapping uses the analyzers %v, index/analysis defines %v", got, want)
	}
	if used := mappedAnalyzers(t, "names", newNamesMapping().(*mapping.IndexMappingImpl)); len(used) != 0 {
		t.Errorf("the names mapping uses analyzers %v: only keyword fields are expected", slices.Sorted(maps.Keys(used)))
	}
	for _, name := range analysis.Names() {
		filters, _ := tm.CustomAnalysis.Analyzers[name]["token_filters"].([]any)
		if len(filters) == 0 || filters[0] != analysis.TokenCapFilter {
			t.Errorf("analyzer %s: token filters %v, want %s first", name, filters, analysis.TokenCapFilter)
		}
	}
	// As an index reads its mapping back from disk.
	dir := t.TempDir()
	x, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	x.Close()
	if x, err = Open(dir); err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	keep, drop := strings.Repeat("ab", analysis.MaxTokenRunes)[:analysis.MaxTokenRunes], strings.Repeat("ab", analysis.MaxTokenRunes)[:analysis.MaxTokenRunes+1]
	for _, m := range []mapping.IndexMapping{tm, x.text.Mapping()} {
		for _, name := range analysis.Names() {
			an := m.AnalyzerNamed(name)
			if an == nil {
				t.Errorf("analyzer %s is not defined", name)
				continue
			}
			if tks := an.Analyze([]byte(drop + " " + strings.Repeat("x", 64<<10))); len(tks) != 0 {
				t.Errorf("analyzer %s keeps a word over the cap: %d tokens", name, len(tks))
			}
			if tks := an.Analyze([]byte(keep)); len(tks) == 0 {
				t.Errorf("analyzer %s drops a word of %d letters", name, analysis.MaxTokenRunes)
			}
		}
	}
}
