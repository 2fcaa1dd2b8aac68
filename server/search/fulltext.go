package search

import (
	"encoding/json"
	"fmt"
	"html"
	"strconv"
	"strings"

	"quire/index"
	"quire/server/internal/api"
	"quire/storage"
)

type fulltextAttrEq struct {
	StringValue  *string  `json:"stringValue"`
	NumberValue  *float64 `json:"numberValue"`
	BooleanValue *bool    `json:"booleanValue"`
}

func (e *fulltextAttrEq) text() string {
	switch {
	case e.StringValue != nil:
		return *e.StringValue
	case e.NumberValue != nil:
		return storage.FormatNumber(*e.NumberValue)
	case e.BooleanValue != nil:
		return strconv.FormatBool(*e.BooleanValue)
	}
	return ""
}

type fulltextRequest struct {
	Query *struct {
		Page int    `json:"page"`
		Text string `json:"text"`
		Tags []struct {
			Key  string   `json:"key"`
			Eq   *string  `json:"eq"`
			EqOr []string `json:"eqOr"`
		} `json:"tags"`
		Attributes []struct {
			Key  string           `json:"key"`
			Eq   *fulltextAttrEq  `json:"eq"`
			EqOr []fulltextAttrEq `json:"eqOr"`
		} `json:"attributes"`
	} `json:"query"`
	ResponseFields *responseFields `json:"responseFields"`
}

// HandleSearchFulltext serves POST /searchFulltext (FormKiQ's enhanced
// search, here on Bleve): text over content, path, tags and attribute
// values, narrowed by exact tags and attributes.
func (s *Handlers) HandleSearchFulltext(r *api.Request) error {
	var in fulltextRequest
	if err := r.ReadBody(&in, storage.MaxSearchBytes); err != nil {
		return err
	}
	if in.Query == nil {
		return api.Invalid("query", "'query' is required")
	}
	q := in.Query
	if strings.TrimSpace(q.Text) == "" && len(q.Tags) == 0 && len(q.Attributes) == 0 {
		return api.Invalid("text", "'text' is required")
	}
	limit, err := api.ListLimit(r)
	if err != nil {
		return err
	}
	offset, err := api.PageOffset(q.Page, limit)
	if err != nil {
		return err
	}
	// Tags and attributes filter in the index on exact values (the
	// index's filter fields); storage re-checks only documents changed
	// since their indexing (the overlay).
	var filters []queryFilter
	var bq []index.Query
	for _, t := range q.Tags {
		if t.Key == "" {
			return api.Invalid("tags", "tag 'key' is required")
		}
		vals := append([]string(nil), t.EqOr...)
		if t.Eq != nil {
			vals = append(vals, *t.Eq)
		}
		filters = append(filters, queryFilter{attr: false, key: t.Key, values: vals})
		bq = append(bq, index.TagFilter(t.Key, vals))
	}
	for _, a := range q.Attributes {
		if a.Key == "" {
			return api.Invalid("attributes", "attribute 'key' is required")
		}
		var vals []string
		if a.Eq != nil {
			vals = append(vals, a.Eq.text())
		}
		for i := range a.EqOr {
			vals = append(vals, a.EqOr[i].text())
		}
		filters = append(filters, queryFilter{attr: true, key: a.Key, values: vals})
		bq = append(bq, index.AttrFilter(a.Key, vals))
	}
	opts := index.TextOptions{From: offset, Size: limit, Hide: s.textHide(r)}
	if len(bq) > 0 {
		opts.Filter = index.And(bq...)
	}
	text := q.Text
	if strings.TrimSpace(text) == "" {
		text = "*"
		opts.Syntax = true
	}
	// The index filters, counts and pages: only the page's documents are
	// read from storage.
	hits, total, err := s.Deps.Indexer.SearchText(r.Site, text, opts, func(id string) (bool, error) {
		if ok, err := s.textVisible(r, id); !ok || err != nil {
			return false, err
		}
		return s.matchFilters(r.Site, id, filters)
	})
	if err != nil {
		return err
	}
	res := s.newResults(r)
	for _, h := range hits {
		d, err := s.DB.GetDocument(r.Site, h.ID)
		if api.IsNotFound(err) {
			continue // deleted since the search
		}
		if err != nil {
			return err
		}
		m := s.WithThumbnail(r, api.DocumentJSON(d), d)
		m["createdBy"] = d.UserID
		m["metadata"] = api.MetadataMap(d.Metadata)
		if !opts.Syntax {
			s.addMatchedPages(r, m, d, text)
		}
		res.add(m, d.DocumentID)
	}
	if in.ResponseFields != nil {
		if err := s.addResponseFields(r, res, in.ResponseFields); err != nil {
			return err
		}
	}
	return r.JSON(map[string]any{"documents": api.NonNil(res.docs), "totalCount": total})
}

// addMatchedPages sets a text hit's matchedPages (Quire; API.md "Pages
// a search hit matched"): the pages of its text (1 on) a word of the
// query is on, when its text is in pages (a scan's, a PDF's).
func (s *Handlers) addMatchedPages(r *api.Request, m map[string]any, d *storage.Document, text string) {
	if p := s.Deps.Indexer.HitPages(r.Site, d.DocumentID, d.ContentType, text); len(p) > 0 {
		m["matchedPages"] = p
	}
}

// textHide is the index query for the documents the caller's folder
// permissions do not let them read (nil: none), so that fulltext searches
// leave them out of their pages and totals.
func (s *Handlers) textHide(r *api.Request) index.Query {
	if api.FolderExempt(r) {
		return nil
	}
	set, err := s.FolderSet(r)
	if err != nil {
		return index.MatchAll() // fail closed
	}
	return index.FolderHide(set, r.Principal.Groups, storage.FolderRead)
}

// textVisible reports whether a document the index found still exists,
// is not in the trash, and lies in a folder the caller may read: the
// check of a document changed since its indexing (SearchText's keep).
func (s *Handlers) textVisible(r *api.Request, id string) (bool, error) {
	d, err := s.DB.GetDocument(r.Site, id)
	if api.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return s.DocAllows(r, d.Path, storage.FolderRead), nil
}

type queryFilter struct {
	attr   bool
	key    string
	values []string // any of; empty: the key exists
}

func (s *Handlers) matchFilters(site, id string, fs []queryFilter) (bool, error) {
	for _, f := range fs {
		var have []string
		if f.attr {
			a, err := s.DB.DocAttribute(site, id, f.key)
			if api.IsNotFound(err) {
				return false, nil
			}
			if err != nil {
				return false, err
			}
			have = attrDisplayValues(a)
		} else {
			t, err := s.DB.GetTag(site, id, f.key)
			if api.IsNotFound(err) {
				return false, nil
			}
			if err != nil {
				return false, err
			}
			have = t.AllValues()
		}
		if len(f.values) == 0 {
			continue
		}
		found := false
		for _, v := range f.values {
			for _, h := range have {
				if v == h {
					found = true
				}
			}
		}
		if !found {
			return false, nil
		}
	}
	return true, nil
}

func attrDisplayValues(a *storage.DocAttribute) []string {
	out := append([]string(nil), a.Strings...)
	for _, n := range a.Numbers {
		out = append(out, storage.FormatNumber(n))
	}
	if a.Boolean != nil {
		out = append(out, strconv.FormatBool(*a.Boolean))
	}
	return out
}

// HandleQueryFulltext serves POST /queryFulltext: a subset of the
// OpenSearch search API (query_string, match, match_phrase, prefix, fuzzy,
// from, size, highlight) answered by Bleve in OpenSearch's result shape.
func (s *Handlers) HandleQueryFulltext(r *api.Request) error {
	var in struct {
		Query     map[string]json.RawMessage `json:"query"`
		From      int                        `json:"from"`
		Size      int                        `json:"size"`
		Highlight json.RawMessage            `json:"highlight"`
	}
	if err := r.ReadBody(&in, storage.MaxSearchBytes); err != nil {
		return err
	}
	var tf *textFilter
	query := in.Query
	if raw, ok := in.Query["bool"]; ok && len(in.Query) == 1 {
		var err error
		if query, tf, err = boolQuery(raw); err != nil {
			return err
		}
	}
	qs, syntax := "*", true
	if text, ok := plainMatch(query); ok {
		// A match on every field is what a person types (the console's
		// search): it is searched as /search's text is, so stems and
		// fragments (`zebracor`) find what the words begin (issue 46).
		qs, syntax = text, false
	} else if query != nil {
		var err error
		if qs, err = OpenSearchQueryString(query); err != nil {
			return err
		}
	}
	from, size, err := api.ResultWindow(in.From, in.Size)
	if err != nil {
		return err
	}
	opts := index.TextOptions{Syntax: syntax, From: from, Size: size, Hide: s.textHide(r)}
	if tf != nil {
		opts.Filter = tf.index()
	}
	hits, total, err := s.Deps.Indexer.SearchText(r.Site, qs, opts, func(id string) (bool, error) {
		if ok, err := s.textVisible(r, id); !ok || err != nil {
			return false, err
		}
		return s.textFilterMatch(r.Site, id, tf)
	})
	if err != nil {
		return err // a query that does not parse or asks too much is a 400 already
	}
	out := []map[string]any{}
	words := pageWords(qs)
	for _, h := range hits {
		d, err := s.DB.GetDocument(r.Site, h.ID)
		if api.IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		if !s.DocAllows(r, d.Path, storage.FolderRead) {
			continue
		}
		hit := map[string]any{"_id": h.ID, "_score": h.Score, "_source": s.WithThumbnail(r, api.DocumentJSON(d), d)}
		if snip := snippet(s.Deps.Indexer.Text(r.Site, h.ID), queryTerms(qs)); snip != "" {
			hit["highlight"] = map[string][]string{"content": {snip}}
		}
		if p := s.Deps.Indexer.HitPages(r.Site, h.ID, d.ContentType, words); len(p) > 0 {
			hit["matchedPages"] = p
		}
		out = append(out, hit)
	}
	// The total is exact: the index leaves out what the caller may not read.
	return r.JSON(map[string]any{"result": map[string]any{
		"hits": map[string]any{"total": map[string]any{"value": total, "relation": "eq"}, "hits": out},
	}})
}

// plainMatch returns the text of a `match` on every field ("_all", "*"
// or none named), the form a person's search takes; ok is false for any
// other query.
func plainMatch(q map[string]json.RawMessage) (text string, ok bool) {
	raw, found := q["match"]
	if !found || len(q) != 1 {
		return "", false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || len(m) != 1 {
		return "", false
	}
	for f, v := range m {
		if f != "_all" && f != "*" && f != "" {
			return "", false
		}
		if json.Unmarshal(v, &text) != nil {
			var obj struct {
				Query string `json:"query"`
			}
			if json.Unmarshal(v, &obj) != nil {
				return "", false
			}
			text = obj.Query
		}
	}
	if strings.TrimSpace(text) == "" {
		return "", false // OpenSearchQueryString refuses it with its message
	}
	return text, true
}

// OpenSearchQueryString translates the supported OpenSearch query forms
// into Bleve's query string syntax.
func OpenSearchQueryString(q map[string]json.RawMessage) (string, error) {
	if len(q) != 1 {
		return "", api.Invalid("query", "'query' must hold one of query_string, match, match_phrase, prefix, fuzzy")
	}
	field := func(f string) string {
		switch f {
		case "", "_all", "*":
			return ""
		case "content", "path", "tags", "attrs":
			return f + ":"
		case "attributes":
			return "attrs:"
		}
		return f + ":"
	}
	// Inside a Bleve phrase a backslash escapes the next character, so
	// both backslashes and quotes are escaped (FuzzMatchPhrase).
	quote := func(s string) string { return `"` + phraseEscaper.Replace(s) + `"` }
	for kind, raw := range q {
		switch kind {
		case "query_string", "simple_query_string":
			var b struct {
				Query string `json:"query"`
			}
			if err := json.Unmarshal(raw, &b); err != nil || b.Query == "" {
				return "", api.Invalid("query", "'query_string.query' is required")
			}
			return b.Query, nil
		case "match", "match_phrase", "prefix", "fuzzy":
			var m map[string]json.RawMessage
			if err := json.Unmarshal(raw, &m); err != nil || len(m) != 1 {
				return "", api.Invalid("query", fmt.Sprintf("'%s' needs one field", kind))
			}
			for f, v := range m {
				var text string
				if json.Unmarshal(v, &text) != nil {
					var obj struct {
						Query string `json:"query"`
						Value string `json:"value"`
					}
					if json.Unmarshal(v, &obj) != nil {
						return "", api.Invalid("query", "invalid '"+kind+"' value")
					}
					text = obj.Query + obj.Value
				}
				if strings.TrimSpace(text) == "" {
					return "", api.Invalid("query", "empty '"+kind+"' value")
				}
				switch kind {
				case "match":
					var parts []string
					for _, w := range strings.Fields(text) {
						parts = append(parts, "+"+field(f)+quote(w))
					}
					return strings.Join(parts, " "), nil
				case "match_phrase":
					return field(f) + quote(text), nil
				case "prefix":
					return field(f) + strings.ToLower(strings.Fields(text)[0]) + "*", nil
				default:
					return field(f) + strings.Fields(text)[0] + "~1", nil
				}
			}
		}
		return "", api.Invalid("query", "unsupported query '"+kind+"'")
	}
	return "", nil
}

var phraseEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

// queryTerms extracts the words of a query string, lowercased; a trailing
// "*" marks a prefix and "~n" fuzziness is dropped.
func queryTerms(qs string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(qs, func(r rune) bool {
		return r == ' ' || r == '"' || r == '(' || r == ')' || r == '+' || r == '\t'
	}) {
		if strings.HasPrefix(f, "-") {
			continue
		}
		if i := strings.LastIndexByte(f, ':'); i >= 0 {
			f = f[i+1:]
		}
		if i := strings.IndexByte(f, '~'); i >= 0 {
			f = f[:i]
		}
		if f = strings.ToLower(f); f != "" && f != "*" {
			out = append(out, f)
		}
	}
	return out
}

// pageWords is the plain text of a query string's words, for the pages
// a hit matched: its operators are no words.
func pageWords(qs string) string {
	var out []string
	for _, w := range queryTerms(qs) {
		if w != "and" && w != "or" && w != "not" {
			out = append(out, w)
		}
	}
	return strings.Join(out, " ")
}

// snippet cuts about 160 characters of text around the first query term
// and marks every term in it with <mark>, as OpenSearch's html highlighter
// does. Fuzzy matches are marked when they share the term's first three
// letters.
func snippet(text string, terms []string) string {
	if text == "" || len(terms) == 0 {
		return ""
	}
	words := strings.Fields(text)
	match := func(w string) bool {
		lw := strings.ToLower(strings.Trim(w, ".,;:!?()[]{}\"'"))
		for _, t := range terms {
			p := strings.TrimSuffix(t, "*")
			switch {
			case lw == p, strings.HasSuffix(t, "*") && strings.HasPrefix(lw, p):
				return true
			case len(p) >= 3 && len(lw) >= 3 && lw[:3] == p[:3] && abs(len(lw)-len(p)) <= 1:
				return true
			}
		}
		return false
	}
	first := -1
	for i, w := range words {
		if match(w) {
			first = i
			break
		}
	}
	if first < 0 {
		return ""
	}
	lo, hi := max(first-12, 0), min(first+13, len(words))
	out := make([]string, 0, hi-lo)
	for _, w := range words[lo:hi] {
		w = html.EscapeString(w)
		if match(w) {
			w = "<mark>" + w + "</mark>"
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
