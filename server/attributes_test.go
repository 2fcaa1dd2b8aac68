package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"quire/quiretest"
)

// Step is one request of a scripted API conversation and what must come
// back: the status and, when resp is set, the exact body (or, with a
// leading "~", a substring of it).
type Step struct {
	Name, Method, Path string
	Body               any
	Want               int
	Resp               string
}

func RunSteps(t *testing.T, s *quiretest.Server, tok, site string, steps []Step) {
	t.Helper()
	for _, st := range steps {
		r := s.Do(st.Method, st.Path+Sep(st.Path)+strings.TrimPrefix(site, "?"), st.Body, tok)
		if r.Status != st.Want {
			t.Fatalf("%s: status %d, want %d: %s", st.Name, r.Status, st.Want, r.Body)
		}
		got := strings.TrimSpace(string(r.Body))
		switch {
		case st.Resp == "":
		case strings.HasPrefix(st.Resp, "~"):
			if !strings.Contains(got, st.Resp[1:]) {
				t.Fatalf("%s: body %s does not contain %s", st.Name, got, st.Resp[1:])
			}
		case got != st.Resp:
			t.Fatalf("%s: body %s\nwant %s", st.Name, got, st.Resp)
		}
	}
}

// Sep is the separator before the site query for path.
func Sep(path string) string {
	if strings.Contains(path, "?") {
		return "&"
	}
	return "?"
}

func DefineAttr(t *testing.T, s *quiretest.Server, tok, site, key, dataType string, extra map[string]any) {
	t.Helper()
	a := map[string]any{"key": key, "dataType": dataType}
	for k, v := range extra {
		a[k] = v
	}
	r := s.Do(http.MethodPost, "/attributes"+site, map[string]any{"attribute": a}, tok)
	MustStatus(t, r, http.StatusCreated)
}

func docAttr(t *testing.T, s *quiretest.Server, tok, site, id, key string) map[string]any {
	t.Helper()
	r := s.Do(http.MethodGet, "/documents/"+id+"/attributes/"+key+site, nil, tok)
	MustStatus(t, r, http.StatusOK)
	return quiretest.Obj(t, r.JSON(t)["attribute"])
}

func TestAttributes_Definitions(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range Sites {
		t.Run(site.Name, func(t *testing.T) {
			RunSteps(t, s, tok, site.Query, []Step{
				{"create", "POST", "/attributes", map[string]any{"attribute": map[string]any{"key": "category"}}, 201, `{"message":"Attribute 'category' created"}`},
				{"duplicate", "POST", "/attributes", map[string]any{"attribute": map[string]any{"key": "category"}}, 400, `{"errors":[{"key":"key","error":"attribute 'category' already exists"}]}`},
				{"reserved", "POST", "/attributes", map[string]any{"attribute": map[string]any{"key": "RetentionPolicy"}}, 400, `{"errors":[{"key":"key","error":"'RetentionPolicy' is a reserved attribute name"}]}`},
				// FormKiQ's reserved names (API-NAMES.md Appendix D), without case.
				{"reserved lower case", "POST", "/attributes", map[string]any{"attribute": map[string]any{"key": "publication"}}, 400, `{"errors":[{"key":"key","error":"'publication' is a reserved attribute name"}]}`},
				{"reserved FormKiQ name", "POST", "/attributes", map[string]any{"attribute": map[string]any{"key": "MalwareScanResult"}}, 400, `{"errors":[{"key":"key","error":"'MalwareScanResult' is a reserved attribute name"}]}`},
				{"reserved other case", "POST", "/attributes", map[string]any{"attribute": map[string]any{"key": "LLMMODELID", "dataType": "STRING"}}, 400, `{"errors":[{"key":"key","error":"'LLMMODELID' is a reserved attribute name"}]}`},
				{"reserved built-in any case", "POST", "/attributes", map[string]any{"attribute": map[string]any{"key": "checkout"}}, 400, `{"errors":[{"key":"key","error":"'checkout' is a reserved attribute name"}]}`},
				{"near a reserved name", "POST", "/attributes", map[string]any{"attribute": map[string]any{"key": "Publications"}}, 201, ""},
				{"near a reserved name deleted", "DELETE", "/attributes/Publications", nil, 200, ""},
				{"no key", "POST", "/attributes", map[string]any{"attribute": map[string]any{"dataType": "STRING"}}, 400, `{"errors":[{"key":"key","error":"'key' is required"}]}`},
				{"bad data type", "POST", "/attributes", map[string]any{"attribute": map[string]any{"key": "x", "dataType": "BLOB"}}, 400, `{"errors":[{"key":"dataType","error":"invalid 'dataType'"}]}`},
				{"bad regex", "POST", "/attributes", map[string]any{"attribute": map[string]any{"key": "x", "validationRegex": "("}}, 400, `{"errors":[{"key":"validationRegex","error":"invalid 'validationRegex'"}]}`},
				{"number", "POST", "/attributes", map[string]any{"attribute": map[string]any{"key": "amount", "dataType": "NUMBER"}}, 201, ""},
				{"with regex", "POST", "/attributes", map[string]any{"attribute": map[string]any{"key": "code", "validationRegex": "^[A-Z]{3}$"}}, 201, ""},
				{"get", "GET", "/attributes/amount", nil, 200, `{"attribute":{"dataType":"NUMBER","key":"amount","type":"STANDARD"}}`},
				{"get reserved", "GET", "/attributes/LlmMaxToken", nil, 200, `{"attribute":{"dataType":"NUMBER","key":"LlmMaxToken","type":"STANDARD"}}`},
				{"get missing", "GET", "/attributes/nope", nil, 404, `{"message":"Attribute nope not found"}`},
				{"patch regex", "PATCH", "/attributes/code", map[string]any{"attribute": map[string]any{"validationRegex": "^[0-9]+$"}}, 200, `{"message":"Attribute 'code' updated"}`},
				{"regex applies", "GET", "/attributes/code", nil, 200, `~"validationRegex":"^[0-9]+$"`},
				// FormKiQ #500: an empty regex clears it.
				{"clear regex", "PATCH", "/attributes/code", map[string]any{"attribute": map[string]any{"validationRegex": ""}}, 200, ""},
				{"regex cleared", "GET", "/attributes/code", nil, 200, `{"attribute":{"dataType":"STRING","key":"code","type":"STANDARD"}}`},
				{"patch data type", "PATCH", "/attributes/code", map[string]any{"attribute": map[string]any{"dataType": "NUMBER"}}, 400, `{"errors":[{"key":"dataType","error":"'dataType' cannot be changed"}]}`},
				{"patch missing", "PATCH", "/attributes/nope", map[string]any{"attribute": map[string]any{"type": "STANDARD"}}, 404, `{"message":"Attribute nope not found"}`},
				{"delete unused", "DELETE", "/attributes/code", nil, 200, `{"message":"Attribute 'code' deleted"}`},
				{"delete missing", "DELETE", "/attributes/code", nil, 404, `{"message":"Attribute code not found"}`},
				{"list page 1", "GET", "/attributes?limit=1", nil, 200, `~"key":"amount"`},
			})
			// Paging: two definitions, one per page.
			p1 := s.Do(http.MethodGet, "/attributes"+Query(site.Query, "limit=1"), nil, tok).JSON(t)
			next, _ := p1["next"].(string)
			if next == "" {
				t.Fatalf("no next token on a full page: %v", p1)
			}
			p2 := s.Do(http.MethodGet, "/attributes"+Query(site.Query, "limit=1&next="+next), nil, tok).JSON(t)
			if a := quiretest.List(t, p2, "attributes"); len(a) != 1 || quiretest.Obj(t, a[0])["key"] != "category" {
				t.Fatalf("page 2 = %v", p2)
			}
			// In use: a document carries it.
			AddDoc(t, s, tok, site.Query, map[string]any{"content": "x", "attributes": []map[string]any{{"key": "category", "stringValue": "a"}}})
			r := s.Do(http.MethodDelete, "/attributes/category"+site.Query, nil, tok)
			MustStatus(t, r, http.StatusBadRequest)
			MustBody(t, r, `{"errors":[{"key":"key","error":"attribute 'category' is in use, cannot be deleted"}]}`)
		})
	}
	// Definitions are per site.
	r := s.Do(http.MethodGet, "/attributes/amount?siteId=other", nil, tok)
	MustStatus(t, r, http.StatusNotFound)
}

func TestAttributes_DocumentValues(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range Sites {
		t.Run(site.Name, func(t *testing.T) {
			DefineAttr(t, s, tok, site.Query, "title", "STRING", nil)
			DefineAttr(t, s, tok, site.Query, "amount", "NUMBER", nil)
			DefineAttr(t, s, tok, site.Query, "paid", "BOOLEAN", nil)
			DefineAttr(t, s, tok, site.Query, "flag", "KEY_ONLY", nil)
			DefineAttr(t, s, tok, site.Query, "due", "DATE", nil)
			DefineAttr(t, s, tok, site.Query, "code", "STRING", map[string]any{"validationRegex": "^[A-Z]{3}$"})
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
			if r := s.Do(http.MethodGet, "/documents"+Query(site.Query, "limit=100"), nil, tok).JSON(t); strings.Contains(fmt.Sprint(r["documents"]), "bad-") {
				t.Fatalf("a refused document was stored: %v", r["documents"])
			}

			id := AddDoc(t, s, tok, site.Query, map[string]any{"content": "x", "attributes": []map[string]any{
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
			sid := AddDoc(t, s, tok, site.Query, map[string]any{"content": "x", "attributes": []map[string]any{{"key": "title", "stringValue": "2025-01-21"}}})
			if a := docAttr(t, s, tok, site.Query, sid, "title"); a["stringValue"] != "2025-01-21" || a["valueType"] != "STRING" {
				t.Fatalf("date-like string = %v", a)
			}
		})
	}
}

func TestAttributes_DocumentEndpoints(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range Sites {
		t.Run(site.Name, func(t *testing.T) {
			DefineAttr(t, s, tok, site.Query, "tag", "STRING", nil)
			DefineAttr(t, s, tok, site.Query, "n", "NUMBER", nil)
			id := AddDoc(t, s, tok, site.Query, map[string]any{"content": "x", "path": "a/orig.txt", "attributes": []map[string]any{{"key": "tag", "stringValue": "b"}}})
			base := "/documents/" + id + "/attributes"
			RunSteps(t, s, tok, site.Query, []Step{
				{"add merges values", "POST", base, map[string]any{"attributes": []map[string]any{{"key": "tag", "stringValues": []string{"a", "c"}}}}, 201, `{"message":"added attributes to documentId '` + id + `'"}`},
				{"merged", "GET", base + "/tag", nil, 200, `~"stringValues":["a","b","c"]`},
				{"single form", "POST", base, map[string]any{"attribute": map[string]any{"key": "n", "numberValue": 5}}, 201, ""},
				{"put key replaces", "PUT", base + "/tag", map[string]any{"attribute": map[string]any{"stringValue": "z"}}, 200, `{"message":"Updated attribute 'tag' on document '` + id + `'"}`},
				{"replaced", "GET", base + "/tag", nil, 200, `~"stringValue":"z"`},
				{"put key wrong type", "PUT", base + "/n", map[string]any{"attribute": map[string]any{"stringValue": "z"}}, 400, `{"errors":[{"key":"n","error":"attribute only support number value"}]}`},
				{"delete value", "DELETE", base + "/tag/z", nil, 200, ""},
				{"key gone with last value", "GET", base + "/tag", nil, 404, ""},
				{"put all", "PUT", base, map[string]any{"attributes": []map[string]any{{"key": "tag", "stringValue": "only"}}}, 200, `{"message":"set attributes on documentId '` + id + `'"}`},
				{"n removed by put all", "GET", base + "/n", nil, 404, `{"message":"attribute 'n' not found on document '` + id + `'"}`},
				{"delete key", "DELETE", base + "/tag", nil, 200, ""},
				{"delete missing key", "DELETE", base + "/tag", nil, 404, ""},
				{"empty body", "POST", base, map[string]any{}, 400, `{"errors":[{"key":"attributes","error":"'attributes' is required"}]}`},
				{"unknown document", "GET", "/documents/5e9d4c1a-0000-4000-8000-000000000000/attributes", nil, 404, `{"message":"Document 5e9d4c1a-0000-4000-8000-000000000000 not found."}`},
			})
			// FormKiQ #276: a PATCH that fails attribute validation leaves
			// the path (and everything else) as it was.
			r := s.Do(http.MethodPatch, "/documents/"+id+site.Query, map[string]any{"path": "moved/new.txt", "attributes": []map[string]any{{"key": "n", "stringValue": "NaN"}}}, tok)
			MustStatus(t, r, http.StatusBadRequest)
			if doc := s.Do(http.MethodGet, "/documents/"+id+site.Query, nil, tok).JSON(t); doc["path"] != "a/orig.txt" {
				t.Fatalf("failed PATCH moved the document to %v", doc["path"])
			}
			// PATCH overwrites the keys it names and keeps the others.
			MustStatus(t, s.Do(http.MethodPost, base+site.Query, map[string]any{"attributes": []map[string]any{{"key": "tag", "stringValue": "keep"}}}, tok), http.StatusCreated)
			MustStatus(t, s.Do(http.MethodPatch, "/documents/"+id+site.Query, map[string]any{"attributes": []map[string]any{{"key": "n", "numberValue": 9}}}, tok), http.StatusOK)
			if a := docAttr(t, s, tok, site.Query, id, "tag"); a["stringValue"] != "keep" {
				t.Fatalf("PATCH dropped another key: %v", a)
			}
			if a := docAttr(t, s, tok, site.Query, id, "n"); a["numberValue"] != float64(9) {
				t.Fatalf("PATCH value = %v", a)
			}
			// Uploads carry attributes too, validated the same way.
			up := s.Do(http.MethodPost, "/documents/upload"+site.Query, map[string]any{"path": "up.bin", "attributes": []map[string]any{{"key": "n", "numberValue": 1}}}, tok)
			MustStatus(t, up, http.StatusCreated)
			if a := docAttr(t, s, tok, site.Query, quiretest.Str(t, up.JSON(t), "documentId"), "n"); a["numberValue"] != float64(1) {
				t.Fatalf("upload attribute = %v", a)
			}
			bad := s.Do(http.MethodPost, "/documents/upload"+site.Query, map[string]any{"path": "up2.bin", "attributes": []map[string]any{{"key": "n", "booleanValue": true}}}, tok)
			MustStatus(t, bad, http.StatusBadRequest)
			// Paging over a document's attributes.
			l := s.Do(http.MethodGet, base+Query(site.Query, "limit=1"), nil, tok).JSON(t)
			if len(quiretest.List(t, l, "attributes")) != 1 || l["next"] == nil {
				t.Fatalf("page = %v", l)
			}
			l2 := s.Do(http.MethodGet, base+Query(site.Query, "limit=1&next="+quiretest.Str(t, l, "next")), nil, tok).JSON(t)
			if a := quiretest.List(t, l2, "attributes"); len(a) != 1 || quiretest.Obj(t, a[0])["key"] != "tag" {
				t.Fatalf("page 2 = %v", l2)
			}
		})
	}
}

func TestAttributes_Relationships(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range Sites {
		t.Run(site.Name, func(t *testing.T) {
			main := AddDoc(t, s, tok, site.Query, map[string]any{"content": "main"})
			att := AddDoc(t, s, tok, site.Query, map[string]any{"content": "attachment", "attributes": []map[string]any{
				{"documentId": main, "relationship": "ATTACHMENT"},
			}})
			if a := docAttr(t, s, tok, site.Query, att, "Relationships"); a["stringValue"] != "ATTACHMENT#"+main || a["valueType"] != "RELATIONSHIPS" {
				t.Fatalf("relationship = %v", a)
			}
			if a := docAttr(t, s, tok, site.Query, main, "Relationships"); a["stringValue"] != "PRIMARY#"+att {
				t.Fatalf("inverse = %v", a)
			}
			// An explicit inverse.
			MustStatus(t, s.Do(http.MethodPost, "/documents/"+main+"/attributes"+site.Query, map[string]any{"attributes": []map[string]any{
				{"documentId": att, "relationship": "ASSOCIATED", "inverseRelationship": "APPENDIX"},
			}}, tok), http.StatusCreated)
			if a := docAttr(t, s, tok, site.Query, att, "Relationships"); fmt.Sprint(a["stringValues"]) != fmt.Sprintf("[APPENDIX#%s ATTACHMENT#%s]", main, main) {
				t.Fatalf("relationships = %v", a)
			}
			r := s.Do(http.MethodPost, "/documents"+site.Query, map[string]any{"content": "x", "attributes": []map[string]any{{"documentId": main, "relationship": "COUSIN"}}}, tok)
			MustStatus(t, r, http.StatusBadRequest)
			r = s.Do(http.MethodPost, "/documents"+site.Query, map[string]any{"content": "x", "attributes": []map[string]any{{"documentId": "5e9d4c1a-0000-4000-8000-000000000000", "relationship": "PRIMARY"}}}, tok)
			MustStatus(t, r, http.StatusBadRequest)
			MustBody(t, r, `{"errors":[{"key":"documentId","error":"Document 5e9d4c1a-0000-4000-8000-000000000000 not found."}]}`)
			// Deleting one side removes the other side's entry.
			MustStatus(t, s.Do(http.MethodDelete, "/documents/"+att+site.Query, nil, tok), http.StatusOK)
			MustStatus(t, s.Do(http.MethodGet, "/documents/"+main+"/attributes/Relationships"+site.Query, nil, tok), http.StatusNotFound)
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
			DefineAttr(t, s, tok, sq, "category", "STRING", nil)
			DefineAttr(t, s, tok, sq, "dept", "STRING", nil)
			DefineAttr(t, s, tok, sq, "pages", "NUMBER", nil)
			DefineAttr(t, s, tok, sq, "extra", "STRING", nil)
			DefineAttr(t, s, tok, sq, "owner", "ENTITY", nil)
			RunSteps(t, s, tok, "", []Step{
				{"no schema yet", "GET", sbase + "/schema/document", nil, 404, `{"message":"Sites Schema not found"}`},
				{"undefined attribute", "PUT", sbase + "/schema/document", map[string]any{"name": "s", "attributes": map[string]any{"required": []map[string]any{{"attributeKey": "nope"}}}}, 400, `{"errors":[{"key":"nope","error":"attribute 'nope' not found"}]}`},
				{"no name", "PUT", sbase + "/schema/document", map[string]any{"attributes": map[string]any{"required": []map[string]any{{"attributeKey": "category"}}}}, 400, `{"errors":[{"key":"name","error":"'name' is required"}]}`},
				{"optional entity needs no default", "PUT", sbase + "/schema/document", map[string]any{"name": "e", "attributes": map[string]any{"optional": []map[string]any{{"attributeKey": "owner"}}}}, 200, ""},
				{"set", "PUT", sbase + "/schema/document", map[string]any{"name": "office", "attributes": map[string]any{
					"required":                  []map[string]any{{"attributeKey": "category", "allowedValues": []string{"invoice", "letter"}, "defaultValue": "letter"}},
					"optional":                  []map[string]any{{"attributeKey": "pages", "maxNumberOfValues": 1}, {"attributeKey": "dept", "allowedValues": []string{"hr", "it"}}},
					"compositeKeys":             []map[string]any{{"attributeKeys": []string{"category", "dept"}}},
					"allowAdditionalAttributes": false,
				}}, 200, `{"message":"Sites Schema set"}`},
				{"get", "GET", sbase + "/schema/document", nil, 200, `~"name":"office"`},
				{"allowed values", "GET", sbase + "/schema/document/attributes/category/allowedValues", nil, 200, `{"allowedValues":["invoice","letter"]}`},
				{"not allowed", "POST", "/documents" + sq, map[string]any{"content": "x", "attributes": []map[string]any{{"key": "category", "stringValue": "memo"}}}, 400, `{"errors":[{"key":"category","error":"invalid attribute value 'memo', only allowed values are invoice,letter"}]}`},
				{"additional refused", "POST", "/documents" + sq, map[string]any{"content": "x", "attributes": []map[string]any{{"key": "extra", "stringValue": "e"}}}, 400, `{"errors":[{"key":"extra","error":"attribute 'extra' is not listed in the schema"}]}`},
				{"too many values", "POST", "/documents" + sq, map[string]any{"content": "x", "attributes": []map[string]any{{"key": "pages", "numberValues": []float64{1, 2}}}}, 400, `~"attribute 'pages' allows at most 1 values"`},
				{"in use by schema", "DELETE", "/attributes/dept" + sq, nil, 400, `{"errors":[{"key":"key","error":"attribute 'dept' is in use, cannot be deleted"}]}`},
			})
			// The default fills a missing required attribute on creation.
			id := AddDoc(t, s, tok, sq, map[string]any{"content": "x"})
			if a := docAttr(t, s, tok, sq, id, "category"); a["stringValue"] != "letter" {
				t.Fatalf("default = %v", a)
			}
			// Removing a required attribute later is refused.
			r := s.Do(http.MethodDelete, "/documents/"+id+"/attributes/category"+sq, nil, tok)
			MustStatus(t, r, http.StatusBadRequest)
			MustBody(t, r, `{"errors":[{"key":"category","error":"missing required attribute 'category'"}]}`)

			// A classification adds its own required attribute.
			r = s.Do(http.MethodPost, sbase+"/classifications", map[string]any{"classification": map[string]any{"name": "Invoice", "attributes": map[string]any{
				"required": []map[string]any{{"attributeKey": "pages"}},
				"optional": []map[string]any{{"attributeKey": "extra", "allowedValues": []string{"x1", "x2"}}},
			}}}, tok)
			MustStatus(t, r, http.StatusOK)
			cid := quiretest.Str(t, r.JSON(t), "classificationId")
			RunSteps(t, s, tok, "", []Step{
				{"duplicate name", "POST", sbase + "/classifications", map[string]any{"classification": map[string]any{"name": "Invoice", "attributes": map[string]any{"required": []map[string]any{{"attributeKey": "pages"}}}}}, 400, `{"errors":[{"key":"name","error":"Classification 'Invoice' already exists"}]}`},
				{"get", "GET", sbase + "/classifications/" + cid, nil, 200, `~"name":"Invoice"`},
				{"list", "GET", sbase + "/classifications", nil, 200, `~"classificationId":"` + cid + `"`},
				{"allowed values", "GET", sbase + "/classifications/" + cid + "/attributes/extra/allowedValues", nil, 200, `{"allowedValues":["x1","x2"]}`},
				{"allowed across all", "GET", "/attributes/extra/allowedValues" + sq, nil, 200, `{"allowedValues":["x1","x2"]}`},
				{"classified without pages", "POST", "/documents" + sq, map[string]any{"content": "x", "attributes": []map[string]any{{"classificationId": cid}}}, 400, `{"errors":[{"key":"pages","error":"missing required attribute 'pages'"}]}`},
				{"missing", "GET", sbase + "/classifications/nope", nil, 404, `{"message":"Classification 'nope' not found"}`},
			})
			cd := AddDoc(t, s, tok, sq, map[string]any{"content": "x", "attributes": []map[string]any{{"classificationId": cid}, {"key": "pages", "numberValue": 3}, {"key": "extra", "stringValue": "x1"}}})
			if a := docAttr(t, s, tok, sq, cd, "Classification"); a["stringValue"] != cid || a["valueType"] != "CLASSIFICATION" {
				t.Fatalf("classification attribute = %v", a)
			}
			RunSteps(t, s, tok, "", []Step{
				{"in use", "DELETE", sbase + "/classifications/" + cid, nil, 400, ""},
				{"set", "PUT", sbase + "/classifications/" + cid, map[string]any{"classification": map[string]any{"name": "Invoice2", "attributes": map[string]any{"optional": []map[string]any{{"attributeKey": "pages"}}}}}, 200, `{"message":"Set Classification"}`},
			})
			MustStatus(t, s.Do(http.MethodDelete, "/documents/"+cd+sq, nil, tok), http.StatusOK)
			RunSteps(t, s, tok, "", []Step{
				{"delete", "DELETE", sbase + "/classifications/" + cid, nil, 200, `{"message":"Classification '` + cid + `' deleted"}`},
			})
		})
	}
	// Only GOVERN may set the schema.
	r := s.Do(http.MethodPut, "/sites/finance/schema/document", map[string]any{"name": "x"}, s.Token("joe", "finance"))
	MustStatus(t, r, http.StatusUnauthorized)
}

func TestAttributes_Entities(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range Sites {
		t.Run(site.Name, func(t *testing.T) {
			RunSteps(t, s, tok, site.Query, []Step{
				{"no namespace", "POST", "/entityTypes", map[string]any{"entityType": map[string]any{"name": "Customer"}}, 400, `{"errors":[{"key":"namespace","error":"'namespace' is required"}]}`},
				{"no name", "POST", "/entityTypes", map[string]any{"entityType": map[string]any{"namespace": "CUSTOM"}}, 400, `{"errors":[{"key":"name","error":"'name' is required"}]}`},
				{"bad preset", "POST", "/entityTypes", map[string]any{"entityType": map[string]any{"namespace": "PRESET", "name": "Customer"}}, 400, ""},
			})
			r := s.Do(http.MethodPost, "/entityTypes"+site.Query, map[string]any{"entityType": map[string]any{"namespace": "CUSTOM", "name": "Customer"}}, tok)
			MustStatus(t, r, http.StatusCreated)
			et := quiretest.Str(t, r.JSON(t), "entityTypeId")
			r = s.Do(http.MethodPost, "/entities/"+et+site.Query, map[string]any{"entity": map[string]any{"name": "ACME", "attributes": []map[string]any{{"key": "vat", "stringValue": "DE123"}}}}, tok)
			MustStatus(t, r, http.StatusCreated)
			eid := quiretest.Str(t, r.JSON(t), "entityId")
			DefineAttr(t, s, tok, site.Query, "customer", "ENTITY", nil)
			RunSteps(t, s, tok, site.Query, []Step{
				{"duplicate type", "POST", "/entityTypes", map[string]any{"entityType": map[string]any{"namespace": "CUSTOM", "name": "Customer"}}, 400, ""},
				{"get type by name", "GET", "/entityTypes/Customer?namespace=CUSTOM", nil, 200, `~"entityTypeId":"` + et + `"`},
				{"get entity", "GET", "/entities/" + et + "/" + eid, nil, 200, `~"name":"ACME"`},
				{"missing entity names the id", "GET", "/entities/" + et + "/nope-42", nil, 404, `{"message":"Entity 'nope-42' not found"}`},
				{"missing type names the id", "GET", "/entities/nope-7", nil, 404, `{"message":"EntityType 'nope-7' not found"}`},
				{"patch", "PATCH", "/entities/" + et + "/" + eid, map[string]any{"entity": map[string]any{"attributes": []map[string]any{{"key": "city", "stringValue": "Bonn"}}}}, 200, `{"message":"Entity updated"}`},
				{"patched", "GET", "/entities/" + et + "/" + eid, nil, 200, `~"key":"city"`},
				{"patch without name keeps it", "GET", "/entities/" + et + "/" + eid, nil, 200, `~"name":"ACME"`},
				{"add without name", "POST", "/entities/" + et, map[string]any{"entity": map[string]any{"attributes": []map[string]any{{"key": "vat", "stringValue": "DE9"}}}}, 400, `{"errors":[{"key":"name","error":"'name' is required"}]}`},
				{"set without name", "PUT", "/entities/" + et + "/" + eid, map[string]any{"entity": map[string]any{}}, 400, `{"errors":[{"key":"name","error":"'name' is required"}]}`},
				{"doc with entity", "POST", "/documents", map[string]any{"content": "x", "path": "ent.txt", "attributes": []map[string]any{{"key": "customer", "entityTypeId": "Customer", "entityId": eid, "namespace": "CUSTOM"}}}, 201, ""},
				{"doc with missing entity", "POST", "/documents", map[string]any{"content": "x", "attributes": []map[string]any{{"key": "customer", "entityTypeId": et, "entityId": "gone-1"}}}, 400, `{"errors":[{"key":"customer","error":"Entity 'gone-1' not found"}]}`},
				{"doc with string on entity", "POST", "/documents", map[string]any{"content": "x", "attributes": []map[string]any{{"key": "customer", "stringValue": "ACME"}}}, 400, `{"errors":[{"key":"customer","error":"attribute only support entity value"}]}`},
				{"type with entities", "DELETE", "/entityTypes/" + et, nil, 400, ""},
				{"preset LLM prompt typed", "POST", "/entities/LlmPrompt?namespace=PRESET", map[string]any{"entity": map[string]any{"name": "summary", "attributes": []map[string]any{{"key": "LlmMaxToken", "stringValue": "many"}}}}, 400, `{"errors":[{"key":"LlmMaxToken","error":"attribute only support number value"}]}`},
				{"preset LLM prompt", "POST", "/entities/LlmPrompt?namespace=PRESET", map[string]any{"entity": map[string]any{"name": "summary", "attributes": []map[string]any{{"key": "LlmMaxToken", "numberValue": 512}, {"key": "ModelId", "stringValue": "llama3"}}}}, 201, ""},
				{"preset types listed", "GET", "/entityTypes?namespace=PRESET", nil, 200, `~"name":"ReminderPolicy"`},
			})
			// Multiple entities, read back sorted.
			r = s.Do(http.MethodPost, "/entities/"+et+site.Query, map[string]any{"entity": map[string]any{"name": "Beta"}}, tok)
			MustStatus(t, r, http.StatusCreated)
			eid2 := quiretest.Str(t, r.JSON(t), "entityId")
			id := AddDoc(t, s, tok, site.Query, map[string]any{"content": "x", "attributes": []map[string]any{{"key": "customer", "entities": []map[string]any{{"entityTypeId": et, "entityId": eid2}, {"entityTypeId": et, "entityId": eid}}}}})
			a := docAttr(t, s, tok, site.Query, id, "customer")
			ents, _ := a["entities"].([]any)
			if len(ents) != 2 || a["valueType"] != "ENTITY" {
				t.Fatalf("entities = %v", a)
			}
			// Reserved policies: DispositionPolicy needs RetentionPolicy.
			rp := s.Do(http.MethodPost, "/entities/RetentionPolicy?namespace=PRESET"+strings.Replace(site.Query, "?", "&", 1), map[string]any{"entity": map[string]any{"name": "7y", "attributes": []map[string]any{{"key": "RetentionPeriodInDays", "numberValue": 2555}}}}, tok)
			MustStatus(t, rp, http.StatusCreated)
			dp := s.Do(http.MethodPost, "/entities/DispositionPolicy?namespace=PRESET"+strings.Replace(site.Query, "?", "&", 1), map[string]any{"entity": map[string]any{"name": "shred"}}, tok)
			MustStatus(t, dp, http.StatusCreated)
			rpID, dpID := quiretest.Str(t, rp.JSON(t), "entityId"), quiretest.Str(t, dp.JSON(t), "entityId")
			r = s.Do(http.MethodPost, "/documents"+site.Query, map[string]any{"content": "x", "attributes": []map[string]any{{"key": "DispositionPolicy", "entityTypeId": "DispositionPolicy", "entityId": dpID, "namespace": "PRESET"}}}, tok)
			MustStatus(t, r, http.StatusBadRequest)
			MustBody(t, r, `{"errors":[{"key":"DispositionPolicy","error":"'DispositionPolicy' requires 'RetentionPolicy'"}]}`)
			AddDoc(t, s, tok, site.Query, map[string]any{"content": "x", "attributes": []map[string]any{
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
			DefineAttr(t, s, tok, sq, "invoiceNo", "STRING", nil)
			RunSteps(t, s, tok, "", []Step{
				{"no sequence token", "POST", "/sites/" + site.id + "/sequences", map[string]any{"sequence": map[string]any{"attributeKey": "invoiceNo", "pattern": "INV-{YEAR}"}}, 400, `~"key":"pattern"`},
				{"unknown attribute", "POST", "/sites/" + site.id + "/sequences", map[string]any{"sequence": map[string]any{"attributeKey": "nope", "pattern": "{SEQUENCE}"}}, 400, `{"errors":[{"key":"attributeKey","error":"attribute 'nope' not found"}]}`},
			})
			r := s.Do(http.MethodPost, "/sites/"+site.id+"/sequences", map[string]any{"sequence": map[string]any{"attributeKey": "invoiceNo", "pattern": "INV-{YEAR}-{SEQUENCE:6}"}}, tok)
			MustStatus(t, r, http.StatusCreated)
			seq := quiretest.Str(t, r.JSON(t), "sequenceId")
			RunSteps(t, s, tok, "", []Step{
				{"one per attribute", "POST", "/sites/" + site.id + "/sequences", map[string]any{"sequence": map[string]any{"attributeKey": "invoiceNo", "pattern": "{SEQUENCE}"}}, 400, ""},
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
			own := AddDoc(t, s, tok, sq, map[string]any{"content": "x", "attributes": []map[string]any{{"key": "invoiceNo", "stringValue": "MANUAL-1"}}})
			r = s.Do(http.MethodPost, "/sites/"+site.id+"/sequences/"+seq+"/next", map[string]any{"documentId": own}, tok)
			MustStatus(t, r, http.StatusBadRequest)
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
	id := AddDoc(t, s2, tok, "?siteId=finance", map[string]any{"content": "after restart"})
	if v := quiretest.Str(t, docAttr(t, s2, tok, "?siteId=finance", id, "invoiceNo"), "stringValue"); !strings.HasSuffix(v, "-000201") {
		t.Fatalf("after restart got %s, want number 201", v)
	}
	seq := quiretest.Str(t, quiretest.Item(t, s2.Do(http.MethodGet, "/sites/finance/sequences", nil, tok).JSON(t), "sequences", 0), "sequenceId")
	r := s2.Do(http.MethodPost, "/sites/finance/sequences/"+seq+"/next", nil, tok)
	MustStatus(t, r, http.StatusOK)
	if v := quiretest.Str(t, r.JSON(t), "value"); !strings.HasSuffix(v, "-000202") {
		t.Fatalf("next = %s", v)
	}
	MustStatus(t, s2.Do(http.MethodDelete, "/sites/finance/sequences/"+seq, nil, tok), http.StatusOK)
	MustStatus(t, s2.Do(http.MethodGet, "/sites/finance/sequences/"+seq, nil, tok), http.StatusNotFound)
}

func TestMappings_WithClassificationConditions(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range Sites {
		t.Run(site.Name, func(t *testing.T) {
			DefineAttr(t, s, tok, site.Query, "invoiceTotal", "NUMBER", nil)
			sid := "default"
			if site.Query != "" {
				sid = "finance"
			}
			r := s.Do(http.MethodPost, "/sites/"+sid+"/classifications", map[string]any{"classification": map[string]any{"name": "Invoice", "attributes": map[string]any{"optional": []map[string]any{{"attributeKey": "invoiceTotal"}}}}}, tok)
			MustStatus(t, r, http.StatusOK)
			cid := quiretest.Str(t, r.JSON(t), "classificationId")
			mapping := map[string]any{"mapping": map[string]any{
				"name":       "invoices",
				"attributes": []map[string]any{{"attributeKey": "invoiceTotal", "sourceType": "CONTENT", "labelTexts": []string{"Total"}, "labelMatchingType": "FUZZY"}},
				"classifications": []map[string]any{{"classificationId": cid, "conditions": []map[string]any{
					{"sourceType": "CONTENT", "matchingType": "CONTAINS", "text": "INVOICE"},
				}}},
			}}
			r = s.Do(http.MethodPost, "/mappings"+site.Query, mapping, tok)
			MustStatus(t, r, http.StatusCreated)
			mid := quiretest.Str(t, r.JSON(t), "mappingId")
			RunSteps(t, s, tok, site.Query, []Step{
				{"get keeps conditions", "GET", "/mappings/" + mid, nil, 200, `~"conditions":[{"sourceType":"CONTENT","matchingType":"CONTAINS","text":"INVOICE"}]`},
				{"list", "GET", "/mappings", nil, 200, `~"mappingId":"` + mid + `"`},
				{"no name", "POST", "/mappings", map[string]any{"mapping": map[string]any{"attributes": []map[string]any{{"attributeKey": "invoiceTotal", "sourceType": "MANUAL", "defaultValue": "1"}}}}, 400, `{"errors":[{"key":"name","error":"'name' is required"}]}`},
				{"unknown attribute", "POST", "/mappings", map[string]any{"mapping": map[string]any{"name": "m", "attributes": []map[string]any{{"attributeKey": "nope", "sourceType": "MANUAL", "defaultValue": "1"}}}}, 400, `{"errors":[{"key":"attributes[0].attributeKey","error":"attribute 'nope' not found"}]}`},
				{"bad condition", "POST", "/mappings", map[string]any{"mapping": map[string]any{"name": "m", "classifications": []map[string]any{{"classificationId": cid, "conditions": []map[string]any{{"sourceType": "CONTENT", "matchingType": "FUZZY"}}}}}}, 400, `~"classifications[0].conditions[0].matchingType"`},
				{"unknown classification", "POST", "/mappings", map[string]any{"mapping": map[string]any{"name": "m", "classifications": []map[string]any{{"classificationId": "nope"}}}}, 400, `{"errors":[{"key":"classifications[0].classificationId","error":"Classification 'nope' not found"}]}`},
				{"attribute used by mapping", "DELETE", "/attributes/invoiceTotal", nil, 400, ""},
				{"classification used by mapping", "DELETE", "/sites/" + sid + "/classifications/" + cid, nil, 400, `{"errors":[{"key":"classificationId","error":"Classification '` + cid + `' is in use, cannot be deleted"}]}`},
				{"set", "PUT", "/mappings/" + mid, map[string]any{"mapping": map[string]any{"name": "renamed", "attributes": []map[string]any{{"attributeKey": "invoiceTotal", "sourceType": "MANUAL", "defaultValue": "0"}}}}, 200, `{"message":"Mapping set"}`},
				{"set missing", "PUT", "/mappings/nope", map[string]any{"mapping": map[string]any{"name": "x", "attributes": []map[string]any{{"attributeKey": "invoiceTotal", "sourceType": "MANUAL", "defaultValue": "0"}}}}, 404, `{"message":"Mapping 'nope' not found"}`},
				{"delete", "DELETE", "/mappings/" + mid, nil, 200, `{"message":"Mapping '` + mid + `' deleted"}`},
				{"gone", "GET", "/mappings/" + mid, nil, 404, ""},
			})
			// An attribute that only a mapping uses is in use.
			DefineAttr(t, s, tok, site.Query, "mappedOnly", "STRING", nil)
			RunSteps(t, s, tok, site.Query, []Step{
				{"mapping of one attribute", "POST", "/mappings", map[string]any{"mapping": map[string]any{"name": "m2", "attributes": []map[string]any{{"attributeKey": "mappedOnly", "sourceType": "MANUAL", "defaultValue": "1"}}}}, 201, ""},
				{"attribute only a mapping uses", "DELETE", "/attributes/mappedOnly", nil, 400, `{"errors":[{"key":"key","error":"attribute 'mappedOnly' is in use, cannot be deleted"}]}`},
			})
		})
	}
}
