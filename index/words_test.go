package index

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"quire/index/analysis"
	"quire/storage"
)

// TestText_Forgiving: office users type stems, fragments, German words
// without their umlauts or ß; each query finds the document that has the
// word as written, in a site without a language (the default analyzer)
// and in a German one (deu: the de analyzer), and no other document.
func TestText_Forgiving(t *testing.T) {
	x := openTest(t)
	docs := []Doc{
		{ID: "zebra", Path: "a.txt", Content: "The zebracorn grazes"},
		{ID: "street", Path: "b.txt", Content: "Lieferung an die Straße 12"},
		{ID: "mueller", Path: "c.txt", Content: "Sehr geehrter Herr Müller"},
		{ID: "compound", Path: "d.txt", Content: "Rechnungsnummer 4711"},
		{ID: "plain", Path: "e.txt", Content: "nothing of interest here"},
	}
	var all []Doc
	for _, site := range []struct{ site, lang string }{{"default", ""}, {"de", "deu"}} {
		for _, d := range docs {
			d.Site, d.Language = site.site, site.lang
			all = append(all, d)
		}
	}
	if err := x.Put(all, nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		query string
		want  string
		sites []string
	}{
		{"zebracorn", "zebra", []string{"default", "de"}},
		{"Zebracorns", "zebra", []string{"default"}}, // an English plural: the default analyzer's stemmer
		{"zebracor", "zebra", []string{"default", "de"}},
		{"ZEBRAC", "zebra", []string{"default", "de"}},
		{"strasse", "street", []string{"default", "de"}},
		{"Straße", "street", []string{"default", "de"}},
		{"STRASSE", "street", []string{"default", "de"}},
		{"mueller", "mueller", []string{"default", "de"}},
		{"Müller", "mueller", []string{"default", "de"}},
		{"muller", "mueller", []string{"default", "de"}},
		{"Rechnung", "compound", []string{"default", "de"}}, // the first part of a compound
		{"Rechnungsnummer", "compound", []string{"default", "de"}},
		{"Herr Mueller", "mueller", []string{"default", "de"}},
	} {
		for _, site := range tc.sites {
			lang := map[string]string{"default": "", "de": "deu"}[site]
			hits, total, err := x.Text(site, tc.query, TextOptions{Size: 10, Language: lang})
			if err != nil {
				t.Fatalf("%s in %s: %v", tc.query, site, err)
			}
			var ids []string
			for _, h := range hits {
				ids = append(ids, h.ID)
			}
			if total != 1 || !slices.Equal(ids, []string{tc.want}) {
				t.Errorf("%q in site %s: %v (total %d), want [%s]", tc.query, site, ids, total, tc.want)
			}
		}
	}
	// The German site's analyzer stems German plurals (Rechnungen →
	// rechnung, then the compound's fragment); the default one does not.
	for site, want := range map[string]uint64{"de": 1, "default": 0} {
		lang := map[string]string{"default": "", "de": "deu"}[site]
		if _, total, err := x.Text(site, "Rechnungen", TextOptions{Size: 10, Language: lang}); err != nil || total != want {
			t.Errorf("Rechnungen in %s: %d matches (%v), want %d", site, total, err, want)
		}
	}
	// A word the index has is searched as itself, not as a prefix: the
	// one-word fast path stays.
	if _, exact := x.expand(fContent, "zebracorn"); !exact {
		t.Error("zebracorn is a term, expand reports it is not")
	}
	if terms, exact := x.expand(fContent, "zebrac"); exact || !slices.Equal(terms, []string{"zebracorn"}) {
		t.Errorf("expand(zebrac) = %v, %v", terms, exact)
	}
}

// TestMatchedPages: the pages of a text (form feeds between them) a plain
// query's words occur on, as the site's analyzer and fragments match them.
func TestMatchedPages(t *testing.T) {
	x := openTest(t)
	text := "Cover letter\fInvoice for the zebracorns\f\fStraße und Müller\fappendix"
	for _, tc := range []struct {
		lang, q string
		want    []int
	}{
		{"", "zebracorn", []int{2}},
		{"", "zebracor", []int{2}},
		{"", "strasse", []int{4}},
		{"deu", "mueller", []int{4}},
		{"", "letter appendix", []int{1, 5}},
		{"", "absent", nil},
	} {
		if got := x.MatchedPages(tc.lang, text, tc.q); !slices.Equal(got, tc.want) {
			t.Errorf("MatchedPages(%q, %q) = %v, want %v", tc.lang, tc.q, got, tc.want)
		}
	}
}

// TestOpen_RebuildsFormat5: an index of the format before analyzers (5) is
// removed at open and reported, so the indexer rebuilds it with them.
func TestOpen_RebuildsFormat5(t *testing.T) {
	dir := t.TempDir()
	x, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	x.Close()
	if err := os.WriteFile(filepath.Join(dir, "FORMAT"), []byte("5\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	x, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if x.Rebuilt() != "5" {
		t.Fatalf("Rebuilt() = %q, want 5", x.Rebuilt())
	}
	b, _ := os.ReadFile(filepath.Join(dir, "FORMAT"))
	if strings.TrimSpace(string(b)) != formatVersion {
		t.Fatalf("FORMAT %q", b)
	}
}

// TestRebuild_RecordsSiteAnalyzers: a new index (a first start, a format
// change) is built with each site's analyzer of now and records it, so
// the site's next configuration change reindexes its documents only when
// it changes the language. Before, the first change of a German site's
// configuration after a rebuild indexed the whole site a second time.
func TestRebuild_RecordsSiteAnalyzers(t *testing.T) {
	db := diskStore(t, t.TempDir())
	setLangs := func(langs ...string) {
		t.Helper()
		MustApply(t, db, storage.OpSetSiteConfig, storage.SiteConfig{Processing: &storage.ProcessingConfig{Languages: langs}})
	}
	setLangs("deu", "eng")
	addDoc(t, db, "11111111-1111-4111-8111-111111111111", "Straßenbau.txt")
	x, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	var log syncBuffer
	ix := NewIndexer(db, x, slog.New(slog.NewTextHandler(&log, nil)))
	if err := ix.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if got, want := x.internalString(langKey("default")), analysis.For("deu"); got != want {
		t.Fatalf("after the build the site's recorded analyzer is %q, want %q", got, want)
	}
	for _, tc := range []struct {
		name    string
		langs   []string
		reindex bool
	}{
		{"language kept", []string{"deu"}, false},
		{"language changed", []string{"fra"}, true},
		{"changed back", []string{"deu", "fra"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := strings.Count(log.String(), "reindexing its documents")
			// What a configuration commit runs in the background, run here
			// to its end.
			setLangs(tc.langs...)
			if err := ix.checkSiteAnalyzer(context.Background(), "default"); err != nil {
				t.Fatal(err)
			}
			if got := strings.Count(log.String(), "reindexing its documents") > before; got != tc.reindex {
				t.Errorf("reindexed %v, want %v; log:\n%s", got, tc.reindex, log.String())
			}
			if got, want := x.internalString(langKey("default")), analysis.For(tc.langs[0]); got != want {
				t.Errorf("recorded analyzer %q, want %q", got, want)
			}
		})
	}
}

// syncBuffer is a log sink the indexer's goroutines may write to while
// the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
