package server_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// TestPaging_HostileNumbers sends the paging numbers that used to
// overflow an offset or ask Bleve for an absurd allocation: each gets a
// 200 (clamped) or a 400 in FormKiQ's shape, and the server keeps serving.
func TestPaging_HostileNumbers(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	id := servertest.AddDoc(t, s, tok, "", map[string]any{"content": "paging words", "path": "p.txt", "contentType": "text/plain",
		"tags": []map[string]any{{"key": "a", "value": "1"}, {"key": "b", "value": "2"}, {"key": "c", "value": "3"}},
		"actions": []map[string]any{
			{"type": "CHECKSUM", "parameters": map[string]any{"checksumType": "SHA256"}},
			{"type": "CHECKSUM", "parameters": map[string]any{"checksumType": "SHA1"}},
			{"type": "CHECKSUM", "parameters": map[string]any{"checksumType": "SHA256"}},
		}})
	// The text is indexed once the actions are done.
	for i := 0; ; i++ {
		r := s.Do(http.MethodPost, "/searchFulltext", map[string]any{"query": map[string]any{"text": "paging"}}, tok)
		if strings.Contains(string(r.Body), id) {
			break
		}
		if i == 500 {
			t.Fatalf("document not found by text after 5s: %s", r.Body)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// next tokens that make the listings start past their first item.
	nextOf := func(path string) string {
		t.Helper()
		r := s.Do(http.MethodGet, path+"?limit=1", nil, tok)
		servertest.MustStatus(t, r, http.StatusOK)
		n, _ := r.JSON(t)["next"].(string)
		if n == "" {
			t.Fatalf("%s?limit=1 gave no next: %s", path, r.Body)
		}
		return url.QueryEscape(n)
	}
	tagsNext := nextOf("/documents/" + id + "/tags")
	actsNext := nextOf("/documents/" + id + "/actions")
	const maxInt = "9223372036854775807"
	text := func(extra map[string]any) map[string]any {
		q := map[string]any{"text": "paging"}
		for k, v := range extra {
			q[k] = v
		}
		return map[string]any{"query": q}
	}
	qs := map[string]any{"query_string": map[string]any{"query": "paging"}}
	cases := []struct {
		name, method, path string
		body               any
		status             int
		has                string // a fragment the body must hold
	}{
		{"searchFulltext huge page", "POST", "/searchFulltext", text(map[string]any{"page": 922337203685477582}), 400, `"key":"page"`},
		{"searchFulltext max page", "POST", "/searchFulltext?limit=" + maxInt, text(map[string]any{"page": 11}), 400, `"key":"page"`},
		{"searchFulltext negative page", "POST", "/searchFulltext", text(map[string]any{"page": -9}), 200, `"totalCount":1`},
		{"searchFulltext page in window", "POST", "/searchFulltext?limit=10", text(map[string]any{"page": 1000}), 200, `"documents":[]`},
		{"queryFulltext huge from", "POST", "/queryFulltext", map[string]any{"query": qs, "from": 9223372036854775000, "size": 10}, 400, `Result window is too large`},
		{"queryFulltext huge size", "POST", "/queryFulltext", map[string]any{"query": qs, "size": 9223372036854775000}, 200, `"hits"`},
		{"queryFulltext window edge", "POST", "/queryFulltext", map[string]any{"query": qs, "from": 9990, "size": 10}, 200, `"hits"`},
		{"queryFulltext past window", "POST", "/queryFulltext", map[string]any{"query": qs, "from": 9991, "size": 10}, 400, `"key":"from"`},
		{"queryFulltext negative", "POST", "/queryFulltext", map[string]any{"query": qs, "from": -5, "size": -5}, 200, `"hits"`},
		{"search huge next", "POST", "/search?next=" + maxInt, text(nil), 400, `Invalid Next token`},
		{"search negative next", "POST", "/search?next=-1", text(nil), 400, `Invalid Next token`},
		{"search next past window", "POST", "/search?next=10001", text(nil), 400, `Invalid Next token`},
		{"search next at window", "POST", "/search?next=10000", text(nil), 200, `"documents":[]`},
		{"tags max limit after next", "GET", "/documents/" + id + "/tags?limit=" + maxInt + "&next=" + tagsNext, nil, 200, `"key":"c"`},
		{"actions max limit after next", "GET", "/documents/" + id + "/actions?limit=" + maxInt + "&next=" + actsNext, nil, 200, `"SHA256"`},
		{"documents limit beyond int", "GET", "/documents?limit=99999999999999999999", nil, 200, id},
		{"documents limit text", "GET", "/documents?limit=ten", nil, 400, `"key":"limit"`},
		{"documents negative limit", "GET", "/documents?limit=-99999999999999999999", nil, 400, `"key":"limit"`},
		{"url huge duration", "GET", "/documents/" + id + "/url?duration=" + maxInt, nil, 400, `"key":"duration"`},
		{"url duration past a week", "GET", "/documents/" + id + "/url?duration=169", nil, 400, `"key":"duration"`},
		{"url duration a week", "GET", "/documents/" + id + "/url?duration=168", nil, 200, `"url"`},
		{"upload huge duration", "GET", "/documents/upload?duration=" + maxInt, nil, 400, `"key":"duration"`},
		{"upload duration zero", "GET", "/documents/" + id + "/upload?duration=0", nil, 400, `"key":"duration"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.Do(c.method, c.path, c.body, tok)
			servertest.MustStatus(t, r, c.status)
			if !strings.Contains(string(r.Body), c.has) {
				t.Fatalf("body %s lacks %s", r.Body, c.has)
			}
		})
	}
	servertest.MustStatus(t, s.Do(http.MethodGet, "/healthz", nil, ""), http.StatusOK)
}

// TestPaging_KeyListings walks every listing paged by key with limit=1
// and checks that the pages, joined, are the one-page listing in the same
// order, that only the last page lacks a `next` token, and that a token of
// one listing is refused by another.
func TestPaging_KeyListings(t *testing.T) {
	s := servertest.PipelineServer(t)
	tok := s.Admin()
	created := func(path string, body any, idField string) string {
		t.Helper()
		r := s.Do(http.MethodPost, path, body, tok)
		if r.Status != http.StatusCreated && r.Status != http.StatusOK {
			t.Fatalf("POST %s: status %d: %s", path, r.Status, r.Body)
		}
		if idField == "" {
			return ""
		}
		return quiretest.Str(t, r.JSON(t), idField)
	}
	keys := []string{"pa", "pb", "pc"}
	var docAttrs []map[string]any
	for _, k := range keys {
		servertest.DefineAttr(t, s, tok, "", k, "STRING", nil)
		docAttrs = append(docAttrs, map[string]any{"key": k, "stringValue": "v"})
	}
	doc := servertest.AddDoc(t, s, tok, "", map[string]any{"content": "x", "path": "paged.txt", "attributes": docAttrs})
	var types []string
	for _, n := range []string{"T1", "T2", "T3"} {
		types = append(types, created("/entityTypes", map[string]any{"entityType": map[string]any{"namespace": "CUSTOM", "name": n}}, "entityTypeId"))
	}
	for _, n := range []string{"E1", "E2", "E3"} {
		created("/entities/"+types[0], map[string]any{"entity": map[string]any{"name": n}}, "entityId")
	}
	for _, n := range []string{"m1", "m2", "m3"} {
		created("/mappings", map[string]any{"mapping": map[string]any{"name": n,
			"attributes": []map[string]any{{"attributeKey": "pa", "sourceType": "MANUAL", "defaultValue": "1"}}}}, "mappingId")
	}
	for _, n := range []string{"C1", "C2", "C3"} {
		created("/sites/default/classifications", map[string]any{"classification": map[string]any{"name": n,
			"attributes": map[string]any{"optional": []map[string]any{{"attributeKey": "pa"}}}}}, "classificationId")
	}
	for _, n := range []string{"u1", "u2", "u3"} {
		created("/users", map[string]any{"user": map[string]any{"username": n}, "temporaryPassword": "temp-password"}, "")
		created("/groups", map[string]any{"group": map[string]any{"name": "g" + n}}, "")
		created("/groups/gu1/users", map[string]any{"user": map[string]any{"username": n}}, "")
	}
	for _, n := range []string{"w1", "w2", "w3"} {
		created("/webhooks", map[string]any{"name": n}, "webhookId")
	}
	var queues []string
	for _, n := range []string{"Q1", "Q2", "Q3"} {
		queues = append(queues, created("/queues", map[string]any{"name": n}, "queueId"))
	}
	for i := range 3 {
		servertest.AddDoc(t, s, tok, "", map[string]any{"content": "q", "path": fmt.Sprintf("queued/%d.txt", i),
			"actions": []map[string]any{{"type": "QUEUE", "queueId": queues[0]}}})
	}
	queueDocs := "/queues/" + queues[0] + "/documents"
	for deadline := time.Now().Add(30 * time.Second); ; {
		r := s.Do(http.MethodGet, queueDocs+"?limit=100", nil, tok)
		servertest.MustStatus(t, r, http.StatusOK)
		if len(quiretest.List(t, r.JSON(t), "documents")) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue documents never reached 3: %s", r.Body)
		}
		time.Sleep(20 * time.Millisecond)
	}

	var review string
	for range 3 {
		review = created("/documents/"+doc+"/reviews", map[string]any{"review": map[string]any{"reviewCategory": "c", "requiredDecisions": 3}}, "reviewId")
	}
	for range 3 {
		created("/documents/"+doc+"/reviews/"+review+"/decisions", map[string]any{"decision": map[string]any{"type": "COMMENT"}}, "decisionId")
	}

	listings := []struct{ path, field, id string }{
		{"/documents/" + doc + "/reviews", "reviews", "reviewId"},
		{"/documents/" + doc + "/reviews/" + review + "/decisions", "decisions", "decisionId"},
		{"/attributes", "attributes", "key"},
		{"/documents/" + doc + "/attributes", "attributes", "key"},
		{"/entityTypes", "entityTypes", "entityTypeId"},
		{"/entities/" + types[0], "entities", "entityId"},
		{"/mappings", "mappings", "mappingId"},
		{"/sites/default/classifications", "classifications", "classificationId"},
		{"/queues", "queues", "queueId"},
		{"/webhooks", "webhooks", "webhookId"},
		{"/users", "users", "username"},
		{"/groups", "groups", "name"},
		{"/groups/gu1/users", "users", "username"},
		{queueDocs, "documents", "documentId"},
	}
	ids := func(t *testing.T, page map[string]any, field, id string) []string {
		var out []string
		for _, it := range quiretest.List(t, page, field) {
			out = append(out, quiretest.Str(t, quiretest.Obj(t, it), id))
		}
		return out
	}
	var tokens []string
	for _, l := range listings {
		t.Run(l.path, func(t *testing.T) {
			r := s.Do(http.MethodGet, l.path+"?limit=1000", nil, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			all := r.JSON(t)
			if _, ok := all["next"]; ok {
				t.Fatalf("one page of all has a next token: %s", r.Body)
			}
			want := ids(t, all, l.field, l.id)
			if len(want) < 3 {
				t.Fatalf("want at least 3 items, got %v", want)
			}
			var got []string
			next := ""
			for i := 0; ; i++ {
				if i > len(want) {
					t.Fatalf("more pages than items: %v", got)
				}
				path := l.path + "?limit=1"
				if next != "" {
					path += "&next=" + next
				}
				r := s.Do(http.MethodGet, path, nil, tok)
				servertest.MustStatus(t, r, http.StatusOK)
				page := r.JSON(t)
				items := ids(t, page, l.field, l.id)
				if len(items) != 1 {
					t.Fatalf("page %d has %d items: %s", i, len(items), r.Body)
				}
				got = append(got, items...)
				if _, ok := page["next"]; !ok {
					break
				}
				next = quiretest.Str(t, page, "next")
				if i == 0 {
					tokens = append(tokens, next)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("pages joined %v, want %v", got, want)
			}
		})
	}
	if len(tokens) != len(listings) {
		t.Fatalf("%d first-page tokens for %d listings", len(tokens), len(listings))
	}
	for i, l := range listings {
		other := tokens[(i+1)%len(tokens)]
		r := s.Do(http.MethodGet, l.path+"?next="+other, nil, tok)
		servertest.MustStatus(t, r, http.StatusBadRequest)
		servertest.MustBody(t, r, `{"message":"Invalid Next token"}`)
	}
}
