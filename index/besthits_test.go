package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
)

// wordDocs returns n documents holding "word" one to four times among
// filler, so that many share a score, with ids in no order.
func wordDocs(r *rand.Rand, n int, seq int) []Doc {
	var docs []Doc
	for i := range n {
		var words []string
		for range 1 + r.IntN(4) {
			words = append(words, "word")
		}
		for range r.IntN(6) {
			words = append(words, "other", "filler")
		}
		r.Shuffle(len(words), func(a, b int) { words[a], words[b] = words[b], words[a] })
		docs = append(docs, Doc{Site: "default", ID: fmt.Sprintf("d%06d", (r.IntN(1000)*1000+i)*10+seq), Path: "p.txt", Content: strings.Join(words, " "), Inserted: time.Now()})
	}
	return docs
}

// bleveOrder is what Bleve itself answers for q sorted by score, then
// id: the order every page of Text must follow.
func bleveOrder(t *testing.T, x *Index, q query.Query) ([]string, uint64) {
	t.Helper()
	req := bleve.NewSearchRequestOptions(q, 10000, 0, false)
	req.SortBy([]string{"-_score", "_id"})
	res, err := x.text.Search(req)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, h := range res.Hits {
		_, id := SplitID(h.ID)
		want = append(want, id)
	}
	return want, res.Total
}

// TestText_BestHitsRankAsBleve: with the segments' best hits cached, a
// one-word query pages in Bleve's order with Bleve's total, as documents
// are deleted, replaced and added between the queries (the cached hits of
// a segment then lose its deleted documents, or are built again).
func TestText_BestHitsRankAsBleve(t *testing.T) {
	x := openTest(t)
	x.best.MinPostings = 8
	r := rand.New(rand.NewPCG(5, 6))
	docs := wordDocs(r, 600, 0)
	for end := len(docs); end > 0; end -= 100 {
		if err := x.Put(docs[end-100:end], nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, step := range []struct {
		name   string
		change func(t *testing.T)
	}{
		{"as written", func(t *testing.T) {}},
		{"after deletions", func(t *testing.T) {
			var del []string
			for i := 0; i < len(docs); i += 4 {
				del = append(del, docID(docs[i].Site, docs[i].ID))
			}
			if err := x.Put(nil, del); err != nil {
				t.Fatal(err)
			}
		}},
		{"after replacements", func(t *testing.T) {
			var again []Doc
			for i := 1; i < len(docs); i += 5 {
				d := docs[i]
				d.Content = strings.Repeat("word ", 1+i%3) + "changed"
				again = append(again, d)
			}
			if err := x.Put(again, nil); err != nil {
				t.Fatal(err)
			}
		}},
		{"after additions", func(t *testing.T) {
			if err := x.Put(wordDocs(r, 150, 1), nil); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(step.name, func(t *testing.T) {
			step.change(t)
			want, total := bleveOrder(t, x, termQuery(fContent, "word"))
			for _, size := range []int{10, 7, 33} {
				used := x.best.Used.Load()
				got, totals := allIDs(t, x, "default", "word", TextOptions{}, size)
				if !slices.Equal(got, want) || totals[0] != total {
					t.Fatalf("pages of %d (total %d) differ from Bleve's order (total %d):\n got %v\nwant %v", size, totals[0], total, got, want)
				}
				if x.best.Used.Load() == used {
					t.Fatalf("pages of %d used no cached best hits (%d built)", size, x.best.Built.Load())
				}
			}
		})
	}
}

// TestText_BestHitsOlderSnapshot: a query on a snapshot older than the
// one a segment's best hits were built on (it still holds documents
// deleted since) answers as without the cache.
func TestText_BestHitsOlderSnapshot(t *testing.T) {
	x := openTest(t)
	docs := wordDocs(rand.New(rand.NewPCG(7, 8)), 400, 0)
	if err := x.Put(docs, nil); err != nil {
		t.Fatal(err)
	}
	old, err := x.textReader()
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	ctx := context.Background()
	x.best.MinPostings = 1 << 62
	want, wantTotal, err := x.collectTermIn(ctx, old, fContent, "word", 0, 50)
	if err != nil {
		t.Fatal(err)
	}
	var del []string
	for _, h := range want[:20] {
		del = append(del, docID(h.Site, h.ID))
	}
	if err := x.Put(nil, del); err != nil {
		t.Fatal(err)
	}
	x.best.MinPostings = 8
	if _, _, err := x.Text("default", "word", TextOptions{Size: 50}); err != nil {
		t.Fatal(err)
	}
	if x.best.Built.Load() == 0 {
		t.Fatal("the query on the new snapshot built no best hits")
	}
	got, total, err := x.collectTermIn(ctx, old, fContent, "word", 0, 50)
	if err != nil {
		t.Fatal(err)
	}
	same := func(a, b Hit) bool { return a.ID == b.ID && a.Score == b.Score }
	if !slices.EqualFunc(got, want, same) || total != wantTotal {
		t.Fatalf("the old snapshot answers %d hits (total %d), without the cache %d (total %d):\n got %v\nwant %v", len(got), total, len(want), wantTotal, got, want)
	}
}
