package search_test

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

func field(docs []map[string]any, name string) []string {
	var out []string
	for _, d := range docs {
		out = append(out, fmt.Sprint(d[name]))
	}
	return out
}

func TestSearch_Tags(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			ids := map[string]string{}
			for _, v := range []string{"apple", "apricot", "banana", "cherry", "10", "9"} {
				ids[v] = servertest.AddDoc(t, s, tok, site.Query, map[string]any{"content": v, "path": "fruit/" + v + ".txt",
					"tags": []map[string]any{{"key": "fruit", "value": v}, {"key": "color", "value": map[bool]string{true: "red", false: "green"}[v == "apple" || v == "cherry"]}}})
			}
			cases := []struct {
				name string
				tag  map[string]any
				want []string
			}{
				{"eq", map[string]any{"key": "fruit", "eq": "banana"}, []string{"banana"}},
				{"beginsWith", map[string]any{"key": "fruit", "beginsWith": "ap"}, []string{"apple", "apricot"}},
				{"eqOr", map[string]any{"key": "fruit", "eqOr": []string{"cherry", "apple", "nope"}}, []string{"apple", "cherry"}},
				{"range inclusive", map[string]any{"key": "fruit", "range": map[string]any{"start": "apricot", "end": "cherry"}}, []string{"apricot", "banana", "cherry"}},
				{"numeric range", map[string]any{"key": "fruit", "range": map[string]any{"start": "8", "end": "9.5", "type": "NUMBER"}}, []string{"9"}},
				{"key only", map[string]any{"key": "fruit"}, []string{"10", "9", "apple", "apricot", "banana", "cherry"}},
			}
			for _, c := range cases {
				docs, _ := servertest.Search(t, s, tok, site.Query, map[string]any{"query": map[string]any{"tag": c.tag}}, "limit=20")
				var got []string
				for _, d := range docs {
					mt := quiretest.Obj(t, d["matchedTag"])
					if mt["key"] != "fruit" || mt["type"] != "USERDEFINED" {
						t.Fatalf("%s: matchedTag = %v", c.name, mt)
					}
					got = append(got, quiretest.Str(t, mt, "value"))
					if ids[quiretest.Str(t, mt, "value")] != d["documentId"] {
						t.Fatalf("%s: %v matched the wrong document", c.name, d)
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(c.want) {
					t.Fatalf("%s: got %v, want %v", c.name, got, c.want)
				}
			}
			// Several tags at once (beyond FormKiQ core): all must hold.
			docs, _ := servertest.Search(t, s, tok, site.Query, map[string]any{"query": map[string]any{"tags": []map[string]any{{"key": "color", "eq": "red"}, {"key": "fruit", "beginsWith": "a"}}}}, "")
			if got := field(docs, "path"); fmt.Sprint(got) != "[fruit/apple.txt]" {
				t.Fatalf("two tags = %v", got)
			}
			// Paging: 6 documents, 4 per page.
			p1, next := servertest.Search(t, s, tok, site.Query, map[string]any{"query": map[string]any{"tag": map[string]any{"key": "fruit"}}}, "limit=4")
			if len(p1) != 4 || next == "" {
				t.Fatalf("page 1: %d docs, next %q", len(p1), next)
			}
			p2, next2 := servertest.Search(t, s, tok, site.Query, map[string]any{"query": map[string]any{"tag": map[string]any{"key": "fruit"}}}, "limit=4&next="+next)
			if len(p2) != 2 || next2 != "" {
				t.Fatalf("page 2: %d docs, next %q", len(p2), next2)
			}
			all := append(field(p1, "documentId"), field(p2, "documentId")...)
			sort.Strings(all)
			if len(all) != 6 || all[0] == all[1] {
				t.Fatalf("pages overlap or miss: %v", all)
			}
			// Soft-deleted documents leave the results, restored ones come back.
			servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+ids["banana"]+servertest.Query(site.Query, "softDelete=true"), nil, tok), http.StatusOK)
			if docs, _ := servertest.Search(t, s, tok, site.Query, map[string]any{"query": map[string]any{"tag": map[string]any{"key": "fruit", "eq": "banana"}}}, ""); len(docs) != 0 {
				t.Fatalf("soft-deleted document found: %v", docs)
			}
			servertest.MustStatus(t, s.Do(http.MethodPut, "/documents/"+ids["banana"]+"/restore"+site.Query, nil, tok), http.StatusOK)
			if docs, _ := servertest.Search(t, s, tok, site.Query, map[string]any{"query": map[string]any{"tag": map[string]any{"key": "fruit", "eq": "banana"}}}, ""); len(docs) != 1 {
				t.Fatalf("restored document not found: %v", docs)
			}
			// responseFields.
			docs, _ = servertest.Search(t, s, tok, site.Query, map[string]any{"query": map[string]any{"tag": map[string]any{"key": "fruit", "eq": "apple"}}, "responseFields": map[string]any{"tags": []string{"color"}}}, "")
			if len(docs) == 0 {
				t.Fatalf("fruit = apple found %d documents: %v", len(docs), docs)
			}
			if tg, _ := docs[0]["tags"].(map[string]any); tg["color"] != "red" {
				t.Fatalf("responseFields tags = %v", docs[0])
			}
		})
	}
}

func TestSearch_Validation(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	ids := make([]string, 101)
	for i := range ids {
		ids[i] = fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
	}
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			servertest.RunSteps(t, s, tok, site.Query, []servertest.Step{
				{Name: "no query", Method: "POST", Path: "/search", Body: map[string]any{}, Want: 400, Resp: `{"errors":[{"error":"invalid body"}]}`},
				{Name: "empty query", Method: "POST", Path: "/search", Body: map[string]any{"query": map[string]any{}}, Want: 400, Resp: `{"errors":[{"error":"invalid body"}]}`},
				{Name: "meta and tag", Method: "POST", Path: "/search", Body: map[string]any{"query": map[string]any{"meta": map[string]any{"folder": ""}, "tag": map[string]any{"key": "a"}}}, Want: 400, Resp: `{"errors":[{"error":"'meta' cannot be combined with 'tags' or 'attributes'"}]}`},
				{Name: "text and tag", Method: "POST", Path: "/search", Body: map[string]any{"query": map[string]any{"text": "x", "tag": map[string]any{"key": "a"}}}, Want: 400, Resp: `{"errors":[{"error":"'text' search cannot be combined with 'tags'"}]}`},
				{Name: "text and attribute", Method: "POST", Path: "/search", Body: map[string]any{"query": map[string]any{"text": "x", "attribute": map[string]any{"key": "a"}}}, Want: 400, Resp: `{"errors":[{"error":"'text' search cannot be combined with 'attributes'"}]}`},
				{Name: "tag without key", Method: "POST", Path: "/search", Body: map[string]any{"query": map[string]any{"tag": map[string]any{"eq": "a"}}}, Want: 400, Resp: `{"errors":[{"key":"tag/key","error":"tag 'key' is required"}]}`},
				{Name: "range without end", Method: "POST", Path: "/search", Body: map[string]any{"query": map[string]any{"tag": map[string]any{"key": "a", "range": map[string]any{"start": "1"}}}}, Want: 400, Resp: `{"errors":[{"key":"range/end","error":"range end is required"}]}`},
				{Name: "too many ids", Method: "POST", Path: "/search", Body: map[string]any{"query": map[string]any{"documentIds": ids}}, Want: 400, Resp: `{"message":"Maximum number of DocumentIds is 100"}`},
				{Name: "bad token", Method: "POST", Path: "/search?next=%25%25", Body: map[string]any{"query": map[string]any{"tag": map[string]any{"key": "a"}}}, Want: 400, Resp: `{"message":"Invalid Next token"}`},
			})
		})
	}
}

func TestSearch_Attributes(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			servertest.DefineAttr(t, s, tok, site.Query, "amount", "NUMBER", nil)
			servertest.DefineAttr(t, s, tok, site.Query, "kind", "STRING", nil)
			servertest.DefineAttr(t, s, tok, site.Query, "year", "STRING", nil)
			servertest.DefineAttr(t, s, tok, site.Query, "due", "DATE", nil)
			docs := map[string]string{}
			for i, a := range []struct {
				name, kind, year, due string
				amount                float64
			}{
				{"a", "invoice", "2024", "2024-03-01", 9},
				{"b", "invoice", "2025", "2025-03-01", 100},
				{"c", "letter", "2025", "2025-06-01T10:00:00+02:00", 25.5},
			} {
				docs[a.name] = servertest.AddDoc(t, s, tok, site.Query, map[string]any{"content": fmt.Sprint(i), "path": a.name + ".txt", "attributes": []map[string]any{
					{"key": "kind", "stringValue": a.kind}, {"key": "year", "stringValue": a.year},
					{"key": "amount", "numberValue": a.amount}, {"key": "due", "dateValue": a.due}}})
			}
			cases := []struct {
				name  string
				query map[string]any
				want  string
			}{
				{"string eq", map[string]any{"attribute": map[string]any{"key": "kind", "eq": "invoice"}}, "[a.txt b.txt]"},
				{"number eq", map[string]any{"attribute": map[string]any{"key": "amount", "eq": "100"}}, "[b.txt]"},
				{"number range sorts numerically", map[string]any{"attribute": map[string]any{"key": "amount", "range": map[string]any{"start": "9", "end": "30", "type": "NUMBER"}}}, "[a.txt c.txt]"},
				{"date range", map[string]any{"attribute": map[string]any{"key": "due", "range": map[string]any{"start": "2025-01-01", "end": "2025-12-31", "type": "DATE"}}}, "[b.txt c.txt]"},
				{"eqOr", map[string]any{"attribute": map[string]any{"key": "year", "eqOr": []string{"2024", "1999"}}}, "[a.txt]"},
				{"composite", map[string]any{"attributes": []map[string]any{{"key": "kind", "eq": "invoice"}, {"key": "year", "eq": "2025"}}}, "[b.txt]"},
				{"composite other order", map[string]any{"attributes": []map[string]any{{"key": "year", "eq": "2025"}, {"key": "kind", "eq": "invoice"}}}, "[b.txt]"},
				{"attribute and tag", map[string]any{"attribute": map[string]any{"key": "kind", "eq": "letter"}, "tag": map[string]any{"key": "none"}}, "[]"},
				{"documentIds narrow", map[string]any{"attribute": map[string]any{"key": "kind", "eq": "invoice"}, "documentIds": []string{docs["a"]}}, "[a.txt]"},
			}
			for _, c := range cases {
				got, _ := servertest.Search(t, s, tok, site.Query, map[string]any{"query": c.query}, "")
				paths := field(got, "path")
				sort.Strings(paths)
				if fmt.Sprint(paths) != c.want {
					t.Fatalf("%s: got %v, want %s", c.name, paths, c.want)
				}
			}
			got, _ := servertest.Search(t, s, tok, site.Query, map[string]any{"query": map[string]any{"attribute": map[string]any{"key": "amount", "eq": "25.5"}}, "responseFields": map[string]any{"attributes": []string{"kind"}}}, "")
			if len(got) == 0 {
				t.Fatalf("amount = 25.5 found %d documents: %v", len(got), got)
			}
			if ma := quiretest.Obj(t, got[0]["matchedAttribute"]); ma["key"] != "amount" || ma["numberValue"] != 25.5 {
				t.Fatalf("matchedAttribute = %v", ma)
			}
			// A DATE attribute's match is a dateValue, as the document's
			// attribute shows it (issue 33).
			got, _ = servertest.Search(t, s, tok, site.Query, map[string]any{"query": map[string]any{"attribute": map[string]any{"key": "due", "range": map[string]any{"start": "2025-05-01", "end": "2025-12-31", "type": "DATE"}}}}, "")
			if len(got) != 1 {
				t.Fatalf("due in 2025 after May found %d documents: %v", len(got), got)
			}
			due := s.Do(http.MethodGet, "/documents/"+docs["c"]+"/attributes/due"+site.Query, nil, tok)
			servertest.MustStatus(t, due, http.StatusOK)
			wantDate := quiretest.Obj(t, due.JSON(t)["attribute"])["dateValue"]
			if ma := quiretest.Obj(t, got[0]["matchedAttribute"]); ma["key"] != "due" || wantDate == nil || ma["dateValue"] != wantDate || ma["stringValue"] != nil {
				t.Fatalf("matchedAttribute = %v, want key due, dateValue %v", ma, wantDate)
			}
			got, _ = servertest.Search(t, s, tok, site.Query, map[string]any{"query": map[string]any{"attribute": map[string]any{"key": "amount", "eq": "25.5"}}, "responseFields": map[string]any{"attributes": []string{"kind"}}}, "")
			if k := quiretest.Obj(t, quiretest.Obj(t, got[0]["attributes"])["kind"]); fmt.Sprint(k["stringValues"]) != "[letter]" {
				t.Fatalf("responseFields attributes = %v", got[0]["attributes"])
			}
			// Changing an attribute moves it in the index at once.
			servertest.MustStatus(t, s.Do(http.MethodPut, "/documents/"+docs["a"]+"/attributes/kind"+site.Query, map[string]any{"attribute": map[string]any{"stringValue": "memo"}}, tok), http.StatusOK)
			if got, _ := servertest.Search(t, s, tok, site.Query, map[string]any{"query": map[string]any{"attribute": map[string]any{"key": "kind", "eq": "memo"}}}, ""); len(got) != 1 {
				t.Fatalf("changed attribute not found: %v", got)
			}
			if got, _ := servertest.Search(t, s, tok, site.Query, map[string]any{"query": map[string]any{"attribute": map[string]any{"key": "kind", "eq": "invoice"}}}, ""); len(got) != 1 {
				t.Fatalf("old value still found: %v", got)
			}
		})
	}
}

func TestSearch_FoldersAndNames(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			for _, p := range []string{"top.txt", "Reports/2025/q1.pdf", "Reports/2025/q2.pdf", "Reports/summary.txt", "Scans/Invoice-7.pdf"} {
				servertest.AddDoc(t, s, tok, site.Query, map[string]any{"content": p, "path": p})
			}
			root, _ := servertest.Search(t, s, tok, site.Query, map[string]any{"query": map[string]any{"meta": map[string]any{"folder": ""}}}, "")
			if got := fmt.Sprint(field(root, "path")); got != "[Reports Scans top.txt]" {
				t.Fatalf("root = %s", got)
			}
			if root[0]["folder"] != true || root[0]["indexKey"] == nil || root[0]["documentId"] == nil || root[2]["folder"] != nil {
				t.Fatalf("root entries = %v", root)
			}
			sub, _ := servertest.Search(t, s, tok, site.Query, map[string]any{"query": map[string]any{"meta": map[string]any{"folder": "Reports"}}}, "")
			if got := fmt.Sprint(field(sub, "path")); got != "[2025 Reports/summary.txt]" {
				t.Fatalf("Reports = %s", got)
			}
			// GET /folders by indexKey, with paging.
			key := quiretest.Str(t, root[0], "indexKey")
			r := s.Do(http.MethodGet, "/folders"+servertest.Query(site.Query, "limit=1&indexKey="+key), nil, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			page := r.JSON(t)
			if docs := quiretest.List(t, page, "documents"); len(docs) != 1 || quiretest.Obj(t, docs[0])["path"] != "2025" || page["next"] == nil {
				t.Fatalf("folder page = %v", page)
			}
			r = s.Do(http.MethodGet, "/folders"+servertest.Query(site.Query, "limit=1&indexKey="+key+"&next="+quiretest.Str(t, page, "next")), nil, tok)
			if docs := quiretest.List(t, r.JSON(t), "documents"); len(docs) != 1 || quiretest.Obj(t, docs[0])["path"] != "Reports/summary.txt" {
				t.Fatalf("folder page 2 = %s", r.Body)
			}
			// File name prefix, case-insensitive, found as soon as written.
			id := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"content": "x", "path": "Scans/invoice-8.pdf"})
			names, _ := servertest.Search(t, s, tok, site.Query, map[string]any{"query": map[string]any{"filename": map[string]any{"beginsWith": "INVOICE"}}}, "")
			if got := fmt.Sprint(field(names, "path")); got != "[Scans/Invoice-7.pdf Scans/invoice-8.pdf]" {
				t.Fatalf("filename = %s", got)
			}
			folders, _ := servertest.Search(t, s, tok, site.Query, map[string]any{"query": map[string]any{"folder": map[string]any{"beginsWith": "reports/20"}}}, "")
			if got := fmt.Sprint(field(folders, "path")); got != "[Reports/2025/q1.pdf Reports/2025/q2.pdf]" {
				t.Fatalf("folder beginsWith = %s", got)
			}
			// A move onto a taken path neither collides with nor hides the
			// document there (FormKiQ #516, #303); the old name is gone.
			servertest.MustStatus(t, s.Do(http.MethodPatch, "/documents/"+id+site.Query, map[string]any{"path": "Scans/Invoice-7.pdf"}, tok), http.StatusOK)
			scans, _ := servertest.Search(t, s, tok, site.Query, map[string]any{"query": map[string]any{"meta": map[string]any{"folder": "Scans"}}}, "")
			if got := fmt.Sprint(field(scans, "path")); got != fmt.Sprintf("[Scans/Invoice-7 (%s).pdf Scans/Invoice-7.pdf]", id) {
				t.Fatalf("after move = %s", got)
			}
			if n, _ := servertest.Search(t, s, tok, site.Query, map[string]any{"query": map[string]any{"filename": map[string]any{"beginsWith": "invoice-8"}}}, ""); len(n) != 0 {
				t.Fatalf("old name still found: %v", n)
			}
			// meta.path finds one document.
			p, _ := servertest.Search(t, s, tok, site.Query, map[string]any{"query": map[string]any{"meta": map[string]any{"path": "Reports/summary.txt"}}}, "")
			if len(p) != 1 {
				t.Fatalf("meta.path = %v", p)
			}
			// Folders API.
			r = s.Do(http.MethodPost, "/folders"+site.Query, map[string]any{"path": "Empty/Inner"}, tok)
			servertest.MustStatus(t, r, http.StatusCreated)
			inner := quiretest.Str(t, r.JSON(t), "indexKey")
			emptyKey := servertest.FolderKeyOf(t, s, tok, site.Query, "", "Empty")
			servertest.RunSteps(t, s, tok, site.Query, []servertest.Step{
				{Name: "exists", Method: "POST", Path: "/folders", Body: map[string]any{"path": "Empty/Inner"}, Want: 409, Resp: ""},
				{Name: "no path", Method: "POST", Path: "/folders", Body: map[string]any{}, Want: 400, Resp: `{"message":"missing 'path' parameters"}`},
				{Name: "not empty", Method: "DELETE", Path: "/folders/" + emptyKey, Body: nil, Want: 400, Resp: `{"message":"folder is not empty"}`},
				{Name: "holds a file", Method: "DELETE", Path: "/folders/" + ikey("Reports/2025"), Body: nil, Want: 400, Resp: `{"message":"folder is not empty"}`}, // FormKiQ's answer
				{Name: "holds a file by index", Method: "DELETE", Path: "/indices/folder/" + ikey("Reports/2025"), Body: nil, Want: 400, Resp: `{"message":"folder is not empty"}`},
				{Name: "invalid key", Method: "DELETE", Path: "/folders/%25%25", Body: nil, Want: 404, Resp: `{"message":"invalid indexKey '%%'"}`},
				{Name: "a path for a key", Method: "DELETE", Path: "/folders/Reports%2F2025", Body: nil, Want: 404, Resp: `{"message":"invalid indexKey 'Reports/2025'"}`},
				// "docs" decodes, to bytes that are not UTF-8.
				{Name: "a name for a key", Method: "DELETE", Path: "/folders/docs", Body: nil, Want: 404, Resp: `{"message":"invalid indexKey 'docs'"}`},
				{Name: "a name for a key by index", Method: "DELETE", Path: "/indices/folder/Reports", Body: nil, Want: 404, Resp: `{"message":"invalid indexKey 'Reports'"}`},
				{Name: "no such folder", Method: "DELETE", Path: "/folders/" + ikey("Nowhere"), Body: nil, Want: 404, Resp: `{"message":"invalid indexKey '` + ikey("Nowhere") + `'"}`},
				{Name: "long key cut", Method: "DELETE", Path: "/folders/" + strings.Repeat("%C3%A9", 200), Body: nil, Want: 404, Resp: `{"message":"invalid indexKey '` + strings.Repeat("é", 128) + `...'"}`},
				{Name: "a path for a key, list", Method: "GET", Path: "/folders?indexKey=Reports%2F2025", Body: nil, Want: 404, Resp: `{"message":"invalid indexKey 'Reports/2025'"}`},
				{Name: "a path for a key, permissions", Method: "GET", Path: "/folders/docs/permissions", Body: nil, Want: 404, Resp: `{"message":"invalid indexKey 'docs'"}`},
				{Name: "a path for a key, move", Method: "POST", Path: "/folders/docs/moves", Body: map[string]any{"path": "x"}, Want: 404, Resp: `{"message":"invalid indexKey 'docs'"}`},
				{Name: "delete inner", Method: "DELETE", Path: "/folders/" + inner, Body: nil, Want: 200, Resp: `{"message":"deleted folder"}`},
				{Name: "delete outer by index", Method: "DELETE", Path: "/indices/folder/" + emptyKey, Body: nil, Want: 200, Resp: `{"message":"deleted folder"}`},
				{Name: "gone", Method: "DELETE", Path: "/folders/" + emptyKey, Body: nil, Want: 404, Resp: ""},
				{Name: "index values", Method: "POST", Path: "/indices/search", Body: map[string]any{"indexType": "folder"}, Want: 200, Resp: `{"values":[{"value":"Reports"},{"value":"Reports/2025"},{"value":"Scans"}]}`},
			})
		})
	}
}

func TestSearch_Fulltext(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			servertest.DefineAttr(t, s, tok, site.Query, "client", "STRING", nil)
			a := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "notes/meeting.txt", "contentType": "text/plain",
				"content": "The quarterly budget review moved to Thursday afternoon.", "tags": []map[string]any{{"key": "team", "value": "finance"}}})
			b := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "notes/picnic.txt", "contentType": "text/plain",
				"content": "Bring sandwiches to the picnic on Thursday.", "attributes": []map[string]any{{"key": "client", "stringValue": "Globex"}}})
			// Text becomes searchable within a second of the write: wait for
			// the later document, then both are in.
			deadline := time.Now().Add(2 * time.Second)
			for {
				docs, _ := servertest.Search(t, s, tok, site.Query, map[string]any{"query": map[string]any{"text": "sandwiches"}}, "")
				if len(docs) == 1 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("text of the second document not searchable 2s after the write: %v", docs)
				}
				time.Sleep(20 * time.Millisecond)
			}
			docs, _ := servertest.Search(t, s, tok, site.Query, map[string]any{"query": map[string]any{"text": "budget"}}, "")
			if len(docs) != 1 || docs[0]["documentId"] != a {
				t.Fatalf("text search = %v", docs)
			}
			r := s.Do(http.MethodPost, "/searchFulltext"+site.Query, map[string]any{"query": map[string]any{"text": "thursday"}}, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			if n := r.JSON(t)["totalCount"]; n != float64(2) {
				t.Fatalf("totalCount = %v: %s", n, r.Body)
			}
			r = s.Do(http.MethodPost, "/searchFulltext"+site.Query, map[string]any{"query": map[string]any{"text": "thursday", "tags": []map[string]any{{"key": "team", "eq": "finance"}}}}, tok)
			if d := quiretest.List(t, r.JSON(t), "documents"); len(d) != 1 || quiretest.Obj(t, d[0])["documentId"] != a {
				t.Fatalf("tag-narrowed = %s", r.Body)
			}
			r = s.Do(http.MethodPost, "/searchFulltext"+site.Query, map[string]any{"query": map[string]any{"text": "globex"}}, tok)
			if d := quiretest.List(t, r.JSON(t), "documents"); len(d) != 1 || quiretest.Obj(t, d[0])["documentId"] != b {
				t.Fatalf("attribute value search = %s", r.Body)
			}
			for _, c := range []struct {
				name  string
				query map[string]any
				want  string
			}{
				{"phrase", map[string]any{"match_phrase": map[string]any{"content": "budget review"}}, a},
				{"prefix", map[string]any{"prefix": map[string]any{"content": "sandw"}}, b},
				{"fuzzy", map[string]any{"fuzzy": map[string]any{"content": "pikcnic"}}, b},
				{"query string", map[string]any{"query_string": map[string]any{"query": "+thursday -picnic"}}, a},
			} {
				r := s.Do(http.MethodPost, "/queryFulltext"+site.Query, map[string]any{"query": c.query}, tok)
				servertest.MustStatus(t, r, http.StatusOK)
				hits := quiretest.List(t, quiretest.Obj(t, quiretest.Obj(t, r.JSON(t)["result"])["hits"]), "hits")
				if len(hits) != 1 || !strings.HasSuffix(quiretest.Str(t, quiretest.Obj(t, hits[0]), "_id"), c.want) {
					t.Fatalf("%s: %s", c.name, r.Body)
				}
				if c.name == "phrase" && !strings.Contains(fmt.Sprint(quiretest.Obj(t, hits[0])["highlight"]), "<mark>") {
					t.Fatalf("no highlighted snippet: %s", r.Body)
				}
			}
			// Deleted documents leave the fulltext results.
			servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+a+site.Query, nil, tok), http.StatusOK)
			if docs, _ := servertest.Search(t, s, tok, site.Query, map[string]any{"query": map[string]any{"text": "budget"}}, ""); len(docs) != 0 {
				t.Fatalf("deleted document still found: %v", docs)
			}
		})
	}
}

// TestSearch_PrefixPagingAcrossIndexAndRecentWrites pages a file name
// prefix over documents already indexed, documents written just now (not
// yet in Bleve) and a renamed one, and expects each exactly once, in path
// order.
func TestSearch_PrefixPagingAcrossIndexAndRecentWrites(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			var want []string
			add := func(i int) string {
				p := fmt.Sprintf("scan/page-%02d.txt", i)
				want = append(want, p)
				return servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": p, "content": "x"})
			}
			for i := 0; i < 20; i += 2 {
				add(i)
			}
			moved := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "scan/other.txt", "content": "x"})
			servertest.WaitIndexed(t, s)
			for i := 1; i < 20; i += 2 {
				add(i)
			}
			servertest.MustStatus(t, s.Do(http.MethodPatch, "/documents/"+moved+site.Query, map[string]any{"path": "scan/page-99.txt"}, tok), http.StatusOK)
			want = append(want, "scan/page-99.txt")
			sort.Strings(want)
			var got []string
			next := ""
			for range 20 {
				extra := "limit=3"
				if next != "" {
					extra += "&next=" + next
				}
				docs, n := servertest.Search(t, s, tok, site.Query, map[string]any{"query": map[string]any{"filename": map[string]any{"beginsWith": "PAGE-"}}}, extra)
				got = append(got, field(docs, "path")...)
				if next = n; next == "" {
					break
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("pages = %v\nwant    %v", got, want)
			}
		})
	}
}

// pageBothWays pages a search forward with limit 2, then back through the
// previous links from the last page, and expects the same pages.
func pageBothWays(t *testing.T, s *quiretest.Server, tok, site string, body any) [][]string {
	t.Helper()
	type page struct {
		paths      []string
		prev, next string
	}
	get := func(extra string) page {
		r := s.Do(http.MethodPost, "/search"+servertest.Query(site, "limit=2"+extra), body, tok)
		servertest.MustStatus(t, r, http.StatusOK)
		out := r.JSON(t)
		var p page
		for _, d := range quiretest.List(t, out, "documents") {
			p.paths = append(p.paths, fmt.Sprint(quiretest.Obj(t, d)["path"]))
		}
		p.prev, _ = out["previous"].(string)
		p.next, _ = out["next"].(string)
		return p
	}
	var pages []page
	p := get("")
	if p.prev != "" {
		t.Fatalf("first page has previous %q", p.prev)
	}
	for range 50 {
		pages = append(pages, p)
		if p.next == "" {
			break
		}
		p = get("&next=" + p.next)
	}
	for i := len(pages) - 1; i > 0; i-- {
		back := get("&previous=" + pages[i].prev)
		if fmt.Sprint(back.paths) != fmt.Sprint(pages[i-1].paths) || back.prev != pages[i-1].prev {
			t.Fatalf("previous of page %d = %v (previous %q), want %v (previous %q)", i, back.paths, back.prev, pages[i-1].paths, pages[i-1].prev)
		}
	}
	var all [][]string
	for _, p := range pages {
		all = append(all, p.paths)
	}
	return all
}

func TestSearch_PreviousPages(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			for i := range 7 {
				servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": fmt.Sprintf("ledger/entry-%d.txt", i), "content": "ledger entry",
					"tags": []map[string]any{{"key": "kind", "value": "ledger"}}})
			}
			servertest.MustStatus(t, s.Do(http.MethodPost, "/folders"+site.Query, map[string]any{"path": "ledger/archive"}, tok), http.StatusCreated)
			servertest.WaitIndexed(t, s)
			for _, c := range []struct {
				name  string
				body  map[string]any
				pages int
			}{
				{"folder listing", map[string]any{"query": map[string]any{"meta": map[string]any{"folder": "ledger"}}}, 4},
				{"tag", map[string]any{"query": map[string]any{"tag": map[string]any{"key": "kind", "eq": "ledger"}}}, 4},
				{"file name", map[string]any{"query": map[string]any{"filename": map[string]any{"beginsWith": "entry-"}}}, 4},
				{"text", map[string]any{"query": map[string]any{"text": "ledger"}}, 4},
			} {
				t.Run(c.name, func(t *testing.T) {
					if pages := pageBothWays(t, s, tok, site.Query, c.body); len(pages) != c.pages {
						t.Fatalf("pages = %v", pages)
					}
				})
			}
			r := s.Do(http.MethodPost, "/search"+servertest.Query(site.Query, "previous=bm9wZQ"), map[string]any{"query": map[string]any{"meta": map[string]any{"folder": "ledger"}}}, tok)
			servertest.MustStatus(t, r, http.StatusBadRequest)
		})
	}
}
