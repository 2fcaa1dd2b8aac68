package server_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"quire/quiretest"
)

// versionsOf lists GET /versions (extra: more query parameters) and
// returns the entries, newest first.
func versionsOf(t *testing.T, s *quiretest.Server, tok, site, doc, extra string) []map[string]any {
	t.Helper()
	r := s.Do(http.MethodGet, "/documents/"+doc+"/versions"+q(site, extra), nil, tok)
	mustStatus(t, r, http.StatusOK)
	b := r.JSON(t)
	var out []map[string]any
	for i := range list(t, b, "documents") {
		out = append(out, item(t, b, "documents", i))
	}
	return out
}

// uploadNew sends content to the document's upload URL.
func uploadNew(t *testing.T, s *quiretest.Server, tok, site, doc, extra, content string) {
	t.Helper()
	r := s.Do(http.MethodGet, "/documents/"+doc+"/upload"+q(site, extra), nil, tok)
	mustStatus(t, r, http.StatusOK)
	mustStatus(t, put(s, str(t, r.JSON(t), "url"), content), http.StatusOK)
}

// TestVersions_ListReadRestoreDelete: two uploads and a PATCH give three
// states, listed newest first; versionKey reads an earlier state's bytes on
// /content and /url; PUT sets the document back (content and path) and
// makes a version; DELETE removes one; unknown keys are 404, malformed
// ones 400, and neither changes anything.
func TestVersions_ListReadRestoreDelete(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range sites {
		t.Run(site.name, func(t *testing.T) {
			doc := addDoc(t, s, tok, site.query, map[string]any{"path": "v/one.txt", "content": "version one", "contentType": "text/plain"})
			if v := versionsOf(t, s, tok, site.query, doc, ""); len(v) != 1 || str(t, v[0], "documentId") != doc {
				t.Fatalf("versions of a new document = %v", v)
			}
			uploadNew(t, s, tok, site.query, doc, "", "version two")
			mustStatus(t, s.Do(http.MethodPatch, "/documents/"+doc+site.query, map[string]any{"path": "v/moved.txt"}, tok), http.StatusOK)
			// Tags alone make no version.
			mustStatus(t, s.Do(http.MethodPost, "/documents/"+doc+"/tags"+site.query, map[string]any{"key": "k", "value": "v"}, tok), http.StatusCreated)

			vs := versionsOf(t, s, tok, site.query, doc, "")
			if len(vs) != 3 {
				t.Fatalf("versions = %d, want 3: %v", len(vs), vs)
			}
			wantPaths := []string{"v/moved.txt", "v/one.txt", "v/one.txt"}
			for i, v := range vs {
				if str(t, v, "path") != wantPaths[i] || str(t, v, "userId") != "admin" || str(t, v, "insertedDate") == "" {
					t.Fatalf("version %d = %v", i, v)
				}
				if i > 0 && str(t, vs[i-1], "versionKey") <= str(t, v, "versionKey") {
					t.Fatalf("not newest first: %v", vs)
				}
			}
			if num(t, vs[2], "contentLength") != float64(len("version one")) || str(t, vs[2], "contentType") != "text/plain" {
				t.Fatalf("oldest = %v", vs[2])
			}
			k1 := str(t, vs[2], "versionKey")
			if got := contentOf(t, s, tok, site.query, doc, "versionKey="+k1); got != "version one" {
				t.Fatalf("content of v1 = %q", got)
			}
			if got := contentOf(t, s, tok, site.query, doc, ""); got != "version two" {
				t.Fatalf("current content = %q", got)
			}
			if got := artifactDownload(t, s, tok, site.query, doc, "versionKey="+k1); string(got) != "version one" {
				t.Fatalf("download of v1 = %q", got)
			}
			// The version's URL cannot be turned into another's.
			u := str(t, s.Do(http.MethodGet, "/documents/"+doc+"/url"+q(site.query, "versionKey="+k1), nil, tok).JSON(t), "url")
			mustStatus(t, s.Do(http.MethodGet, strings.Replace(u, "versionKey="+k1, "versionKey="+str(t, vs[1], "versionKey"), 1), nil, ""), http.StatusForbidden)

			// Paging.
			r := s.Do(http.MethodGet, "/documents/"+doc+"/versions"+q(site.query, "limit=2"), nil, tok)
			mustStatus(t, r, http.StatusOK)
			next := str(t, r.JSON(t), "next")
			if rest := versionsOf(t, s, tok, site.query, doc, "limit=2&next="+next); len(rest) != 1 || str(t, rest[0], "versionKey") != k1 {
				t.Fatalf("second page = %v", rest)
			}

			// Bad input and unknown keys change nothing.
			unknown := "00000000000000000001"
			for _, tt := range []struct {
				name, method, path string
				body               any
				want               int
				wantBody           string
			}{
				{"content of unknown version", "GET", "/documents/" + doc + "/content" + q(site.query, "versionKey="+unknown), nil, 404, `{"message":"Version ` + unknown + ` not found."}`},
				{"url of malformed version", "GET", "/documents/" + doc + "/url" + q(site.query, "versionKey=v1"), nil, 400, `{"errors":[{"key":"versionKey","error":"invalid versionKey 'v1'"}]}`},
				{"versionKey elsewhere", "GET", "/documents/" + doc + "/tags" + q(site.query, "versionKey="+k1), nil, 400, `{"errors":[{"key":"versionKey","error":"'versionKey' is not supported on this route"}]}`},
				{"set without key", "PUT", "/documents/" + doc + "/versions" + site.query, map[string]any{}, 400, `{"errors":[{"key":"versionKey","error":"'versionKey' is required"}]}`},
				{"set unknown", "PUT", "/documents/" + doc + "/versions" + site.query, map[string]any{"versionKey": unknown}, 404, `{"message":"Version ` + unknown + ` not found."}`},
				{"delete unknown", "DELETE", "/documents/" + doc + "/versions/" + unknown + site.query, nil, 404, `{"message":"Version ` + unknown + ` not found."}`},
				{"delete malformed", "DELETE", "/documents/" + doc + "/versions/zz" + site.query, nil, 400, `{"errors":[{"key":"versionKey","error":"invalid versionKey 'zz'"}]}`},
				{"delete current", "DELETE", "/documents/" + doc + "/versions/" + str(t, vs[0], "versionKey") + site.query, nil, 400, `{"errors":[{"key":"versionKey","error":"the current version cannot be deleted"}]}`},
				{"bad next token", "GET", "/documents/" + doc + "/versions" + q(site.query, "next=zz"), nil, 400, `{"message":"Invalid Next token"}`},
				{"versions of unknown document", "GET", "/documents/7c0b1f7e-1111-4e2e-9c3a-000000000000/versions" + site.query, nil, 404, `{"message":"Document 7c0b1f7e-1111-4e2e-9c3a-000000000000 not found."}`},
			} {
				r := s.Do(tt.method, tt.path, tt.body, tok)
				mustStatus(t, r, tt.want)
				mustBody(t, r, tt.wantBody)
			}
			if after := versionsOf(t, s, tok, site.query, doc, ""); len(after) != 3 {
				t.Fatalf("refused requests changed the versions: %v", after)
			}

			// Set back to v1: content and path, and one more version.
			set := s.Do(http.MethodPut, "/documents/"+doc+"/versions"+site.query, map[string]any{"versionKey": k1}, tok)
			mustStatus(t, set, http.StatusOK)
			if str(t, set.JSON(t), "message") == "" {
				t.Fatalf("set = %s", set.Body)
			}
			if got := contentOf(t, s, tok, site.query, doc, ""); got != "version one" {
				t.Fatalf("content after set = %q", got)
			}
			if d := s.Do(http.MethodGet, "/documents/"+doc+site.query, nil, tok).JSON(t); str(t, d, "path") != "v/one.txt" {
				t.Fatalf("document after set = %v", d)
			}
			vs = versionsOf(t, s, tok, site.query, doc, "")
			if len(vs) != 4 || str(t, vs[1], "path") != "v/moved.txt" {
				t.Fatalf("versions after set = %v", vs)
			}
			// The state it replaced (v2 at v/moved.txt) still reads.
			if got := contentOf(t, s, tok, site.query, doc, "versionKey="+str(t, vs[1], "versionKey")); got != "version two" {
				t.Fatalf("replaced state = %q", got)
			}
			del := s.Do(http.MethodDelete, "/documents/"+doc+"/versions/"+k1+site.query, nil, tok)
			mustStatus(t, del, http.StatusOK)
			if str(t, del.JSON(t), "message") == "" {
				t.Fatalf("delete = %s", del.Body)
			}
			mustStatus(t, s.Do(http.MethodGet, "/documents/"+doc+"/content"+q(site.query, "versionKey="+k1), nil, tok), http.StatusNotFound)
			if after := versionsOf(t, s, tok, site.query, doc, ""); len(after) != 3 {
				t.Fatalf("versions after delete = %d", len(after))
			}
			// The current content is v1's still: the version held a reference of its own.
			if got := contentOf(t, s, tok, site.query, doc, ""); got != "version one" {
				t.Fatalf("content after deleting its version = %q", got)
			}
		})
	}
}

// TestVersions_OfArtifacts: artifactId lists, reads and sets back an
// artifact's versions, apart from its document's.
func TestVersions_OfArtifacts(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range sites {
		t.Run(site.name, func(t *testing.T) {
			doc := addDoc(t, s, tok, site.query, map[string]any{"path": "a.txt", "content": "document", "contentType": "text/plain"})
			art := addArtifact(t, s, tok, site.query, doc, map[string]any{"content": "artifact one", "contentType": "text/plain"})
			aq := "artifactId=" + art
			uploadNew(t, s, tok, site.query, doc, aq, "artifact two")
			av := versionsOf(t, s, tok, site.query, doc, aq)
			if len(av) != 2 || str(t, av[0], "artifactId") != art || str(t, av[0], "documentId") != doc {
				t.Fatalf("artifact versions = %v", av)
			}
			if dv := versionsOf(t, s, tok, site.query, doc, ""); len(dv) != 1 {
				t.Fatalf("document versions = %v", dv)
			}
			k1 := str(t, av[1], "versionKey")
			if got := contentOf(t, s, tok, site.query, doc, aq+"&versionKey="+k1); got != "artifact one" {
				t.Fatalf("artifact v1 = %q", got)
			}
			// The document has no version of that key.
			mustStatus(t, s.Do(http.MethodGet, "/documents/"+doc+"/content"+q(site.query, "versionKey="+k1), nil, tok), http.StatusNotFound)
			mustStatus(t, s.Do(http.MethodPut, "/documents/"+doc+"/versions"+q(site.query, aq), map[string]any{"versionKey": k1}, tok), http.StatusOK)
			if got := contentOf(t, s, tok, site.query, doc, aq); got != "artifact one" {
				t.Fatalf("artifact after set = %q", got)
			}
			if got := contentOf(t, s, tok, site.query, doc, ""); got != "document" {
				t.Fatalf("document after the artifact's set = %q", got)
			}
			// Purging the document takes the artifact's versions too.
			mustStatus(t, s.Do(http.MethodDelete, "/documents/"+doc+"/purge"+site.query, nil, tok), http.StatusOK)
			mustStatus(t, s.Do(http.MethodGet, "/documents/"+doc+"/versions"+q(site.query, aq), nil, tok), http.StatusNotFound)
		})
	}
}

// TestVersions_BinaryDownload: an earlier version of non-text content is a
// signed contentUrl whose bytes are that version's.
func TestVersions_BinaryDownload(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	one := bytes.Repeat([]byte{1, 2, 3}, 1<<19) // 1.5 MiB: two chunks
	r0 := s.Do(http.MethodGet, "/documents/upload?path=b.bin", nil, tok)
	mustStatus(t, r0, http.StatusOK)
	doc := str(t, r0.JSON(t), "documentId")
	mustStatus(t, put(s, str(t, r0.JSON(t), "url"), one), http.StatusOK)
	uploadNew(t, s, tok, "", doc, "", "two")
	// The upload URL's empty first state is no version: the current
	// ("two") and the uploaded bytes.
	vs := versionsOf(t, s, tok, "", doc, "")
	if len(vs) != 2 {
		t.Fatalf("versions = %v", vs)
	}
	r := s.Do(http.MethodGet, "/documents/"+doc+"/content?versionKey="+str(t, vs[1], "versionKey"), nil, tok)
	mustStatus(t, r, http.StatusOK)
	dl := s.Do(http.MethodGet, str(t, r.JSON(t), "contentUrl"), nil, "")
	mustStatus(t, dl, http.StatusOK)
	if !bytes.Equal(dl.Body, one) {
		t.Fatalf("downloaded %d bytes, not the %d of the version", len(dl.Body), len(one))
	}
}
