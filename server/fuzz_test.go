package server

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"

	"quire/index"
	"quire/server/documents"
	"quire/server/internal/api"
	"quire/server/search"
)

// The fuzz targets of package server. `make fuzz` runs each for a while
// (its list is checked against these functions); their seeds run in every
// `go test`.

// FuzzPagingNumbers: whatever the client sends, the offsets and windows
// the paging functions hand on stay within the result window, and an
// offset token parses back to the offset it was made from.
func FuzzPagingNumbers(f *testing.F) {
	f.Add(10, 1, 0, 10, "")
	f.Add(9223372036854775807, 922337203685477582, -1, 9223372036854775807, "9223372036854775807")
	f.Add(-5, -5, 9991, 10, "-1")
	f.Add(1, 10001, 9990, 10, "10000")
	f.Add(1000, 10, 10000, 0, "0010")
	f.Fuzz(func(t *testing.T, limit, page, from, size int, tok string) {
		l := api.ClampLimit(limit, api.DefaultPageLimit)
		if l < 1 || l > api.MaxPageLimit {
			t.Fatalf("clampLimit(%d) = %d", limit, l)
		}
		if off, err := api.PageOffset(page, l); err == nil && (off < 0 || off > index.MaxResultWindow-l) {
			t.Fatalf("pageOffset(%d, %d) = %d outside the window", page, l, off)
		}
		if fr, sz, err := api.ResultWindow(from, size); err == nil && (fr < 0 || sz < 1 || sz > api.MaxPageLimit || fr > index.MaxResultWindow-sz) {
			t.Fatalf("resultWindow(%d, %d) = %d, %d", from, size, fr, sz)
		}
		n, err := api.ParseOffsetToken(tok)
		if err != nil {
			return
		}
		if n < 0 || n > index.MaxResultWindow {
			t.Fatalf("parseOffsetToken(%q) = %d", tok, n)
		}
		if back, err := api.ParseOffsetToken(api.OffsetToken(n)); err != nil || back != n {
			t.Fatalf("offset %d round trips to %d, %v", n, back, err)
		}
	})
}

// FuzzPagingTokens: the key tokens of tag and folder listings give back
// the key they were made from, and a token from a client that decodes
// gives a key that round trips.
func FuzzPagingTokens(f *testing.F) {
	f.Add("a", "dA")
	f.Add("", "zzz")
	f.Add("dir/sub", "dDpr")
	f.Add("\x00", "%%")
	f.Fuzz(func(t *testing.T, key, tok string) {
		if got, err := documents.DecodeTagToken(documents.EncodeTagToken(key)); err != nil || got != key {
			t.Fatalf("tag token of %q gives %q, %v", key, got, err)
		}
		if k, err := documents.DecodeTagToken(tok); err == nil {
			if back, err := documents.DecodeTagToken(documents.EncodeTagToken(k)); err != nil || back != k {
				t.Fatalf("tag key %q from %q does not round trip", k, tok)
			}
		}
		if got, err := search.ParseFolderIndexKey(search.FolderIndexKey(key)); (err == nil) != (key != "" && !strings.ContainsRune(key, 0)) || err == nil && got != key {
			t.Fatalf("folder key %q gives %q, %v", key, got, err)
		}
		if k, err := search.ParseFolderIndexKey(tok); err == nil && (k == "" || strings.ContainsRune(k, 0)) {
			t.Fatalf("folder key %q accepted from %q", k, tok)
		}
	})
}

// FuzzNormalizePath: a normalized document path has no empty segment,
// keeps every non-empty segment in order and does not change again; a
// folder path CheckFolderPath accepts has no empty, "." or ".." segment.
func FuzzNormalizePath(f *testing.F) {
	for _, p := range []string{"/a//b.txt", "", "/", "a/./../b", "dir/", "x\x00y", "//", "a/b/c.pdf"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		n := documents.NormalizePath(p)
		if documents.NormalizePath(n) != n || strings.HasPrefix(n, "/") || strings.HasSuffix(n, "/") || strings.Contains(n, "//") {
			t.Fatalf("normalizePath(%q) = %q", p, n)
		}
		var segs []string
		for _, s := range strings.Split(p, "/") {
			if s != "" {
				segs = append(segs, s)
			}
		}
		if strings.Join(segs, "/") != n {
			t.Fatalf("normalizePath(%q) = %q lost or changed a segment", p, n)
		}
		fp, err := search.CheckFolderPath(p)
		if err != nil {
			return
		}
		if again, err := search.CheckFolderPath(fp); err != nil || again != fp {
			t.Fatalf("checkFolderPath(%q) = %q, which checks to %q, %v", p, fp, again, err)
		}
		for _, s := range strings.Split(fp, "/") {
			if s == "" || s == "." || s == ".." {
				t.Fatalf("checkFolderPath(%q) = %q has segment %q", p, fp, s)
			}
		}
	})
}

// FuzzQueryTranslate: any /queryFulltext query object translates or is
// refused without a panic, and what it translates to is parsed by Bleve
// without a panic.
func FuzzQueryTranslate(f *testing.F) {
	for _, q := range []string{
		`{"query_string":{"query":"+thursday -picnic"}}`, `{"match":{"content":"budget review"}}`,
		`{"match_phrase":{"content":"budget \"review\\"}}`, `{"prefix":{"path":{"value":"Inv"}}}`,
		`{"fuzzy":{"_all":"pikcnic"}}`, `{"match":{"a b":"x:y"}}`, `{}`, `{"match":{}}`, `{"terms":[]}`,
	} {
		f.Add([]byte(q))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var q map[string]json.RawMessage
		if json.Unmarshal(body, &q) != nil {
			return
		}
		qs, err := search.OpenSearchQueryString(q)
		if err != nil {
			return
		}
		_, _ = bleve.NewQueryStringQuery(qs).Parse()
	})
}

// FuzzMatchPhrase: a match_phrase value reaches Bleve as one phrase with
// exactly that text, whatever quotes or backslashes it holds.
func FuzzMatchPhrase(f *testing.F) {
	for _, s := range []string{"budget review", `say "hi"`, `ends in \`, `\"`, `a\\b`, "tab\there", "+path:x -y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if strings.TrimSpace(text) == "" || !utf8.ValidString(text) {
			return
		}
		v, _ := json.Marshal(map[string]string{"content": text})
		qs, err := search.OpenSearchQueryString(map[string]json.RawMessage{"match_phrase": v})
		if err != nil {
			t.Fatalf("match_phrase %q refused: %v", text, err)
		}
		parsed, err := bleve.NewQueryStringQuery(qs).Parse()
		if err != nil {
			t.Fatalf("match_phrase %q gives %q, which Bleve refuses: %v", text, qs, err)
		}
		bq, ok := parsed.(*query.BooleanQuery)
		if !ok || bq.Should == nil {
			t.Fatalf("match_phrase %q parsed to %T", text, parsed)
		}
		should := bq.Should.(*query.DisjunctionQuery).Disjuncts
		if len(should) != 1 || bq.Must != nil || bq.MustNot != nil {
			t.Fatalf("match_phrase %q gives %q: %d clauses", text, qs, len(should))
		}
		if mp, ok := should[0].(*query.MatchPhraseQuery); !ok || mp.MatchPhrase != text || mp.FieldVal != "content" {
			t.Fatalf("match_phrase %q gives %q, parsed to %#v", text, qs, should[0])
		}
	})
}
