package analysis

import (
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/lang/de"
	"github.com/blevesearch/bleve/v2/analysis/lang/es"
	"github.com/blevesearch/bleve/v2/analysis/lang/fr"
	"github.com/blevesearch/bleve/v2/analysis/lang/it"
	"github.com/blevesearch/bleve/v2/analysis/lang/nl"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
)

// bleveAnalyzers are Bleve's analyzers whose chains the language
// analyzers copy.
var bleveAnalyzers = map[string]string{
	De: de.AnalyzerName,
	Fr: fr.AnalyzerName,
	It: it.AnalyzerName,
	Es: es.AnalyzerName,
	Nl: nl.AnalyzerName,
}

// TestAnalyzers_SameTokensBelowCap: below the cap every analyzer makes
// exactly the tokens (term, position, offsets, type) it made before the
// cap: the same chain without it, and for the language analyzers Bleve's
// analyzer of the language. So documents and queries of ordinary words
// are analysed as before the cap.
func TestAnalyzers_SameTokensBelowCap(t *testing.T) {
	text := "The zebracorns' Invoices: l'avion d'été, dell'aereo; Straße, Müller & Mueller, Rechnungsnummern " +
		"Krankenversicherungsnummer; camión, niños, ¿Dónde? vliegtuigen, fietsen 4711 2026-12-02 x@y.z " +
		"ВЕЛИКИЙ ж 東京都 " + strings.Repeat("ab", MaxTokenRunes)[:MaxTokenRunes]
	tm := bleve.NewIndexMapping()
	AddTo(tm)
	bare := bleve.NewIndexMapping()
	for name, chain := range chains {
		filters := make([]any, len(chain))
		for i, f := range chain {
			filters[i] = f
		}
		if err := bare.AddCustomAnalyzer(name, map[string]any{"type": custom.Name, "tokenizer": unicode.Name, "token_filters": filters}); err != nil {
			t.Fatal(err)
		}
	}
	for name := range chains {
		got := tm.AnalyzerNamed(name).Analyze([]byte(text))
		if len(got) < 5 { // de_parts keeps the long words only
			t.Fatalf("analyzer %s: %d tokens", name, len(got))
		}
		wants := map[string]analysis.TokenStream{"without the cap": bare.AnalyzerNamed(name).Analyze([]byte(text))}
		if b, ok := bleveAnalyzers[name]; ok {
			wants["Bleve's "+b] = bare.AnalyzerNamed(b).Analyze([]byte(text))
		}
		for what, want := range wants {
			if len(got) != len(want) {
				t.Errorf("analyzer %s: %d tokens, %d %s", name, len(got), len(want), what)
				continue
			}
			for i := range got {
				if g, w := got[i], want[i]; string(g.Term) != string(w.Term) || g.Position != w.Position ||
					g.Start != w.Start || g.End != w.End || g.Type != w.Type || g.KeyWord != w.KeyWord {
					t.Errorf("analyzer %s, token %d: %+v, %s %+v", name, i, *g, what, *w)
				}
			}
		}
	}
}
