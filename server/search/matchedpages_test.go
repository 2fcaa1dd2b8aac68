package search_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// TestSearch_MatchedPages: a hit inside a document whose text is in pages
// (a scan's recognized text, pages separated by form feeds) names the
// pages a word of the query is on, in /search, /searchFulltext and
// /queryFulltext (Quire's matchedPages, API.md); a plain text document and a hit on the file
// name alone have none. Both sites.
func TestSearch_MatchedPages(t *testing.T) {
	s := servertest.PipelineServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			// A two-page scan whose recognized text is set by hand (PUT
			// /ocr) and indexed by FULLTEXT, as an OCR action's would be.
			png := quiretest.PNG(quiretest.TextImage("x"))
			scan := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "post/okapi-letter.png", "contentType": "image/png", "isBase64": true,
				"content": servertest.B64(png), "actions": []any{}})
			servertest.MustStatus(t, s.Do(http.MethodPut, "/documents/"+scan+"/ocr"+site.Query,
				map[string]any{"content": "Dear customer, thank you\fYour zebracorn invoice\nZebracorns ship on Monday\f\fTerms: the zebracorn stays ours", "contentType": "text/plain"}, tok), http.StatusOK)
			servertest.MustStatus(t, s.Do(http.MethodPost, "/documents/"+scan+"/actions"+site.Query, map[string]any{"actions": []any{map[string]any{"type": "FULLTEXT"}}}, tok), http.StatusOK)
			if st := servertest.WaitActions(t, s, tok, site.Query, scan); !servertest.EqualStrings(st, []string{"COMPLETE"}) {
				t.Fatalf("FULLTEXT: %v", st)
			}
			plain := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "notes/plain.txt", "contentType": "text/plain", "content": "zebracorn and okapi notes", "actions": []any{}})
			servertest.WaitIndexed(t, s)

			for _, tt := range []struct {
				name, text string
				want       map[string][]int // document -> matchedPages (nil: none)
				// textOnly: not through /queryFulltext's match, whose
				// quoted words neither expand a fragment nor search
				// file names.
				textOnly bool
			}{
				{"word on two pages", "zebracorn", map[string][]int{scan: {2, 4}, plain: nil}, false},
				{"fragment", "zebracor", map[string][]int{scan: {2, 4}, plain: nil}, true},
				{"word on the first page", "customer", map[string][]int{scan: {1}}, false},
				{"words on different pages", "thank terms", map[string][]int{scan: {1, 4}}, false},
				{"file name only", "okapi", map[string][]int{scan: nil, plain: nil}, true},
			} {
				for _, route := range servertest.TextRoutes {
					if tt.textOnly && route == "/queryFulltext" {
						continue
					}
					t.Run(tt.name+" "+route, func(t *testing.T) {
						// /queryFulltext (the console's search) has it on
						// each OpenSearch hit, the others on each document.
						hits, ids, body := servertest.TextHits(t, s, tok, route, site.Query, tt.text)
						got := map[string][]int{}
						for i, m := range hits {
							id := ids[i]
							got[id] = nil
							if v, ok := m["matchedPages"]; ok {
								for _, p := range quiretest.List(t, m, "matchedPages") {
									n, ok := p.(float64)
									if !ok {
										t.Fatalf("%s: a matched page is not a number: %v", id, v)
									}
									got[id] = append(got[id], int(n))
								}
								if len(got[id]) == 0 {
									t.Errorf("%s: matchedPages present but empty: %v", id, v)
								}
							}
						}
						for id, want := range tt.want {
							pages, found := got[id]
							if !found {
								t.Errorf("%q does not find %s: %s", tt.text, id, body)
								continue
							}
							if !slices.Equal(pages, want) {
								t.Errorf("%q: matchedPages of %s = %v, want %v", tt.text, id, pages, want)
							}
						}
						if len(got) != len(tt.want) {
							t.Errorf("%q found %d documents, want %d: %s", tt.text, len(got), len(tt.want), fmt.Sprint(got))
						}
					})
				}
			}
		})
	}
}
