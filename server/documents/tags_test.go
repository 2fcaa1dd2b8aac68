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

func TestTags_CRUD(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			id := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"content": "x", "tags": []map[string]any{{"key": "keep", "value": "1"}}})
			base := "/documents/" + id + "/tags"
			steps := []struct {
				name, method, path string
				body               any
				want               int
				resp               string
			}{
				{"add many", "POST", base, map[string]any{"tags": []map[string]any{{"key": "a", "value": "1"}, {"key": "b", "values": []string{"x", "y"}}}}, 201, `{"message":"Created Tags."}`},
				{"add single form", "POST", base, map[string]any{"key": "c", "value": "3"}, 201, `{"message":"Created Tag 'c'."}`},
				{"patch", "PATCH", base, map[string]any{"tags": []map[string]any{{"key": "a", "value": "2"}}}, 200, `{"message":"Updated Tags"}`},
				{"get one", "GET", base + "/a", nil, 200, ""},
				{"set one", "PUT", base + "/b", map[string]any{"values": []string{"p", "q", "r"}}, 200, `{"message":"Updated tag 'b' on document '` + id + `'."}`},
				{"delete value", "DELETE", base + "/b/q", nil, 200, `{"message":"Removed Tag from document '` + id + `'."}`},
				{"delete missing value", "DELETE", base + "/b/zzz", nil, 404, `{"message":"Tag/Value combination not found."}`},
				{"delete value of a missing key", "DELETE", base + "/nokey/zzz", nil, 404, `{"message":"Tag/Value combination not found."}`},
				{"delete key", "DELETE", base + "/c", nil, 200, `{"message":"Removed 'c' from document '` + id + `'."}`},
				{"get deleted", "GET", base + "/c", nil, 404, `{"message":"Tag c not found."}`},
				{"no key", "POST", base, map[string]any{"tags": []map[string]any{{"value": "1"}}}, 400, `{"errors":[{"key":"tags","error":"'key' is required"}]}`},
				{"value and values", "POST", base, map[string]any{"tags": []map[string]any{{"key": "k", "value": "1", "values": []string{"2"}}}}, 400, `{"errors":[{"key":"tags","error":"'value' and 'values' cannot both be set"}]}`},
				{"unknown document", "POST", "/documents/5e9d4c1a-0000-4000-8000-000000000000/tags", map[string]any{"key": "k", "value": "v"}, 404, `{"message":"Document 5e9d4c1a-0000-4000-8000-000000000000 not found."}`},
			}
			for _, st := range steps {
				r := s.Do(st.method, st.path+site.Query, st.body, tok)
				if r.Status != st.want {
					t.Fatalf("%s: status %d, want %d: %s", st.name, r.Status, st.want, r.Body)
				}
				if st.resp != "" {
					servertest.MustBody(t, r, st.resp)
				}
			}
			if b := s.Do(http.MethodGet, base+"/b"+site.Query, nil, tok); !strings.Contains(string(b.Body), `"values":["p","r"]`) {
				t.Fatalf("tag b after removing q and a value it lacks: %d %s, want values p, r", b.Status, b.Body)
			}
			a := s.Do(http.MethodGet, base+"/a"+site.Query, nil, tok).JSON(t)
			if a["value"] != "2" || a["documentId"] != id || a["type"] != "USERDEFINED" || a["userId"] != "admin" {
				t.Fatalf("tag a = %v", a)
			}
			b := s.Do(http.MethodGet, base+"/b"+site.Query, nil, tok).JSON(t)
			if fmt.Sprint(b["values"]) != "[p r]" {
				t.Fatalf("tag b = %v", b)
			}
			// PUT replaces every user tag.
			servertest.MustStatus(t, s.Do(http.MethodPut, base+site.Query, map[string]any{"tags": []map[string]any{{"key": "only", "value": "1"}}}, tok), http.StatusOK)
			all := quiretest.List(t, s.Do(http.MethodGet, base+site.Query, nil, tok).JSON(t), "tags")
			if len(all) != 1 || quiretest.Obj(t, all[0])["key"] != "only" {
				t.Fatalf("after PUT tags = %v", all)
			}
		})
	}
}

func TestTags_PagingAndMassUpdate(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			var tags []map[string]any
			for i := 0; i < 15; i++ {
				tags = append(tags, map[string]any{"key": fmt.Sprintf("k%02d", i), "value": "v"})
			}
			id := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"content": "x", "tags": tags})
			p1 := s.Do(http.MethodGet, "/documents/"+id+"/tags"+site.Query, nil, tok).JSON(t)
			if len(quiretest.List(t, p1, "tags")) != 10 || p1["next"] == nil {
				t.Fatalf("first page = %v", p1)
			}
			p2 := s.Do(http.MethodGet, "/documents/"+id+"/tags"+servertest.Query(site.Query, "next="+quiretest.Str(t, p1, "next")), nil, tok).JSON(t)
			if got := quiretest.List(t, p2, "tags"); len(got) != 5 || quiretest.Obj(t, got[0])["key"] != "k10" || p2["next"] != nil {
				t.Fatalf("second page = %v", p2)
			}

			inv := []string{
				servertest.AddDoc(t, s, tok, site.Query, map[string]any{"content": "1", "tags": []map[string]any{{"key": "type", "value": "invoice-2026"}}}),
				servertest.AddDoc(t, s, tok, site.Query, map[string]any{"content": "2", "tags": []map[string]any{{"key": "type", "value": "invoice-2025"}}}),
			}
			other := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"content": "3", "tags": []map[string]any{{"key": "type", "value": "receipt"}}})
			r := s.Do(http.MethodPatch, "/documents/tags"+site.Query, map[string]any{
				"match":  map[string]any{"tag": map[string]any{"key": "type", "beginsWith": "invoice"}},
				"update": map[string]any{"tags": []map[string]any{{"key": "status", "value": "paid"}}},
			}, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			servertest.MustBody(t, r, `{"message":"received update tags request"}`)
			for _, id := range inv {
				r := s.Do(http.MethodGet, "/documents/"+id+"/tags/status"+site.Query, nil, tok)
				servertest.MustStatus(t, r, http.StatusOK)
				var tag struct{ Key, Value string }
				if err := json.Unmarshal(r.Body, &tag); err != nil || tag.Key != "status" || tag.Value != "paid" {
					t.Fatalf("tag of %s after the bulk update = %s (%v), want status=paid", id, r.Body, err)
				}
			}
			servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+other+"/tags/status"+site.Query, nil, tok), http.StatusNotFound)
		})
	}
}
