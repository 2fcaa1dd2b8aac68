package search

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"quire/index"
	"quire/server/internal/api"
	"quire/storage"
)

// maxBoolFilters bounds the filter clauses of one POST /queryFulltext
// bool query (API.md, "Fulltext search filters").
const maxBoolFilters = 20

// textFilter is the filter part of a /queryFulltext bool query: a folder
// (with everything below it), exact tags and attributes, and a range of
// insertion dates. The index applies it; storage re-checks documents
// changed since their indexing (textFilterMatch).
type textFilter struct {
	folder   *string
	kv       []queryFilter
	from, to time.Time
}

func (f *textFilter) index() index.Query {
	var qs []index.Query
	if f.folder != nil {
		qs = append(qs, index.FolderFilter(*f.folder))
	}
	for _, k := range f.kv {
		if k.attr {
			qs = append(qs, index.AttrFilter(k.key, k.values))
		} else {
			qs = append(qs, index.TagFilter(k.key, k.values))
		}
	}
	if !f.from.IsZero() || !f.to.IsZero() {
		qs = append(qs, index.InsertedRange(f.from, f.to))
	}
	if len(qs) == 0 {
		return nil
	}
	return index.And(qs...)
}

// textFilterMatch checks a document against f in storage.
func (s *Handlers) textFilterMatch(site, id string, f *textFilter) (bool, error) {
	if f == nil {
		return true, nil
	}
	d, err := s.DB.GetDocument(site, id)
	if api.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if f.folder != nil {
		if dir := strings.Trim(*f.folder, "/"); dir != "" && !strings.HasPrefix(d.Path, dir+"/") {
			return false, nil
		}
	}
	if (!f.from.IsZero() && d.InsertedDate.Before(f.from)) || (!f.to.IsZero() && !d.InsertedDate.Before(f.to)) {
		return false, nil
	}
	return s.matchFilters(site, id, f.kv)
}

// boolQuery reads OpenSearch's bool query as far as Quire serves it:
// "must" (one query of the forms OpenSearchQueryString reads, or none:
// every document) and "filter" (term, terms and exists on folder,
// tags.<key> and attributes.<key>; range on insertedDate).
func boolQuery(raw json.RawMessage) (map[string]json.RawMessage, *textFilter, error) {
	var b map[string]json.RawMessage
	if err := json.Unmarshal(raw, &b); err != nil {
		return nil, nil, api.Invalid("query", "'bool' must be an object")
	}
	var must map[string]json.RawMessage
	f := &textFilter{}
	for k, v := range b {
		switch k {
		case "must":
			var list []map[string]json.RawMessage
			if json.Unmarshal(v, &list) != nil {
				var one map[string]json.RawMessage
				if err := json.Unmarshal(v, &one); err != nil {
					return nil, nil, api.Invalid("query", "'bool.must' must be a query or a list of one")
				}
				list = []map[string]json.RawMessage{one}
			}
			if len(list) > 1 {
				return nil, nil, api.Invalid("query", "'bool.must' takes one query")
			}
			if len(list) == 1 {
				must = list[0]
			}
		case "filter":
			var list []map[string]json.RawMessage
			if json.Unmarshal(v, &list) != nil {
				var one map[string]json.RawMessage
				if err := json.Unmarshal(v, &one); err != nil {
					return nil, nil, api.Invalid("query", "'bool.filter' must be a list of filters")
				}
				list = []map[string]json.RawMessage{one}
			}
			if len(list) > maxBoolFilters {
				return nil, nil, api.Invalid("query", fmt.Sprintf("at most %d filters", maxBoolFilters))
			}
			for _, c := range list {
				if err := f.add(c); err != nil {
					return nil, nil, err
				}
			}
		default:
			return nil, nil, api.Invalid("query", "unsupported 'bool' clause '"+k+"' (must, filter)")
		}
	}
	if must != nil {
		if _, all := must["match_all"]; all && len(must) == 1 {
			must = nil
		}
	}
	return must, f, nil
}

// scalar reads a filter value: a string, number or boolean, or
// {"value": ...}; attribute numbers and booleans compare as the index
// writes them.
func scalar(raw json.RawMessage) (string, bool) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	if m, ok := v.(map[string]any); ok && len(m) == 1 {
		v = m["value"]
	}
	switch x := v.(type) {
	case string:
		return x, x != ""
	case float64:
		return storage.FormatNumber(x), true
	case bool:
		return strconv.FormatBool(x), true
	}
	return "", false
}

// field names a filter field: folder, tags.<key> or attributes.<key>.
func filterField(name string) (kind, key string, err error) {
	switch {
	case name == "folder":
		return "folder", "", nil
	case strings.HasPrefix(name, "tags.") && len(name) > len("tags."):
		return "tag", name[len("tags."):], nil
	case strings.HasPrefix(name, "attributes.") && len(name) > len("attributes."):
		return "attr", name[len("attributes."):], nil
	}
	return "", "", api.Invalid("query", "unsupported filter field '"+name+"' (folder, tags.<key>, attributes.<key>)")
}

func (f *textFilter) add(c map[string]json.RawMessage) error {
	if len(c) != 1 {
		return api.Invalid("query", "a filter holds one of term, terms, exists, range")
	}
	for kind, raw := range c {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil || len(m) != 1 {
			return api.Invalid("query", "'"+kind+"' needs one field")
		}
		for name, v := range m {
			switch kind {
			case "term", "terms", "exists":
				var vals []string
				field := name
				if kind == "exists" {
					if name != "field" || json.Unmarshal(v, &field) != nil {
						return api.Invalid("query", "'exists' needs 'field'")
					}
				} else if kind == "terms" {
					var list []json.RawMessage
					if json.Unmarshal(v, &list) != nil || len(list) == 0 || len(list) > 100 {
						return api.Invalid("query", "'terms' needs 1 to 100 values")
					}
					for _, x := range list {
						s, ok := scalar(x)
						if !ok {
							return api.Invalid("query", "invalid 'terms' value of '"+name+"'")
						}
						vals = append(vals, s)
					}
				} else {
					s, ok := scalar(v)
					if !ok {
						return api.Invalid("query", "invalid 'term' value of '"+name+"'")
					}
					vals = []string{s}
				}
				fk, key, err := filterField(field)
				if err != nil {
					return err
				}
				if fk == "folder" {
					if kind != "term" || f.folder != nil {
						return api.Invalid("query", "'folder' takes one 'term'")
					}
					dir := strings.Trim(vals[0], "/")
					f.folder = &dir
					continue
				}
				f.kv = append(f.kv, queryFilter{attr: fk == "attr", key: key, values: vals})
			case "range":
				if name != "insertedDate" {
					return api.Invalid("query", "'range' takes insertedDate")
				}
				var r map[string]string
				if err := json.Unmarshal(v, &r); err != nil || len(r) == 0 {
					return api.Invalid("query", "'range.insertedDate' needs gte, gt, lte or lt dates")
				}
				for op, val := range r {
					t, dateOnly, err := filterDate(val)
					if err != nil {
						return api.Invalid("query", "invalid date '"+op+"': use yyyy-MM-dd or an RFC 3339 time, years 1700 to 2200")
					}
					switch op {
					case "gte":
						f.from = t
					case "gt":
						f.from = t.Add(time.Nanosecond)
						if dateOnly {
							f.from = t.AddDate(0, 0, 1)
						}
					case "lt":
						f.to = t
					case "lte":
						f.to = t.Add(time.Nanosecond)
						if dateOnly {
							f.to = t.AddDate(0, 0, 1)
						}
					default:
						return api.Invalid("query", "unsupported range operator '"+op+"' (gte, gt, lte, lt)")
					}
				}
			default:
				return api.Invalid("query", "unsupported filter '"+kind+"' (term, terms, exists, range)")
			}
		}
	}
	return nil
}

// filterDate reads yyyy-MM-dd (midnight UTC; dateOnly) or RFC 3339, in
// the years the index can compare (nanoseconds since 1970 in an int64).
func filterDate(s string) (time.Time, bool, error) {
	t, err := time.Parse("2006-01-02", s)
	dateOnly := err == nil
	if !dateOnly {
		if t, err = time.Parse(time.RFC3339, s); err != nil {
			return t, false, err
		}
	}
	if y := t.UTC().Year(); y < 1700 || y > 2200 {
		return t, false, fmt.Errorf("year %d outside 1700 to 2200", y)
	}
	return t.UTC(), dateOnly, nil
}
