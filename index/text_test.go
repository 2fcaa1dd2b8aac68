package index

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"

	"quire/index/segments"
	"quire/storage"
)

func openTest(t *testing.T) *Index {
	t.Helper()
	x, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

// allIDs pages through a text search, size at a time, returning the ids
// in order and the totals each page reported.
func allIDs(t *testing.T, x *Index, site, text string, o TextOptions, size int) ([]string, []uint64) {
	t.Helper()
	var ids []string
	var totals []uint64
	for from := 0; ; from += size {
		o.From, o.Size = from, size
		hits, total, err := x.Text(site, text, o)
		if err != nil {
			t.Fatal(err)
		}
		totals = append(totals, total)
		for _, h := range hits {
			ids = append(ids, h.ID)
		}
		if len(hits) < size {
			return ids, totals
		}
	}
}

// TestText_ExactTotalAndPages: the total of a word in 1,200 documents is
// exact (not a count of loaded hits), other sites' documents are neither
// counted nor listed, and the pages together hold every match once.
func TestText_ExactTotalAndPages(t *testing.T) {
	x := openTest(t)
	var docs []Doc
	for i := range 1200 {
		words := "common"
		if i%10 == 0 {
			words += " tenth"
		}
		docs = append(docs, Doc{Site: "default", ID: fmt.Sprintf("d%04d", i), Path: fmt.Sprintf("f/%d.txt", i), Content: words, Inserted: time.Now()})
	}
	for i := range 30 {
		docs = append(docs, Doc{Site: "other", ID: fmt.Sprintf("o%02d", i), Path: "x.txt", Content: "common", Inserted: time.Now()})
	}
	// In batches, the last documents first: the index's segments hold
	// them in another order than their ids.
	for end := len(docs); end > 0; end -= 100 {
		if err := x.Put(docs[max(end-100, 0):end], nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		site, text string
		size       int
		want       int
		sameScore  bool // every match has as many words
	}{
		{"default", "common", 100, 1200, false},
		{"default", "common", 33, 1200, false},
		{"default", "tenth", 25, 120, true},
		{"default", "common tenth", 7, 120, true},
		{"other", "common", 10, 30, true},
		{"default", "absent", 10, 0, true},
	} {
		t.Run(fmt.Sprintf("%s %q by %d", c.site, c.text, c.size), func(t *testing.T) {
			ids, totals := allIDs(t, x, c.site, c.text, TextOptions{}, c.size)
			for _, n := range totals {
				if n != uint64(c.want) {
					t.Fatalf("a page reported total %d, want %d", n, c.want)
				}
			}
			if len(ids) != c.want {
				t.Fatalf("pages held %d documents, want %d", len(ids), c.want)
			}
			// Equal scores are ordered by id, whatever the segments'
			// order.
			if c.sameScore && !slices.IsSorted(ids) {
				t.Fatalf("hits of equal score not in id order: %v", ids[:min(len(ids), 20)])
			}
			seen := map[string]bool{}
			for _, id := range ids {
				if seen[id] {
					t.Fatalf("%s on two pages", id)
				}
				seen[id] = true
				if (c.site == "other") != (id[0] == 'o') {
					t.Fatalf("%s found in site %s", id, c.site)
				}
			}
		})
	}
}

// TestText_Filters: tag and attribute filters match exact values, ids and
// exclusions restrict, and every filter's total counts what it lists.
func TestText_Filters(t *testing.T) {
	x := openTest(t)
	docs := []Doc{
		{ID: "a", TagValues: map[string][]string{"team": {"finance"}}, AttrValues: map[string][]string{"amount": {"12.5"}, "paid": {"true"}}},
		{ID: "b", TagValues: map[string][]string{"team": {"finance team"}, "flag": {""}}, AttrValues: map[string][]string{"amount": {"125"}}},
		{ID: "c", TagValues: map[string][]string{"owner": {"finance"}}, AttrValues: map[string][]string{"client": {"Globex", "Acme"}}},
		{ID: "d"},
	}
	for i := range docs {
		docs[i].Site, docs[i].Path, docs[i].Content, docs[i].Inserted = "default", "p/"+docs[i].ID+".txt", "word", time.Now()
	}
	if err := x.Put(docs, nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		o    TextOptions
		want []string
	}{
		{"no filter", TextOptions{}, []string{"a", "b", "c", "d"}},
		{"tag key", TextOptions{Filter: TagFilter("team", nil)}, []string{"a", "b"}},
		{"tag value exact", TextOptions{Filter: TagFilter("team", []string{"finance"})}, []string{"a"}},
		{"tag value of another key", TextOptions{Filter: TagFilter("owner", []string{"finance team"})}, nil},
		{"tag values, any of", TextOptions{Filter: TagFilter("team", []string{"finance", "finance team"})}, []string{"a", "b"}},
		{"tag without value", TextOptions{Filter: TagFilter("flag", []string{""})}, []string{"b"}},
		{"attribute number", TextOptions{Filter: AttrFilter("amount", []string{"12.5"})}, []string{"a"}},
		{"attribute boolean", TextOptions{Filter: AttrFilter("paid", []string{"true"})}, []string{"a"}},
		{"attribute second value", TextOptions{Filter: AttrFilter("client", []string{"Acme"})}, []string{"c"}},
		{"attribute value case", TextOptions{Filter: AttrFilter("client", []string{"acme"})}, nil},
		{"both", TextOptions{Filter: And(TagFilter("team", nil), AttrFilter("amount", []string{"125"}))}, []string{"b"}},
		{"ids", TextOptions{IDs: []string{"b", "d", "zz"}}, []string{"b", "d"}},
		{"no ids", TextOptions{IDs: []string{}}, nil},
		{"exclude", TextOptions{Exclude: []string{"a", "c"}}, []string{"b", "d"}},
		{"hide all", TextOptions{Hide: MatchAll()}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			// A word every document has, and every document ("*": the
			// filters alone, as /searchFulltext without text).
			for _, text := range []string{"word", "*"} {
				o := c.o
				o.Syntax = text == "*"
				ids, totals := allIDs(t, x, "default", text, o, 10)
				slices.Sort(ids)
				if !slices.Equal(ids, c.want) || totals[0] != uint64(len(c.want)) {
					t.Fatalf("%q: got %v (total %d), want %v", text, ids, totals[0], c.want)
				}
			}
		})
	}
	// A query whose words all vanish in analysis (a stop word) finds
	// nothing, filters or not: it must not turn into "everything not
	// hidden".
	for _, o := range []TextOptions{{}, {Hide: FolderHide(storage.FolderPermissionSet{"p": nil}, nil, storage.FolderRead)}, {Filter: TagFilter("team", nil)}} {
		if hits, total, err := x.Text("default", "the", o); err != nil || len(hits) != 0 || total != 0 {
			t.Fatalf("stop word: %d hits, total %d, err %v", len(hits), total, err)
		}
	}
}

// TestFolderHide_AsAllows: the index hides exactly the documents whose
// folder storage.FolderPermissionSet.Allows refuses, for nested folder
// permissions where the nearest folder with permissions decides.
func TestFolderHide_AsAllows(t *testing.T) {
	x := openTest(t)
	paths := []string{"top.txt", "hr/pay.txt", "hr/public/menu.txt", "hr/public/secret/plan.txt", "hr/public/secret/deep/x.txt",
		"hrx/not-hr.txt", "legal/a.txt", "legal/b/c.txt", "sales/q.txt"}
	var docs []Doc
	for i, p := range paths {
		docs = append(docs, Doc{Site: "default", ID: fmt.Sprintf("d%d", i), Path: p, Content: "word", Inserted: time.Now()})
	}
	if err := x.Put(docs, nil); err != nil {
		t.Fatal(err)
	}
	read := []string{storage.FolderRead}
	write := []string{storage.FolderWrite}
	sets := map[string]storage.FolderPermissionSet{
		"none": {},
		"nested": {
			"hr":               {{RoleName: "hr_team", Permissions: read}},
			"hr/public":        {{RoleName: "staff", Permissions: read}},
			"hr/public/secret": {{RoleName: "board", Permissions: read}},
			"legal":            {{RoleName: "staff", Permissions: write}},
			"legal/b":          {{RoleName: "staff", Permissions: read}},
		},
		"empty roles": {"sales": nil},
	}
	for name, set := range sets {
		for _, groups := range [][]string{nil, {"staff"}, {"hr_team"}, {"board", "staff"}} {
			t.Run(fmt.Sprintf("%s %v", name, groups), func(t *testing.T) {
				var want []string
				for _, d := range docs {
					if dir, _ := splitDocPath(d.Path); set.Allows(dir, groups, storage.FolderRead) {
						want = append(want, d.ID)
					}
				}
				got, totals := allIDs(t, x, "default", "word", TextOptions{Hide: FolderHide(set, groups, storage.FolderRead)}, 3)
				slices.Sort(got)
				if !slices.Equal(got, want) || totals[0] != uint64(len(want)) {
					t.Fatalf("visible %v (total %d), want %v", got, totals[0], want)
				}
			})
		}
	}
}

func TestFolderTerms(t *testing.T) {
	for p, want := range map[string][]string{
		"a.txt":       {"/"},
		"a/b.txt":     {"/", "/a"},
		"a/b/c/d.txt": {"/", "/a", "/a/b", "/a/b/c"},
	} {
		if got := folderTerms(p); !slices.Equal(got, want) {
			t.Errorf("folderTerms(%q) = %v, want %v", p, got, want)
		}
	}
}

// TestOpen_RebuildsOtherFormat: an index of an older format is removed at
// open and reported, so the indexer rebuilds it from storage; one of the
// current format is kept.
func TestOpen_RebuildsOtherFormat(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "marker")
	open := func() *Index {
		t.Helper()
		x, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		x.Close()
		return x
	}
	if x := open(); x.Rebuilt() != "" {
		t.Fatalf("a new index reports a rebuild from %q", x.Rebuilt())
	}
	if err := os.WriteFile(marker, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	if x := open(); x.Rebuilt() != "" {
		t.Fatalf("an index of the current format rebuilt from %q", x.Rebuilt())
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("an index of the current format was removed: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "FORMAT"), []byte("3\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if x := open(); x.Rebuilt() != "3" {
		t.Fatalf("an index of format 3 reports a rebuild from %q, want \"3\"", x.Rebuilt())
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("an index of format 3 was kept: %v", err)
	}
}

// TestText_RankAsBleve: the hits of a word alone (read from its postings)
// and of words with filters (through Bleve's searchers) come in Bleve's
// score order, equal scores by id, as Bleve sorting by -_score, _id would
// put them.
func TestText_RankAsBleve(t *testing.T) {
	x := openTest(t)
	docs := wordDocs(rand.New(rand.NewPCG(3, 4)), 300, 0)
	for end := len(docs); end > 0; end -= 50 {
		if err := x.Put(docs[max(end-50, 0):end], nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name  string
		text  string
		o     TextOptions
		bleve query.Query
	}{
		{"one word", "word", TextOptions{}, termQuery(fContent, "word")},
		{"two words", "word other", TextOptions{}, bleve.NewConjunctionQuery(termQuery(fContent, "word"), termQuery(fContent, "other"))},
		{"one word, filtered", "word", TextOptions{Hide: termQuery(fFolders, "/nowhere")}, termQuery(fContent, "word")},
	} {
		t.Run(c.name, func(t *testing.T) {
			want, total := bleveOrder(t, x, c.bleve)
			got, totals := allIDs(t, x, "default", c.text, c.o, 17)
			if !slices.Equal(got, want) || totals[0] != total {
				t.Fatalf("order (total %d) differs from Bleve's (total %d):\n got %v\nwant %v", totals[0], total, got, want)
			}
		})
	}
}

// TestText_TextHitsAboveFileNames: a document with a word in its text
// ranks above every document that has it only in its file name or folder,
// whichever way the query runs (a lone word from its postings, through
// Bleve's searchers with a filter, a query string, a fragment), on every
// page; the total counts a document with the word in both once, and a
// document replaced since (its old version deleted in an older segment)
// once.
func TestText_TextHitsAboveFileNames(t *testing.T) {
	x := openTest(t)
	long := strings.Repeat("lorem ipsum dolor sit amet ", 10_000) + "invoice"
	docs := []Doc{
		{ID: "text-short", Path: "misc/a.txt", Content: "the invoice from zebra"},
		{ID: "text-long", Path: "misc/b.txt", Content: long},
		{ID: "text-and-name", Path: "misc/invoice.txt", Content: "invoice"},
		{ID: "name-only", Path: "scans/invoice-2024.pdf", Content: "nothing to see"},
		{ID: "folder-only", Path: "invoice/letter.txt", Content: "other words"},
	}
	for i := range docs {
		docs[i].Site, docs[i].Inserted = "default", time.Now()
	}
	// One document per batch (one segment each), the name-only one put
	// twice: its first version is deleted in an older segment.
	for _, d := range append(docs, docs[3]) {
		if err := x.Put([]Doc{d}, nil); err != nil {
			t.Fatal(err)
		}
	}
	textHits := []string{"text-and-name", "text-long", "text-short"}
	nameHits := []string{"folder-only", "name-only"}
	for _, c := range []struct {
		name, text string
		o          TextOptions
	}{
		{"one word", "invoice", TextOptions{}},
		{"one word, filtered", "invoice", TextOptions{Hide: termQuery(fFolders, "/nowhere")}},
		{"query string", "invoice", TextOptions{Syntax: true}},
		{"query string, required", "+invoice", TextOptions{Syntax: true}},
		{"fragment", "invoi", TextOptions{}},
	} {
		for _, size := range []int{1, 2, 10} {
			t.Run(fmt.Sprintf("%s by %d", c.name, size), func(t *testing.T) {
				ids, totals := allIDs(t, x, "default", c.text, c.o, size)
				if len(ids) != 5 {
					t.Fatalf("found %v, want the 5 documents", ids)
				}
				for _, n := range totals {
					if n != 5 {
						t.Fatalf("a page reported total %d, want 5", n)
					}
				}
				first, rest := slices.Sorted(slices.Values(ids[:3])), slices.Sorted(slices.Values(ids[3:]))
				if !slices.Equal(first, textHits) || !slices.Equal(rest, nameHits) {
					t.Fatalf("order %v: want the text hits %v before the name hits %v", ids, textHits, nameHits)
				}
			})
		}
	}
	// A word of one document in a segment of several, in its text and its
	// name (a posting list of one match is kept without a bitmap).
	var batch []Doc
	for i := range 20 {
		batch = append(batch, Doc{Site: "default", ID: fmt.Sprintf("batch%02d", i), Path: fmt.Sprintf("batch/n%d.txt", i), Content: fmt.Sprintf("filler%d", i), Inserted: time.Now()})
	}
	batch[7].Path, batch[7].Content = "batch/solitary.txt", "solitary"
	batch[9].Path = "batch/lonely.txt"
	if err := x.Put(batch, nil); err != nil {
		t.Fatal(err)
	}
	// Written to disk, where such a list is kept without a bitmap.
	segments.WaitPersisted(x.text, 10*time.Second)
	// A word only in names is found through them, in the tiers' order.
	for _, c := range []struct {
		text string
		want []string
	}{
		{"scans", []string{"name-only"}},
		{"invoice letter", []string{"folder-only"}},
		{"zebra invoice", []string{"text-short"}},
		{"solitary", []string{"batch07"}},
		{"lonely", []string{"batch09"}},
	} {
		t.Run(c.text, func(t *testing.T) {
			ids, totals := allIDs(t, x, "default", c.text, TextOptions{}, 10)
			if !slices.Equal(ids, c.want) || totals[0] != uint64(len(c.want)) {
				t.Fatalf("found %v (total %d), want %v", ids, totals[0], c.want)
			}
		})
	}
}
