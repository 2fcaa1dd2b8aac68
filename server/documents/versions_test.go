package documents_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// uploadNew sends content to the document's upload URL.
func uploadNew(t *testing.T, s *quiretest.Server, tok, site, doc, extra, content string) {
	t.Helper()
	r := s.Do(http.MethodGet, "/documents/"+doc+"/upload"+servertest.Query(site, extra), nil, tok)
	servertest.MustStatus(t, r, http.StatusOK)
	servertest.MustStatus(t, servertest.Put(s, quiretest.Str(t, r.JSON(t), "url"), content), http.StatusOK)
}

// TestVersions_ListReadRestoreDelete: two uploads and a PATCH give three
// states, listed newest first; versionKey reads an earlier state's bytes on
// /content and /url; PUT sets the document back (content and path) and
// makes a version; DELETE removes one; unknown keys are 404, malformed
// ones 400, and neither changes anything.
func TestVersions_ListReadRestoreDelete(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			doc := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "v/one.txt", "content": "version one", "contentType": "text/plain"})
			if v := servertest.VersionsOf(t, s, tok, site.Query, doc, ""); len(v) != 1 || quiretest.Str(t, v[0], "documentId") != doc {
				t.Fatalf("versions of a new document = %v", v)
			}
			uploadNew(t, s, tok, site.Query, doc, "", "version two")
			servertest.MustStatus(t, s.Do(http.MethodPatch, "/documents/"+doc+site.Query, map[string]any{"path": "v/moved.txt"}, tok), http.StatusOK)
			// Tags alone make no version.
			servertest.MustStatus(t, s.Do(http.MethodPost, "/documents/"+doc+"/tags"+site.Query, map[string]any{"key": "k", "value": "v"}, tok), http.StatusCreated)

			vs := servertest.VersionsOf(t, s, tok, site.Query, doc, "")
			if len(vs) != 3 {
				t.Fatalf("versions = %d, want 3: %v", len(vs), vs)
			}
			wantPaths := []string{"v/moved.txt", "v/one.txt", "v/one.txt"}
			for i, v := range vs {
				if quiretest.Str(t, v, "path") != wantPaths[i] || quiretest.Str(t, v, "userId") != "admin" || quiretest.Str(t, v, "insertedDate") == "" {
					t.Fatalf("version %d = %v", i, v)
				}
				if i > 0 && quiretest.Str(t, vs[i-1], "versionKey") <= quiretest.Str(t, v, "versionKey") {
					t.Fatalf("not newest first: %v", vs)
				}
			}
			if quiretest.Num(t, vs[2], "contentLength") != float64(len("version one")) || quiretest.Str(t, vs[2], "contentType") != "text/plain" {
				t.Fatalf("oldest = %v", vs[2])
			}
			k1 := quiretest.Str(t, vs[2], "versionKey")
			if got := contentOf(t, s, tok, site.Query, doc, "versionKey="+k1); got != "version one" {
				t.Fatalf("content of v1 = %q", got)
			}
			if got := contentOf(t, s, tok, site.Query, doc, ""); got != "version two" {
				t.Fatalf("current content = %q", got)
			}
			if got := artifactDownload(t, s, tok, site.Query, doc, "versionKey="+k1); string(got) != "version one" {
				t.Fatalf("download of v1 = %q", got)
			}
			// The version's URL cannot be turned into another's.
			u := quiretest.Str(t, s.Do(http.MethodGet, "/documents/"+doc+"/url"+servertest.Query(site.Query, "versionKey="+k1), nil, tok).JSON(t), "url")
			servertest.MustStatus(t, s.Do(http.MethodGet, strings.Replace(u, "versionKey="+k1, "versionKey="+quiretest.Str(t, vs[1], "versionKey"), 1), nil, ""), http.StatusForbidden)

			// Paging.
			r := s.Do(http.MethodGet, "/documents/"+doc+"/versions"+servertest.Query(site.Query, "limit=2"), nil, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			next := quiretest.Str(t, r.JSON(t), "next")
			if rest := servertest.VersionsOf(t, s, tok, site.Query, doc, "limit=2&next="+next); len(rest) != 1 || quiretest.Str(t, rest[0], "versionKey") != k1 {
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
				{"content of unknown version", "GET", "/documents/" + doc + "/content" + servertest.Query(site.Query, "versionKey="+unknown), nil, 404, `{"message":"Version ` + unknown + ` not found."}`},
				{"url of malformed version", "GET", "/documents/" + doc + "/url" + servertest.Query(site.Query, "versionKey=v1"), nil, 400, `{"errors":[{"key":"versionKey","error":"invalid versionKey 'v1'"}]}`},
				{"versionKey elsewhere", "GET", "/documents/" + doc + "/tags" + servertest.Query(site.Query, "versionKey="+k1), nil, 400, `{"errors":[{"key":"versionKey","error":"'versionKey' is not supported on this route"}]}`},
				{"set without key", "PUT", "/documents/" + doc + "/versions" + site.Query, map[string]any{}, 400, `{"errors":[{"key":"versionKey","error":"'versionKey' is required"}]}`},
				{"set unknown", "PUT", "/documents/" + doc + "/versions" + site.Query, map[string]any{"versionKey": unknown}, 404, `{"message":"Version ` + unknown + ` not found."}`},
				{"delete unknown", "DELETE", "/documents/" + doc + "/versions/" + unknown + site.Query, nil, 404, `{"message":"Version ` + unknown + ` not found."}`},
				{"delete malformed", "DELETE", "/documents/" + doc + "/versions/zz" + site.Query, nil, 400, `{"errors":[{"key":"versionKey","error":"invalid versionKey 'zz'"}]}`},
				{"delete current", "DELETE", "/documents/" + doc + "/versions/" + quiretest.Str(t, vs[0], "versionKey") + site.Query, nil, 400, `{"errors":[{"key":"versionKey","error":"the current version cannot be deleted"}]}`},
				{"bad next token", "GET", "/documents/" + doc + "/versions" + servertest.Query(site.Query, "next=zz"), nil, 400, `{"message":"Invalid Next token"}`},
				{"versions of unknown document", "GET", "/documents/7c0b1f7e-1111-4e2e-9c3a-000000000000/versions" + site.Query, nil, 404, `{"message":"Document 7c0b1f7e-1111-4e2e-9c3a-000000000000 not found."}`},
			} {
				r := s.Do(tt.method, tt.path, tt.body, tok)
				servertest.MustStatus(t, r, tt.want)
				servertest.MustBody(t, r, tt.wantBody)
			}
			if after := servertest.VersionsOf(t, s, tok, site.Query, doc, ""); len(after) != 3 {
				t.Fatalf("refused requests changed the versions: %v", after)
			}

			// Set back to v1: content and path, and one more version.
			set := s.Do(http.MethodPut, "/documents/"+doc+"/versions"+site.Query, map[string]any{"versionKey": k1}, tok)
			servertest.MustStatus(t, set, http.StatusOK)
			if quiretest.Str(t, set.JSON(t), "message") == "" {
				t.Fatalf("set = %s", set.Body)
			}
			if got := contentOf(t, s, tok, site.Query, doc, ""); got != "version one" {
				t.Fatalf("content after set = %q", got)
			}
			if d := s.Do(http.MethodGet, "/documents/"+doc+site.Query, nil, tok).JSON(t); quiretest.Str(t, d, "path") != "v/one.txt" {
				t.Fatalf("document after set = %v", d)
			}
			vs = servertest.VersionsOf(t, s, tok, site.Query, doc, "")
			if len(vs) != 4 || quiretest.Str(t, vs[1], "path") != "v/moved.txt" {
				t.Fatalf("versions after set = %v", vs)
			}
			// The state it replaced (v2 at v/moved.txt) still reads.
			if got := contentOf(t, s, tok, site.Query, doc, "versionKey="+quiretest.Str(t, vs[1], "versionKey")); got != "version two" {
				t.Fatalf("replaced state = %q", got)
			}
			del := s.Do(http.MethodDelete, "/documents/"+doc+"/versions/"+k1+site.Query, nil, tok)
			servertest.MustStatus(t, del, http.StatusOK)
			if quiretest.Str(t, del.JSON(t), "message") == "" {
				t.Fatalf("delete = %s", del.Body)
			}
			servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+doc+"/content"+servertest.Query(site.Query, "versionKey="+k1), nil, tok), http.StatusNotFound)
			if after := servertest.VersionsOf(t, s, tok, site.Query, doc, ""); len(after) != 3 {
				t.Fatalf("versions after delete = %d", len(after))
			}
			// The current content is v1's still: the version held a reference of its own.
			if got := contentOf(t, s, tok, site.Query, doc, ""); got != "version one" {
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
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			doc := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "a.txt", "content": "document", "contentType": "text/plain"})
			art := servertest.AddArtifact(t, s, tok, site.Query, doc, map[string]any{"content": "artifact one", "contentType": "text/plain"})
			aq := "artifactId=" + art
			uploadNew(t, s, tok, site.Query, doc, aq, "artifact two")
			av := servertest.VersionsOf(t, s, tok, site.Query, doc, aq)
			if len(av) != 2 || quiretest.Str(t, av[0], "artifactId") != art || quiretest.Str(t, av[0], "documentId") != doc {
				t.Fatalf("artifact versions = %v", av)
			}
			if dv := servertest.VersionsOf(t, s, tok, site.Query, doc, ""); len(dv) != 1 {
				t.Fatalf("document versions = %v", dv)
			}
			k1 := quiretest.Str(t, av[1], "versionKey")
			if got := contentOf(t, s, tok, site.Query, doc, aq+"&versionKey="+k1); got != "artifact one" {
				t.Fatalf("artifact v1 = %q", got)
			}
			// The document has no version of that key.
			servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+doc+"/content"+servertest.Query(site.Query, "versionKey="+k1), nil, tok), http.StatusNotFound)
			servertest.MustStatus(t, s.Do(http.MethodPut, "/documents/"+doc+"/versions"+servertest.Query(site.Query, aq), map[string]any{"versionKey": k1}, tok), http.StatusOK)
			if got := contentOf(t, s, tok, site.Query, doc, aq); got != "artifact one" {
				t.Fatalf("artifact after set = %q", got)
			}
			if got := contentOf(t, s, tok, site.Query, doc, ""); got != "document" {
				t.Fatalf("document after the artifact's set = %q", got)
			}
			// Purging the document takes the artifact's versions too.
			servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+doc+"/purge"+site.Query, nil, tok), http.StatusOK)
			servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+doc+"/versions"+servertest.Query(site.Query, aq), nil, tok), http.StatusNotFound)
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
	servertest.MustStatus(t, r0, http.StatusOK)
	doc := quiretest.Str(t, r0.JSON(t), "documentId")
	servertest.MustStatus(t, servertest.Put(s, quiretest.Str(t, r0.JSON(t), "url"), one), http.StatusOK)
	uploadNew(t, s, tok, "", doc, "", "two")
	// The upload URL's empty first state is no version: the current
	// ("two") and the uploaded bytes.
	vs := servertest.VersionsOf(t, s, tok, "", doc, "")
	if len(vs) != 2 {
		t.Fatalf("versions = %v", vs)
	}
	r := s.Do(http.MethodGet, "/documents/"+doc+"/content?versionKey="+quiretest.Str(t, vs[1], "versionKey"), nil, tok)
	servertest.MustStatus(t, r, http.StatusOK)
	dl := s.Do(http.MethodGet, quiretest.Str(t, r.JSON(t), "contentUrl"), nil, "")
	servertest.MustStatus(t, dl, http.StatusOK)
	if !bytes.Equal(dl.Body, one) {
		t.Fatalf("downloaded %d bytes, not the %d of the version", len(dl.Body), len(one))
	}
}
