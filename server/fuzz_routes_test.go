package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"

	"quire/quiretest"
)

// FuzzRouteBodies sends arbitrary bodies to every POST, PUT and PATCH
// route of the route table (a route added later is fuzzed without anyone
// listing it): the answer is never a 5xx, and an error is FormKiQ's
// {"message"} or {"errors":[...]}.
func FuzzRouteBodies(f *testing.F) {
	s := quiretest.NewServer(f)
	// Actions added by fuzzed bodies stay queued: nothing calls out (a
	// WEBHOOK URL, an LLM or SMTP host from a fuzzed body).
	if err := s.Node.Pipeline.Close(context.Background()); err != nil {
		f.Fatal(err)
	}
	tok := s.Admin()
	r := s.Do(http.MethodPost, "/documents", map[string]any{"content": "fuzz", "path": "fuzz.txt"}, tok)
	var created struct{ DocumentID string }
	if json.Unmarshal(r.Body, &created) != nil || created.DocumentID == "" {
		f.Fatalf("create: %d %s", r.Status, r.Body)
	}
	params := map[string]string{"documentId": created.DocumentID, "siteId": "default", "indexType": "folder"}
	var routes []string // "METHOD /path"
	for _, rt := range s.Node.Server.App().GetRoutes(true) {
		if rt.Method != http.MethodPost && rt.Method != http.MethodPut && rt.Method != http.MethodPatch {
			continue
		}
		segs := strings.Split(rt.Path, "/")
		for i, sg := range segs {
			if strings.HasPrefix(sg, ":") {
				if v, ok := params[sg[1:]]; ok {
					segs[i] = v
				} else {
					segs[i] = "x"
				}
			}
		}
		routes = append(routes, rt.Method+" "+strings.Join(segs, "/"))
	}
	sort.Strings(routes)
	if len(routes) < 40 {
		f.Fatalf("only %d body routes in the route table", len(routes))
	}
	bodies := []string{`{}`, `null`, `[]`, `{"path":"a//b","content":"x","query":{"text":"x","page":922337203685477582}}`, "{\"path\":\"bi\xff\"}", `{"from":9223372036854775000,"size":9223372036854775000}`,
		`{"path":"a/b.txt","content":"c","tags":[{"key":"k","values":["v",""]}],"attributes":[{"key":"a","numberValues":[-0,1e308]}],"actions":[{"type":"OCR","parameters":{"ocrNumberOfPages":"-1"}}],"metadata":[{"key":"m","value":"v"}]}`,
		`{"query":{"match_phrase":{"content":"x\"}},"attribute":{"key":"k","dataType":"NUMBER"},"permissions":[{"roleName":"r","permissions":["READ"]}]}`}
	for i := range routes {
		for _, b := range bodies {
			f.Add(uint16(i), []byte(b))
		}
	}
	f.Fuzz(func(t *testing.T, route uint16, body []byte) {
		rt := routes[int(route)%len(routes)]
		method, path, _ := strings.Cut(rt, " ")
		// Not s.Do: quiretest reports to the fuzz target's f, which a
		// fuzz function must not use.
		req, err := http.NewRequest(method, s.URL+path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", tok)
		req.Header.Set("Content-Type", "application/json")
		resp, err := s.Client.Do(req)
		if err != nil {
			t.Fatalf("%s with %q: %v", rt, body, err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s with %q: read: %v", rt, body, err)
		}
		if resp.StatusCode >= 500 && !(resp.StatusCode == http.StatusNotImplemented && refusedBody(got)) {
			t.Fatalf("%s with %q: %d %s", rt, body, resp.StatusCode, got)
		}
		if resp.StatusCode < 400 {
			return
		}
		var e struct {
			Message *string           `json:"message"`
			Errors  []json.RawMessage `json:"errors"`
		}
		if err := json.Unmarshal(got, &e); err != nil || (e.Message == nil) == (len(e.Errors) == 0) {
			t.Fatalf("%s with %q: %d answer not in FormKiQ's error shape: %s", rt, body, resp.StatusCode, got)
		}
	})
}
