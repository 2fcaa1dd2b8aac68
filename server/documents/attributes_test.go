package documents_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

func docAttr(t *testing.T, s *quiretest.Server, tok, site, id, key string) map[string]any {
	t.Helper()
	r := s.Do(http.MethodGet, "/documents/"+id+"/attributes/"+key+site, nil, tok)
	servertest.MustStatus(t, r, http.StatusOK)
	return quiretest.Obj(t, r.JSON(t)["attribute"])
}

func TestAttributes_Definitions(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			servertest.RunSteps(t, s, tok, site.Query, []servertest.Step{
				{Name: "create", Method: "POST", Path: "/attributes", Body: map[string]any{"attribute": map[string]any{"key": "category"}}, Want: 201, Resp: `{"message":"Attribute 'category' created"}`},
				{Name: "duplicate", Method: "POST", Path: "/attributes", Body: map[string]any{"attribute": map[string]any{"key": "category"}}, Want: 400, Resp: `{"errors":[{"key":"key","error":"attribute 'category' already exists"}]}`},
				{Name: "reserved", Method: "POST", Path: "/attributes", Body: map[string]any{"attribute": map[string]any{"key": "RetentionPolicy"}}, Want: 400, Resp: `{"errors":[{"key":"key","error":"'RetentionPolicy' is a reserved attribute name"}]}`},
				// FormKiQ's reserved names (API-NAMES.md Appendix D), without case.
				{Name: "reserved lower case", Method: "POST", Path: "/attributes", Body: map[string]any{"attribute": map[string]any{"key": "publication"}}, Want: 400, Resp: `{"errors":[{"key":"key","error":"'publication' is a reserved attribute name"}]}`},
				{Name: "reserved FormKiQ name", Method: "POST", Path: "/attributes", Body: map[string]any{"attribute": map[string]any{"key": "MalwareScanResult"}}, Want: 400, Resp: `{"errors":[{"key":"key","error":"'MalwareScanResult' is a reserved attribute name"}]}`},
				{Name: "reserved other case", Method: "POST", Path: "/attributes", Body: map[string]any{"attribute": map[string]any{"key": "LLMMODELID", "dataType": "STRING"}}, Want: 400, Resp: `{"errors":[{"key":"key","error":"'LLMMODELID' is a reserved attribute name"}]}`},
				{Name: "reserved built-in any case", Method: "POST", Path: "/attributes", Body: map[string]any{"attribute": map[string]any{"key": "checkout"}}, Want: 400, Resp: `{"errors":[{"key":"key","error":"'checkout' is a reserved attribute name"}]}`},
				{Name: "near a reserved name", Method: "POST", Path: "/attributes", Body: map[string]any{"attribute": map[string]any{"key": "Publications"}}, Want: 201, Resp: ""},
				{Name: "near a reserved name deleted", Method: "DELETE", Path: "/attributes/Publications", Body: nil, Want: 200, Resp: ""},
				{Name: "no key", Method: "POST", Path: "/attributes", Body: map[string]any{"attribute": map[string]any{"dataType": "STRING"}}, Want: 400, Resp: `{"errors":[{"key":"key","error":"'key' is required"}]}`},
				{Name: "bad data type", Method: "POST", Path: "/attributes", Body: map[string]any{"attribute": map[string]any{"key": "x", "dataType": "BLOB"}}, Want: 400, Resp: `{"errors":[{"key":"dataType","error":"invalid 'dataType'"}]}`},
				{Name: "bad regex", Method: "POST", Path: "/attributes", Body: map[string]any{"attribute": map[string]any{"key": "x", "validationRegex": "("}}, Want: 400, Resp: `{"errors":[{"key":"validationRegex","error":"invalid 'validationRegex'"}]}`},
				{Name: "number", Method: "POST", Path: "/attributes", Body: map[string]any{"attribute": map[string]any{"key": "amount", "dataType": "NUMBER"}}, Want: 201, Resp: ""},
				{Name: "with regex", Method: "POST", Path: "/attributes", Body: map[string]any{"attribute": map[string]any{"key": "code", "validationRegex": "^[A-Z]{3}$"}}, Want: 201, Resp: ""},
				{Name: "get", Method: "GET", Path: "/attributes/amount", Body: nil, Want: 200, Resp: `{"attribute":{"dataType":"NUMBER","key":"amount","type":"STANDARD"}}`},
				{Name: "get reserved", Method: "GET", Path: "/attributes/LlmMaxToken", Body: nil, Want: 200, Resp: `{"attribute":{"dataType":"NUMBER","key":"LlmMaxToken","type":"STANDARD"}}`},
				{Name: "get missing", Method: "GET", Path: "/attributes/nope", Body: nil, Want: 404, Resp: `{"message":"Attribute nope not found"}`},
				{Name: "patch regex", Method: "PATCH", Path: "/attributes/code", Body: map[string]any{"attribute": map[string]any{"validationRegex": "^[0-9]+$"}}, Want: 200, Resp: `{"message":"Attribute 'code' updated"}`},
				{Name: "regex applies", Method: "GET", Path: "/attributes/code", Body: nil, Want: 200, Resp: `~"validationRegex":"^[0-9]+$"`},
				// FormKiQ #500: an empty regex clears it.
				{Name: "clear regex", Method: "PATCH", Path: "/attributes/code", Body: map[string]any{"attribute": map[string]any{"validationRegex": ""}}, Want: 200, Resp: ""},
				{Name: "regex cleared", Method: "GET", Path: "/attributes/code", Body: nil, Want: 200, Resp: `{"attribute":{"dataType":"STRING","key":"code","type":"STANDARD"}}`},
				{Name: "patch data type", Method: "PATCH", Path: "/attributes/code", Body: map[string]any{"attribute": map[string]any{"dataType": "NUMBER"}}, Want: 400, Resp: `{"errors":[{"key":"dataType","error":"'dataType' cannot be changed"}]}`},
				{Name: "patch missing", Method: "PATCH", Path: "/attributes/nope", Body: map[string]any{"attribute": map[string]any{"type": "STANDARD"}}, Want: 404, Resp: `{"message":"Attribute nope not found"}`},
				{Name: "delete unused", Method: "DELETE", Path: "/attributes/code", Body: nil, Want: 200, Resp: `{"message":"Attribute 'code' deleted"}`},
				{Name: "delete missing", Method: "DELETE", Path: "/attributes/code", Body: nil, Want: 404, Resp: `{"message":"Attribute code not found"}`},
				{Name: "list page 1", Method: "GET", Path: "/attributes?limit=1", Body: nil, Want: 200, Resp: `~"key":"amount"`},
			})
			// Paging: two definitions, one per page.
			p1 := s.Do(http.MethodGet, "/attributes"+servertest.Query(site.Query, "limit=1"), nil, tok).JSON(t)
			next, _ := p1["next"].(string)
			if next == "" {
				t.Fatalf("no next token on a full page: %v", p1)
			}
			p2 := s.Do(http.MethodGet, "/attributes"+servertest.Query(site.Query, "limit=1&next="+next), nil, tok).JSON(t)
			if a := quiretest.List(t, p2, "attributes"); len(a) != 1 || quiretest.Obj(t, a[0])["key"] != "category" {
				t.Fatalf("page 2 = %v", p2)
			}
			// In use: a document carries it.
			servertest.AddDoc(t, s, tok, site.Query, map[string]any{"content": "x", "attributes": []map[string]any{{"key": "category", "stringValue": "a"}}})
			r := s.Do(http.MethodDelete, "/attributes/category"+site.Query, nil, tok)
			servertest.MustStatus(t, r, http.StatusBadRequest)
			servertest.MustBody(t, r, `{"errors":[{"key":"category","error":"attribute 'category' is in use, cannot be deleted"}]}`)
		})
	}
	// Definitions are per site.
	r := s.Do(http.MethodGet, "/attributes/amount?siteId=other", nil, tok)
	servertest.MustStatus(t, r, http.StatusNotFound)
}

func TestAttributes_DocumentValues(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			servertest.DefineAttr(t, s, tok, site.Query, "title", "STRING", nil)
			servertest.DefineAttr(t, s, tok, site.Query, "amount", "NUMBER", nil)
			servertest.DefineAttr(t, s, tok, site.Query, "paid", "BOOLEAN", nil)
			servertest.DefineAttr(t, s, tok, site.Query, "flag", "KEY_ONLY", nil)
			servertest.DefineAttr(t, s, tok, site.Query, "due", "DATE", nil)
			servertest.DefineAttr(t, s, tok, site.Query, "code", "STRING", map[string]any{"validationRegex": "^[A-Z]{3}$"})
			bad := []struct {
				name string
				attr map[string]any
				want string
			}{
				{"undefined", map[string]any{"key": "nope", "stringValue": "x"}, `{"errors":[{"key":"nope","error":"attribute 'nope' not found"}]}`},
				{"number on string", map[string]any{"key": "title", "numberValue": 3}, `{"errors":[{"key":"title","error":"attribute only support string value"}]}`},
				{"string on number", map[string]any{"key": "amount", "stringValue": "3"}, `{"errors":[{"key":"amount","error":"attribute only support number value"}]}`},
				{"string on boolean", map[string]any{"key": "paid", "stringValue": "true"}, `{"errors":[{"key":"paid","error":"attribute only support boolean value"}]}`},
				{"value on key only", map[string]any{"key": "flag", "stringValue": "x"}, `{"errors":[{"key":"flag","error":"attribute does not support a value"}]}`},
				{"bad date", map[string]any{"key": "due", "dateValue": "next tuesday"}, `{"errors":[{"key":"due","error":"invalid date value 'next tuesday'"}]}`},
				{"regex", map[string]any{"key": "code", "stringValue": "abcd"}, `{"errors":[{"key":"code","error":"invalid attribute value 'abcd', does not match regex '^[A-Z]{3}$'"}]}`},
				{"no key", map[string]any{"stringValue": "x"}, `{"errors":[{"error":"'key' is missing from attribute"}]}`},
				{"unknown classification", map[string]any{"classificationId": "nope"}, `{"errors":[{"key":"classificationId","error":"Classification 'nope' not found"}]}`},
			}
			for _, b := range bad {
				r := s.Do(http.MethodPost, "/documents"+site.Query, map[string]any{"content": "x", "path": "bad-" + b.name, "attributes": []any{b.attr}}, tok)
				if r.Status != http.StatusBadRequest || strings.TrimSpace(string(r.Body)) != b.want {
					t.Fatalf("%s: %d %s, want 400 %s", b.name, r.Status, r.Body, b.want)
				}
			}
			// Nothing of a refused document was written.
			if r := s.Do(http.MethodGet, "/documents"+servertest.Query(site.Query, "limit=100"), nil, tok).JSON(t); strings.Contains(fmt.Sprint(r["documents"]), "bad-") {
				t.Fatalf("a refused document was stored: %v", r["documents"])
			}

			id := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"content": "x", "attributes": []map[string]any{
				{"key": "title", "stringValues": []string{"pear", "apple", "fig"}},
				{"key": "amount", "numberValues": []float64{10, 2.5, 7}},
				{"key": "paid", "booleanValue": true},
				{"key": "flag"},
				{"key": "due", "dateValue": "2025-01-21T05:55:41+02:00"},
				{"key": "code", "stringValue": "ABC"},
			}})
			checks := []struct{ key, field, want string }{
				{"title", "stringValues", "[apple fig pear]"},
				{"amount", "numberValues", "[2.5 7 10]"},
				{"paid", "booleanValue", "true"},
				{"flag", "valueType", "KEY_ONLY"},
				{"due", "dateValue", "2025-01-21T03:55:41Z"},
				{"due", "valueType", "DATE"},
				{"code", "stringValue", "ABC"},
				{"code", "userId", "admin"},
			}
			for _, c := range checks {
				a := docAttr(t, s, tok, site.Query, id, c.key)
				if got := fmt.Sprint(a[c.field]); got != c.want {
					t.Fatalf("%s.%s = %s, want %s (%v)", c.key, c.field, got, c.want, a)
				}
				if a["insertedDate"] == nil {
					t.Fatalf("%s has no insertedDate", c.key)
				}
			}
			// A STRING attribute holding a date stays a string.
			sid := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"content": "x", "attributes": []map[string]any{{"key": "title", "stringValue": "2025-01-21"}}})
			if a := docAttr(t, s, tok, site.Query, sid, "title"); a["stringValue"] != "2025-01-21" || a["valueType"] != "STRING" {
				t.Fatalf("date-like string = %v", a)
			}
		})
	}
}

func TestAttributes_DocumentEndpoints(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			servertest.DefineAttr(t, s, tok, site.Query, "tag", "STRING", nil)
			servertest.DefineAttr(t, s, tok, site.Query, "n", "NUMBER", nil)
			id := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"content": "x", "path": "a/orig.txt", "attributes": []map[string]any{{"key": "tag", "stringValue": "b"}}})
			base := "/documents/" + id + "/attributes"
			servertest.RunSteps(t, s, tok, site.Query, []servertest.Step{
				{Name: "add merges values", Method: "POST", Path: base, Body: map[string]any{"attributes": []map[string]any{{"key": "tag", "stringValues": []string{"a", "c"}}}}, Want: 201, Resp: `{"message":"added attributes to documentId '` + id + `'"}`},
				{Name: "merged", Method: "GET", Path: base + "/tag", Body: nil, Want: 200, Resp: `~"stringValues":["a","b","c"]`},
				{Name: "single form", Method: "POST", Path: base, Body: map[string]any{"attribute": map[string]any{"key": "n", "numberValue": 5}}, Want: 201, Resp: ""},
				{Name: "put key replaces", Method: "PUT", Path: base + "/tag", Body: map[string]any{"attribute": map[string]any{"stringValue": "z"}}, Want: 200, Resp: `{"message":"Updated attribute 'tag' on document '` + id + `'"}`},
				{Name: "replaced", Method: "GET", Path: base + "/tag", Body: nil, Want: 200, Resp: `~"stringValue":"z"`},
				{Name: "put key wrong type", Method: "PUT", Path: base + "/n", Body: map[string]any{"attribute": map[string]any{"stringValue": "z"}}, Want: 400, Resp: `{"errors":[{"key":"n","error":"attribute only support number value"}]}`},
				{Name: "delete value", Method: "DELETE", Path: base + "/tag/z", Body: nil, Want: 200, Resp: ""},
				{Name: "key gone with last value", Method: "GET", Path: base + "/tag", Body: nil, Want: 404, Resp: ""},
				{Name: "put all", Method: "PUT", Path: base, Body: map[string]any{"attributes": []map[string]any{{"key": "tag", "stringValue": "only"}}}, Want: 200, Resp: `{"message":"set attributes on documentId '` + id + `'"}`},
				{Name: "n removed by put all", Method: "GET", Path: base + "/n", Body: nil, Want: 404, Resp: `{"message":"attribute 'n' not found on document '` + id + `'"}`},
				{Name: "delete key", Method: "DELETE", Path: base + "/tag", Body: nil, Want: 200, Resp: ""},
				{Name: "delete missing key", Method: "DELETE", Path: base + "/tag", Body: nil, Want: 404, Resp: ""},
				{Name: "empty body", Method: "POST", Path: base, Body: map[string]any{}, Want: 400, Resp: `{"errors":[{"key":"attributes","error":"'attributes' is required"}]}`},
				{Name: "unknown document", Method: "GET", Path: "/documents/5e9d4c1a-0000-4000-8000-000000000000/attributes", Body: nil, Want: 404, Resp: `{"message":"Document 5e9d4c1a-0000-4000-8000-000000000000 not found."}`},
			})
			// FormKiQ #276: a PATCH that fails attribute validation leaves
			// the path (and everything else) as it was.
			r := s.Do(http.MethodPatch, "/documents/"+id+site.Query, map[string]any{"path": "moved/new.txt", "attributes": []map[string]any{{"key": "n", "stringValue": "NaN"}}}, tok)
			servertest.MustStatus(t, r, http.StatusBadRequest)
			if doc := s.Do(http.MethodGet, "/documents/"+id+site.Query, nil, tok).JSON(t); doc["path"] != "a/orig.txt" {
				t.Fatalf("failed PATCH moved the document to %v", doc["path"])
			}
			// PATCH overwrites the keys it names and keeps the others.
			servertest.MustStatus(t, s.Do(http.MethodPost, base+site.Query, map[string]any{"attributes": []map[string]any{{"key": "tag", "stringValue": "keep"}}}, tok), http.StatusCreated)
			servertest.MustStatus(t, s.Do(http.MethodPatch, "/documents/"+id+site.Query, map[string]any{"attributes": []map[string]any{{"key": "n", "numberValue": 9}}}, tok), http.StatusOK)
			if a := docAttr(t, s, tok, site.Query, id, "tag"); a["stringValue"] != "keep" {
				t.Fatalf("PATCH dropped another key: %v", a)
			}
			if a := docAttr(t, s, tok, site.Query, id, "n"); a["numberValue"] != float64(9) {
				t.Fatalf("PATCH value = %v", a)
			}
			// Uploads carry attributes too, validated the same way.
			up := s.Do(http.MethodPost, "/documents/upload"+site.Query, map[string]any{"path": "up.bin", "attributes": []map[string]any{{"key": "n", "numberValue": 1}}}, tok)
			servertest.MustStatus(t, up, http.StatusCreated)
			if a := docAttr(t, s, tok, site.Query, quiretest.Str(t, up.JSON(t), "documentId"), "n"); a["numberValue"] != float64(1) {
				t.Fatalf("upload attribute = %v", a)
			}
			bad := s.Do(http.MethodPost, "/documents/upload"+site.Query, map[string]any{"path": "up2.bin", "attributes": []map[string]any{{"key": "n", "booleanValue": true}}}, tok)
			servertest.MustStatus(t, bad, http.StatusBadRequest)
			// Paging over a document's attributes.
			l := s.Do(http.MethodGet, base+servertest.Query(site.Query, "limit=1"), nil, tok).JSON(t)
			if len(quiretest.List(t, l, "attributes")) != 1 || l["next"] == nil {
				t.Fatalf("page = %v", l)
			}
			l2 := s.Do(http.MethodGet, base+servertest.Query(site.Query, "limit=1&next="+quiretest.Str(t, l, "next")), nil, tok).JSON(t)
			if a := quiretest.List(t, l2, "attributes"); len(a) != 1 || quiretest.Obj(t, a[0])["key"] != "tag" {
				t.Fatalf("page 2 = %v", l2)
			}
		})
	}
}

func TestAttributes_Relationships(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			main := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"content": "main"})
			att := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"content": "attachment", "attributes": []map[string]any{
				{"documentId": main, "relationship": "ATTACHMENT"},
			}})
			if a := docAttr(t, s, tok, site.Query, att, "Relationships"); a["stringValue"] != "ATTACHMENT#"+main || a["valueType"] != "RELATIONSHIPS" {
				t.Fatalf("relationship = %v", a)
			}
			if a := docAttr(t, s, tok, site.Query, main, "Relationships"); a["stringValue"] != "PRIMARY#"+att {
				t.Fatalf("inverse = %v", a)
			}
			// An explicit inverse.
			servertest.MustStatus(t, s.Do(http.MethodPost, "/documents/"+main+"/attributes"+site.Query, map[string]any{"attributes": []map[string]any{
				{"documentId": att, "relationship": "ASSOCIATED", "inverseRelationship": "APPENDIX"},
			}}, tok), http.StatusCreated)
			if a := docAttr(t, s, tok, site.Query, att, "Relationships"); fmt.Sprint(a["stringValues"]) != fmt.Sprintf("[APPENDIX#%s ATTACHMENT#%s]", main, main) {
				t.Fatalf("relationships = %v", a)
			}
			r := s.Do(http.MethodPost, "/documents"+site.Query, map[string]any{"content": "x", "attributes": []map[string]any{{"documentId": main, "relationship": "COUSIN"}}}, tok)
			servertest.MustStatus(t, r, http.StatusBadRequest)
			r = s.Do(http.MethodPost, "/documents"+site.Query, map[string]any{"content": "x", "attributes": []map[string]any{{"documentId": "5e9d4c1a-0000-4000-8000-000000000000", "relationship": "PRIMARY"}}}, tok)
			servertest.MustStatus(t, r, http.StatusBadRequest)
			servertest.MustBody(t, r, `{"errors":[{"key":"documentId","error":"Document 5e9d4c1a-0000-4000-8000-000000000000 not found."}]}`)
			// Deleting one side removes the other side's entry.
			servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+att+site.Query, nil, tok), http.StatusOK)
			servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+main+"/attributes/Relationships"+site.Query, nil, tok), http.StatusNotFound)
		})
	}
}

func TestAttributes_SchemaAndClassifications(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range []struct{ name, id string }{{"default", "default"}, {"finance", "finance"}} {
		t.Run(site.name, func(t *testing.T) {
			sq := "?siteId=" + site.id
			sbase := "/sites/" + site.id
			servertest.DefineAttr(t, s, tok, sq, "category", "STRING", nil)
			servertest.DefineAttr(t, s, tok, sq, "dept", "STRING", nil)
			servertest.DefineAttr(t, s, tok, sq, "pages", "NUMBER", nil)
			servertest.DefineAttr(t, s, tok, sq, "extra", "STRING", nil)
			servertest.DefineAttr(t, s, tok, sq, "owner", "ENTITY", nil)
			servertest.RunSteps(t, s, tok, "", []servertest.Step{
				{Name: "no schema yet", Method: "GET", Path: sbase + "/schema/document", Body: nil, Want: 404, Resp: `{"message":"Sites Schema not found"}`},
				{Name: "undefined attribute", Method: "PUT", Path: sbase + "/schema/document", Body: map[string]any{"name": "s", "attributes": map[string]any{"required": []map[string]any{{"attributeKey": "nope"}}}}, Want: 400, Resp: `{"errors":[{"key":"nope","error":"attribute 'nope' not found"}]}`},
				{Name: "no name", Method: "PUT", Path: sbase + "/schema/document", Body: map[string]any{"attributes": map[string]any{"required": []map[string]any{{"attributeKey": "category"}}}}, Want: 400, Resp: `{"errors":[{"key":"name","error":"'name' is required"}]}`},
				{Name: "optional entity needs no default", Method: "PUT", Path: sbase + "/schema/document", Body: map[string]any{"name": "e", "attributes": map[string]any{"optional": []map[string]any{{"attributeKey": "owner"}}}}, Want: 200, Resp: ""},
				{Name: "set", Method: "PUT", Path: sbase + "/schema/document", Body: map[string]any{"name": "office", "attributes": map[string]any{
					"required":                  []map[string]any{{"attributeKey": "category", "allowedValues": []string{"invoice", "letter"}, "defaultValue": "letter"}},
					"optional":                  []map[string]any{{"attributeKey": "pages", "maxNumberOfValues": 1}, {"attributeKey": "dept", "allowedValues": []string{"hr", "it"}}},
					"compositeKeys":             []map[string]any{{"attributeKeys": []string{"category", "dept"}}},
					"allowAdditionalAttributes": false,
				}}, Want: 200, Resp: `{"message":"Sites Schema set"}`},
				{Name: "get", Method: "GET", Path: sbase + "/schema/document", Body: nil, Want: 200, Resp: `~"name":"office"`},
				{Name: "allowed values", Method: "GET", Path: sbase + "/schema/document/attributes/category/allowedValues", Body: nil, Want: 200, Resp: `{"allowedValues":["invoice","letter"]}`},
				{Name: "not allowed", Method: "POST", Path: "/documents" + sq, Body: map[string]any{"content": "x", "attributes": []map[string]any{{"key": "category", "stringValue": "memo"}}}, Want: 400, Resp: `{"errors":[{"key":"category","error":"invalid attribute value 'memo', only allowed values are invoice,letter"}]}`},
				{Name: "additional refused", Method: "POST", Path: "/documents" + sq, Body: map[string]any{"content": "x", "attributes": []map[string]any{{"key": "extra", "stringValue": "e"}}}, Want: 400, Resp: `{"errors":[{"key":"extra","error":"attribute 'extra' is not listed in the schema"}]}`},
				{Name: "too many values", Method: "POST", Path: "/documents" + sq, Body: map[string]any{"content": "x", "attributes": []map[string]any{{"key": "pages", "numberValues": []float64{1, 2}}}}, Want: 400, Resp: `~"attribute 'pages' allows at most 1 values"`},
				{Name: "in use by schema", Method: "DELETE", Path: "/attributes/dept" + sq, Body: nil, Want: 400, Resp: `{"errors":[{"key":"dept","error":"attribute 'dept' is in use, cannot be deleted"}]}`},
			})
			// The default fills a missing required attribute on creation.
			id := servertest.AddDoc(t, s, tok, sq, map[string]any{"content": "x"})
			if a := docAttr(t, s, tok, sq, id, "category"); a["stringValue"] != "letter" {
				t.Fatalf("default = %v", a)
			}
			// Removing a required attribute later is refused.
			r := s.Do(http.MethodDelete, "/documents/"+id+"/attributes/category"+sq, nil, tok)
			servertest.MustStatus(t, r, http.StatusBadRequest)
			servertest.MustBody(t, r, `{"errors":[{"key":"category","error":"missing required attribute 'category'"}]}`)

			// A classification adds its own required attribute.
			r = s.Do(http.MethodPost, sbase+"/classifications", map[string]any{"classification": map[string]any{"name": "Invoice", "attributes": map[string]any{
				"required": []map[string]any{{"attributeKey": "pages"}},
				"optional": []map[string]any{{"attributeKey": "extra", "allowedValues": []string{"x1", "x2"}}},
			}}}, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			cid := quiretest.Str(t, r.JSON(t), "classificationId")
			servertest.RunSteps(t, s, tok, "", []servertest.Step{
				{Name: "duplicate name", Method: "POST", Path: sbase + "/classifications", Body: map[string]any{"classification": map[string]any{"name": "Invoice", "attributes": map[string]any{"required": []map[string]any{{"attributeKey": "pages"}}}}}, Want: 400, Resp: `{"errors":[{"key":"name","error":"Classification 'Invoice' already exists"}]}`},
				{Name: "get", Method: "GET", Path: sbase + "/classifications/" + cid, Body: nil, Want: 200, Resp: `~"name":"Invoice"`},
				{Name: "list", Method: "GET", Path: sbase + "/classifications", Body: nil, Want: 200, Resp: `~"classificationId":"` + cid + `"`},
				{Name: "allowed values", Method: "GET", Path: sbase + "/classifications/" + cid + "/attributes/extra/allowedValues", Body: nil, Want: 200, Resp: `{"allowedValues":["x1","x2"]}`},
				{Name: "allowed across all", Method: "GET", Path: "/attributes/extra/allowedValues" + sq, Body: nil, Want: 200, Resp: `{"allowedValues":["x1","x2"]}`},
				{Name: "classified without pages", Method: "POST", Path: "/documents" + sq, Body: map[string]any{"content": "x", "attributes": []map[string]any{{"classificationId": cid}}}, Want: 400, Resp: `{"errors":[{"key":"pages","error":"missing required attribute 'pages'"}]}`},
				{Name: "missing", Method: "GET", Path: sbase + "/classifications/nope", Body: nil, Want: 404, Resp: `{"message":"Classification 'nope' not found"}`},
			})
			cd := servertest.AddDoc(t, s, tok, sq, map[string]any{"content": "x", "attributes": []map[string]any{{"classificationId": cid}, {"key": "pages", "numberValue": 3}, {"key": "extra", "stringValue": "x1"}}})
			if a := docAttr(t, s, tok, sq, cd, "Classification"); a["stringValue"] != cid || a["valueType"] != "CLASSIFICATION" {
				t.Fatalf("classification attribute = %v", a)
			}
			servertest.RunSteps(t, s, tok, "", []servertest.Step{
				{Name: "in use", Method: "DELETE", Path: sbase + "/classifications/" + cid, Body: nil, Want: 400, Resp: ""},
				{Name: "set", Method: "PUT", Path: sbase + "/classifications/" + cid, Body: map[string]any{"classification": map[string]any{"name": "Invoice2", "attributes": map[string]any{"optional": []map[string]any{{"attributeKey": "pages"}}}}}, Want: 200, Resp: `{"message":"Set Classification"}`},
			})
			servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+cd+sq, nil, tok), http.StatusOK)
			servertest.RunSteps(t, s, tok, "", []servertest.Step{
				{Name: "delete", Method: "DELETE", Path: sbase + "/classifications/" + cid, Body: nil, Want: 200, Resp: `{"message":"Classification '` + cid + `' deleted"}`},
			})
		})
	}
	// Only GOVERN may set the schema.
	r := s.Do(http.MethodPut, "/sites/finance/schema/document", map[string]any{"name": "x"}, s.Token("joe", "finance"))
	servertest.MustStatus(t, r, http.StatusUnauthorized)
}

func TestAttributes_Entities(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			servertest.RunSteps(t, s, tok, site.Query, []servertest.Step{
				{Name: "no namespace", Method: "POST", Path: "/entityTypes", Body: map[string]any{"entityType": map[string]any{"name": "Customer"}}, Want: 400, Resp: `{"errors":[{"key":"namespace","error":"'namespace' is required"}]}`},
				{Name: "no name", Method: "POST", Path: "/entityTypes", Body: map[string]any{"entityType": map[string]any{"namespace": "CUSTOM"}}, Want: 400, Resp: `{"errors":[{"key":"name","error":"'name' is required"}]}`},
				{Name: "bad preset", Method: "POST", Path: "/entityTypes", Body: map[string]any{"entityType": map[string]any{"namespace": "PRESET", "name": "Customer"}}, Want: 400, Resp: ""},
			})
			r := s.Do(http.MethodPost, "/entityTypes"+site.Query, map[string]any{"entityType": map[string]any{"namespace": "CUSTOM", "name": "Customer"}}, tok)
			servertest.MustStatus(t, r, http.StatusCreated)
			et := quiretest.Str(t, r.JSON(t), "entityTypeId")
			r = s.Do(http.MethodPost, "/entities/"+et+site.Query, map[string]any{"entity": map[string]any{"name": "ACME", "attributes": []map[string]any{{"key": "vat", "stringValue": "DE123"}}}}, tok)
			servertest.MustStatus(t, r, http.StatusCreated)
			eid := quiretest.Str(t, r.JSON(t), "entityId")
			servertest.DefineAttr(t, s, tok, site.Query, "customer", "ENTITY", nil)
			servertest.RunSteps(t, s, tok, site.Query, []servertest.Step{
				{Name: "duplicate type", Method: "POST", Path: "/entityTypes", Body: map[string]any{"entityType": map[string]any{"namespace": "CUSTOM", "name": "Customer"}}, Want: 400, Resp: ""},
				{Name: "get type by name", Method: "GET", Path: "/entityTypes/Customer?namespace=CUSTOM", Body: nil, Want: 200, Resp: `~"entityTypeId":"` + et + `"`},
				{Name: "get entity", Method: "GET", Path: "/entities/" + et + "/" + eid, Body: nil, Want: 200, Resp: `~"name":"ACME"`},
				{Name: "missing entity names the id", Method: "GET", Path: "/entities/" + et + "/nope-42", Body: nil, Want: 404, Resp: `{"message":"Entity 'nope-42' not found"}`},
				{Name: "missing type names the id", Method: "GET", Path: "/entities/nope-7", Body: nil, Want: 404, Resp: `{"message":"EntityType 'nope-7' not found"}`},
				{Name: "patch", Method: "PATCH", Path: "/entities/" + et + "/" + eid, Body: map[string]any{"entity": map[string]any{"attributes": []map[string]any{{"key": "city", "stringValue": "Bonn"}}}}, Want: 200, Resp: `{"message":"Entity updated"}`},
				{Name: "patched", Method: "GET", Path: "/entities/" + et + "/" + eid, Body: nil, Want: 200, Resp: `~"key":"city"`},
				{Name: "patch without name keeps it", Method: "GET", Path: "/entities/" + et + "/" + eid, Body: nil, Want: 200, Resp: `~"name":"ACME"`},
				{Name: "add without name", Method: "POST", Path: "/entities/" + et, Body: map[string]any{"entity": map[string]any{"attributes": []map[string]any{{"key": "vat", "stringValue": "DE9"}}}}, Want: 400, Resp: `{"errors":[{"key":"name","error":"'name' is required"}]}`},
				{Name: "set without name", Method: "PUT", Path: "/entities/" + et + "/" + eid, Body: map[string]any{"entity": map[string]any{}}, Want: 400, Resp: `{"errors":[{"key":"name","error":"'name' is required"}]}`},
				{Name: "doc with entity", Method: "POST", Path: "/documents", Body: map[string]any{"content": "x", "path": "ent.txt", "attributes": []map[string]any{{"key": "customer", "entityTypeId": "Customer", "entityId": eid, "namespace": "CUSTOM"}}}, Want: 201, Resp: ""},
				{Name: "doc with missing entity", Method: "POST", Path: "/documents", Body: map[string]any{"content": "x", "attributes": []map[string]any{{"key": "customer", "entityTypeId": et, "entityId": "gone-1"}}}, Want: 400, Resp: `{"errors":[{"key":"customer","error":"Entity 'gone-1' not found"}]}`},
				{Name: "doc with string on entity", Method: "POST", Path: "/documents", Body: map[string]any{"content": "x", "attributes": []map[string]any{{"key": "customer", "stringValue": "ACME"}}}, Want: 400, Resp: `{"errors":[{"key":"customer","error":"attribute only support entity value"}]}`},
				{Name: "type with entities", Method: "DELETE", Path: "/entityTypes/" + et, Body: nil, Want: 400, Resp: ""},
				{Name: "preset LLM prompt typed", Method: "POST", Path: "/entities/LlmPrompt?namespace=PRESET", Body: map[string]any{"entity": map[string]any{"name": "summary", "attributes": []map[string]any{{"key": "LlmMaxToken", "stringValue": "many"}}}}, Want: 400, Resp: `{"errors":[{"key":"LlmMaxToken","error":"attribute only support number value"}]}`},
				{Name: "preset LLM prompt", Method: "POST", Path: "/entities/LlmPrompt?namespace=PRESET", Body: map[string]any{"entity": map[string]any{"name": "summary", "attributes": []map[string]any{{"key": "LlmMaxToken", "numberValue": 512}, {"key": "ModelId", "stringValue": "llama3"}}}}, Want: 201, Resp: ""},
				{Name: "preset types listed", Method: "GET", Path: "/entityTypes?namespace=PRESET", Body: nil, Want: 200, Resp: `~"name":"ReminderPolicy"`},
			})
			// Multiple entities, read back sorted.
			r = s.Do(http.MethodPost, "/entities/"+et+site.Query, map[string]any{"entity": map[string]any{"name": "Beta"}}, tok)
			servertest.MustStatus(t, r, http.StatusCreated)
			eid2 := quiretest.Str(t, r.JSON(t), "entityId")
			id := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"content": "x", "attributes": []map[string]any{{"key": "customer", "entities": []map[string]any{{"entityTypeId": et, "entityId": eid2}, {"entityTypeId": et, "entityId": eid}}}}})
			a := docAttr(t, s, tok, site.Query, id, "customer")
			ents, _ := a["entities"].([]any)
			if len(ents) != 2 || a["valueType"] != "ENTITY" {
				t.Fatalf("entities = %v", a)
			}
			// Reserved policies: DispositionPolicy needs RetentionPolicy.
			rp := s.Do(http.MethodPost, "/entities/RetentionPolicy?namespace=PRESET"+strings.Replace(site.Query, "?", "&", 1), map[string]any{"entity": map[string]any{"name": "7y", "attributes": []map[string]any{{"key": "RetentionPeriodInDays", "numberValue": 2555}}}}, tok)
			servertest.MustStatus(t, rp, http.StatusCreated)
			dp := s.Do(http.MethodPost, "/entities/DispositionPolicy?namespace=PRESET"+strings.Replace(site.Query, "?", "&", 1), map[string]any{"entity": map[string]any{"name": "shred"}}, tok)
			servertest.MustStatus(t, dp, http.StatusCreated)
			rpID, dpID := quiretest.Str(t, rp.JSON(t), "entityId"), quiretest.Str(t, dp.JSON(t), "entityId")
			r = s.Do(http.MethodPost, "/documents"+site.Query, map[string]any{"content": "x", "attributes": []map[string]any{{"key": "DispositionPolicy", "entityTypeId": "DispositionPolicy", "entityId": dpID, "namespace": "PRESET"}}}, tok)
			servertest.MustStatus(t, r, http.StatusBadRequest)
			servertest.MustBody(t, r, `{"errors":[{"key":"DispositionPolicy","error":"'DispositionPolicy' requires 'RetentionPolicy'"}]}`)
			servertest.AddDoc(t, s, tok, site.Query, map[string]any{"content": "x", "attributes": []map[string]any{
				{"key": "DispositionPolicy", "entityTypeId": "DispositionPolicy", "entityId": dpID, "namespace": "PRESET"},
				{"key": "RetentionPolicy", "entityTypeId": "RetentionPolicy", "entityId": rpID, "namespace": "PRESET"},
			}})
		})
	}
}

func TestSequences_ConcurrentCreationIsGapFree(t *testing.T) {
	dir := t.TempDir()
	s := quiretest.StartServer(t, dir)
	tok := s.Admin()
	for _, site := range []struct{ name, id string }{{"default", "default"}, {"finance", "finance"}} {
		t.Run(site.name, func(t *testing.T) {
			sq := "?siteId=" + site.id
			servertest.DefineAttr(t, s, tok, sq, "invoiceNo", "STRING", nil)
			servertest.RunSteps(t, s, tok, "", []servertest.Step{
				{Name: "no sequence token", Method: "POST", Path: "/sites/" + site.id + "/sequences", Body: map[string]any{"sequence": map[string]any{"attributeKey": "invoiceNo", "pattern": "INV-{YEAR}"}}, Want: 400, Resp: `~"key":"pattern"`},
				{Name: "unknown attribute", Method: "POST", Path: "/sites/" + site.id + "/sequences", Body: map[string]any{"sequence": map[string]any{"attributeKey": "nope", "pattern": "{SEQUENCE}"}}, Want: 400, Resp: `{"errors":[{"key":"attributeKey","error":"attribute 'nope' not found"}]}`},
			})
			r := s.Do(http.MethodPost, "/sites/"+site.id+"/sequences", map[string]any{"sequence": map[string]any{"attributeKey": "invoiceNo", "pattern": "INV-{YEAR}-{SEQUENCE:6}"}}, tok)
			servertest.MustStatus(t, r, http.StatusCreated)
			seq := quiretest.Str(t, r.JSON(t), "sequenceId")
			servertest.RunSteps(t, s, tok, "", []servertest.Step{
				{Name: "one per attribute", Method: "POST", Path: "/sites/" + site.id + "/sequences", Body: map[string]any{"sequence": map[string]any{"attributeKey": "invoiceNo", "pattern": "{SEQUENCE}"}}, Want: 400, Resp: ""},
			})

			// The goroutines only send what they got; this test's goroutine
			// reports every failure after all have answered (a request that
			// fails returns, it never blocks or calls FailNow from here).
			const n = 200
			type created struct{ id, err string }
			results := make(chan created, n)
			sem := make(chan struct{}, 32)
			for i := 0; i < n; i++ {
				go func(i int) {
					sem <- struct{}{}
					defer func() { <-sem }()
					r := s.Do(http.MethodPost, "/documents"+sq, map[string]any{"content": fmt.Sprint(i)}, tok)
					var b struct{ DocumentID string }
					if r.Status != http.StatusCreated || json.Unmarshal(r.Body, &b) != nil || b.DocumentID == "" {
						results <- created{err: fmt.Sprintf("document %d: status %d, body %s", i, r.Status, r.Body)}
						return
					}
					results <- created{id: b.DocumentID}
				}(i)
			}
			var ids []string
			for i := 0; i < n; i++ {
				c := <-results
				if c.err != "" {
					t.Errorf("create failed: %s", c.err)
					continue
				}
				ids = append(ids, c.id)
			}
			if t.Failed() {
				t.FailNow()
			}
			seen := map[string]bool{}
			for _, id := range ids {
				v := quiretest.Str(t, docAttr(t, s, tok, sq, id, "invoiceNo"), "stringValue")
				if seen[v] {
					t.Fatalf("number %s handed out twice", v)
				}
				if !strings.HasPrefix(v, "INV-") || len(v) != len("INV-2026-000001") {
					t.Fatalf("number %q, want INV-{YEAR}-{SEQUENCE:6}", v)
				}
				seen[v] = true
			}
			prefix := ""
			for v := range seen {
				prefix = v[:len("INV-2026-")]
			}
			for i := 1; i <= n; i++ {
				if want := fmt.Sprintf("%s%06d", prefix, i); !seen[want] {
					t.Fatalf("gap: %s not handed out (have %d numbers)", want, len(seen))
				}
			}
			// A document that brings its own number keeps it; taking a
			// number for it later is refused.
			own := servertest.AddDoc(t, s, tok, sq, map[string]any{"content": "x", "attributes": []map[string]any{{"key": "invoiceNo", "stringValue": "MANUAL-1"}}})
			r = s.Do(http.MethodPost, "/sites/"+site.id+"/sequences/"+seq+"/next", map[string]any{"documentId": own}, tok)
			servertest.MustStatus(t, r, http.StatusBadRequest)
			g := quiretest.Obj(t, s.Do(http.MethodGet, "/sites/"+site.id+"/sequences/"+seq, nil, tok).JSON(t)["sequence"])
			if g["lastNumber"] != float64(n) {
				t.Fatalf("lastNumber = %v, want %d", g["lastNumber"], n)
			}
		})
	}

	// After a restart the numbering continues where it stopped.
	s.Close()
	s2 := quiretest.StartServer(t, dir)
	tok = s2.Admin()
	id := servertest.AddDoc(t, s2, tok, "?siteId=finance", map[string]any{"content": "after restart"})
	if v := quiretest.Str(t, docAttr(t, s2, tok, "?siteId=finance", id, "invoiceNo"), "stringValue"); !strings.HasSuffix(v, "-000201") {
		t.Fatalf("after restart got %s, want number 201", v)
	}
	seq := quiretest.Str(t, quiretest.Item(t, s2.Do(http.MethodGet, "/sites/finance/sequences", nil, tok).JSON(t), "sequences", 0), "sequenceId")
	r := s2.Do(http.MethodPost, "/sites/finance/sequences/"+seq+"/next", nil, tok)
	servertest.MustStatus(t, r, http.StatusOK)
	if v := quiretest.Str(t, r.JSON(t), "value"); !strings.HasSuffix(v, "-000202") {
		t.Fatalf("next = %s", v)
	}
	servertest.MustStatus(t, s2.Do(http.MethodDelete, "/sites/finance/sequences/"+seq, nil, tok), http.StatusOK)
	servertest.MustStatus(t, s2.Do(http.MethodGet, "/sites/finance/sequences/"+seq, nil, tok), http.StatusNotFound)
}

func TestMappings_WithClassificationConditions(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			servertest.DefineAttr(t, s, tok, site.Query, "invoiceTotal", "NUMBER", nil)
			sid := "default"
			if site.Query != "" {
				sid = "finance"
			}
			r := s.Do(http.MethodPost, "/sites/"+sid+"/classifications", map[string]any{"classification": map[string]any{"name": "Invoice", "attributes": map[string]any{"optional": []map[string]any{{"attributeKey": "invoiceTotal"}}}}}, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			cid := quiretest.Str(t, r.JSON(t), "classificationId")
			mapping := map[string]any{"mapping": map[string]any{
				"name":       "invoices",
				"attributes": []map[string]any{{"attributeKey": "invoiceTotal", "sourceType": "CONTENT", "labelTexts": []string{"Total"}, "labelMatchingType": "FUZZY"}},
				"classifications": []map[string]any{{"classificationId": cid, "conditions": []map[string]any{
					{"sourceType": "CONTENT", "matchingType": "CONTAINS", "text": "INVOICE"},
				}}},
			}}
			r = s.Do(http.MethodPost, "/mappings"+site.Query, mapping, tok)
			servertest.MustStatus(t, r, http.StatusCreated)
			mid := quiretest.Str(t, r.JSON(t), "mappingId")
			servertest.RunSteps(t, s, tok, site.Query, []servertest.Step{
				{Name: "get keeps conditions", Method: "GET", Path: "/mappings/" + mid, Body: nil, Want: 200, Resp: `~"conditions":[{"sourceType":"CONTENT","matchingType":"CONTAINS","text":"INVOICE"}]`},
				{Name: "list", Method: "GET", Path: "/mappings", Body: nil, Want: 200, Resp: `~"mappingId":"` + mid + `"`},
				{Name: "no name", Method: "POST", Path: "/mappings", Body: map[string]any{"mapping": map[string]any{"attributes": []map[string]any{{"attributeKey": "invoiceTotal", "sourceType": "MANUAL", "defaultValue": "1"}}}}, Want: 400, Resp: `{"errors":[{"key":"name","error":"'name' is required"}]}`},
				{Name: "unknown attribute", Method: "POST", Path: "/mappings", Body: map[string]any{"mapping": map[string]any{"name": "m", "attributes": []map[string]any{{"attributeKey": "nope", "sourceType": "MANUAL", "defaultValue": "1"}}}}, Want: 400, Resp: `{"errors":[{"key":"attributes[0].attributeKey","error":"attribute 'nope' not found"}]}`},
				{Name: "bad condition", Method: "POST", Path: "/mappings", Body: map[string]any{"mapping": map[string]any{"name": "m", "classifications": []map[string]any{{"classificationId": cid, "conditions": []map[string]any{{"sourceType": "CONTENT", "matchingType": "FUZZY"}}}}}}, Want: 400, Resp: `~"classifications[0].conditions[0].matchingType"`},
				{Name: "unknown classification", Method: "POST", Path: "/mappings", Body: map[string]any{"mapping": map[string]any{"name": "m", "classifications": []map[string]any{{"classificationId": "nope"}}}}, Want: 400, Resp: `{"errors":[{"key":"classifications[0].classificationId","error":"Classification 'nope' not found"}]}`},
				{Name: "attribute used by mapping", Method: "DELETE", Path: "/attributes/invoiceTotal", Body: nil, Want: 400, Resp: ""},
				{Name: "classification used by mapping", Method: "DELETE", Path: "/sites/" + sid + "/classifications/" + cid, Body: nil, Want: 400, Resp: `{"errors":[{"key":"classificationId","error":"Classification '` + cid + `' is in use, cannot be deleted"}]}`},
				{Name: "set", Method: "PUT", Path: "/mappings/" + mid, Body: map[string]any{"mapping": map[string]any{"name": "renamed", "attributes": []map[string]any{{"attributeKey": "invoiceTotal", "sourceType": "MANUAL", "defaultValue": "0"}}}}, Want: 200, Resp: `{"message":"Mapping set"}`},
				{Name: "set missing", Method: "PUT", Path: "/mappings/nope", Body: map[string]any{"mapping": map[string]any{"name": "x", "attributes": []map[string]any{{"attributeKey": "invoiceTotal", "sourceType": "MANUAL", "defaultValue": "0"}}}}, Want: 404, Resp: `{"message":"Mapping 'nope' not found"}`},
				{Name: "delete", Method: "DELETE", Path: "/mappings/" + mid, Body: nil, Want: 200, Resp: `{"message":"Mapping '` + mid + `' deleted"}`},
				{Name: "gone", Method: "GET", Path: "/mappings/" + mid, Body: nil, Want: 404, Resp: ""},
			})
			// An attribute that only a mapping uses is in use.
			servertest.DefineAttr(t, s, tok, site.Query, "mappedOnly", "STRING", nil)
			servertest.RunSteps(t, s, tok, site.Query, []servertest.Step{
				{Name: "mapping of one attribute", Method: "POST", Path: "/mappings", Body: map[string]any{"mapping": map[string]any{"name": "m2", "attributes": []map[string]any{{"attributeKey": "mappedOnly", "sourceType": "MANUAL", "defaultValue": "1"}}}}, Want: 201, Resp: ""},
				{Name: "attribute only a mapping uses", Method: "DELETE", Path: "/attributes/mappedOnly", Body: nil, Want: 400, Resp: `{"errors":[{"key":"mappedOnly","error":"attribute 'mappedOnly' is in use, cannot be deleted"}]}`},
			})
		})
	}
}
