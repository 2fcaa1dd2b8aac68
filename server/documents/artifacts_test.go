package documents_test

import (
	"bytes"
	"fmt"
	"net/http"
	"sort"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// contentOf reads GET /content (extra: more query parameters).
func contentOf(t *testing.T, s *quiretest.Server, tok, site, doc, extra string) string {
	t.Helper()
	r := s.Do(http.MethodGet, "/documents/"+doc+"/content"+servertest.Query(site, extra), nil, tok)
	servertest.MustStatus(t, r, http.StatusOK)
	return quiretest.Str(t, r.JSON(t), "content")
}

// artifactDownload fetches the bytes GET /url points at.
func artifactDownload(t *testing.T, s *quiretest.Server, tok, site, doc, extra string) []byte {
	t.Helper()
	r := s.Do(http.MethodGet, "/documents/"+doc+"/url"+servertest.Query(site, extra), nil, tok)
	servertest.MustStatus(t, r, http.StatusOK)
	dl := s.Do(http.MethodGet, quiretest.Str(t, r.JSON(t), "url"), nil, "")
	servertest.MustStatus(t, dl, http.StatusOK)
	return dl.Body
}

// TestArtifacts_OwnRecord: an artifact has its own content, metadata,
// category, tags and attributes, reached with artifactId on the document's
// routes, none of which shows on the document itself.
func TestArtifacts_OwnRecord(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			servertest.DefineAttr(t, s, tok, site.Query, "lang", "STRING", nil)
			doc := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "scan.txt", "content": "original", "contentType": "text/plain"})
			if d := s.Do(http.MethodGet, "/documents/"+doc+site.Query, nil, tok).JSON(t); d["hasArtifacts"] != nil {
				t.Fatalf("hasArtifacts before any artifact: %v", d)
			}
			art := servertest.AddArtifact(t, s, tok, site.Query, doc, map[string]any{
				"content": "ocr text", "contentType": "text/plain", "artifactCategory": "OCR",
				"metadata": []map[string]any{{"key": "engine", "value": "tesseract"}},
				"tags":     []map[string]any{{"key": "kind", "value": "ocr"}},
			})
			aq := "artifactId=" + art
			if d := s.Do(http.MethodGet, "/documents/"+doc+site.Query, nil, tok).JSON(t); !quiretest.Bool(t, d, "hasArtifacts") || d["metadata"] != nil || d["artifactId"] != nil {
				t.Fatalf("document = %v", d)
			}
			a := s.Do(http.MethodGet, "/documents/"+doc+servertest.Query(site.Query, aq), nil, tok).JSON(t)
			if quiretest.Str(t, a, "documentId") != doc || quiretest.Str(t, a, "artifactId") != art || quiretest.Str(t, a, "artifactCategory") != "OCR" ||
				quiretest.Str(t, quiretest.Item(t, a, "metadata", 0), "value") != "tesseract" {
				t.Fatalf("artifact = %v", a)
			}
			if got := contentOf(t, s, tok, site.Query, doc, aq); got != "ocr text" {
				t.Fatalf("artifact content = %q", got)
			}
			if got := contentOf(t, s, tok, site.Query, doc, ""); got != "original" {
				t.Fatalf("document content = %q", got)
			}
			// An artifact's id is not a document id.
			r := s.Do(http.MethodGet, "/documents/"+art+site.Query, nil, tok)
			servertest.MustStatus(t, r, http.StatusNotFound)
			servertest.MustBody(t, r, `{"message":"Document `+art+` not found."}`)

			// Tags and attributes are the artifact's own.
			servertest.MustStatus(t, s.Do(http.MethodPost, "/documents/"+doc+"/tags"+servertest.Query(site.Query, aq), map[string]any{"key": "reviewed", "value": "yes"}, tok), http.StatusCreated)
			servertest.MustStatus(t, s.Do(http.MethodPost, "/documents/"+doc+"/attributes"+servertest.Query(site.Query, aq), map[string]any{"attributes": []map[string]any{{"key": "lang", "stringValue": "de"}}}, tok), http.StatusCreated)
			tagKeys := func(extra string) []string {
				var keys []string
				for _, tg := range quiretest.List(t, s.Do(http.MethodGet, "/documents/"+doc+"/tags"+servertest.Query(site.Query, extra), nil, tok).JSON(t), "tags") {
					keys = append(keys, quiretest.Str(t, quiretest.Obj(t, tg), "key"))
				}
				sort.Strings(keys)
				return keys
			}
			if got := fmt.Sprint(tagKeys(aq)); got != "[kind reviewed]" {
				t.Fatalf("artifact tags = %s", got)
			}
			if got := tagKeys(""); len(got) != 0 {
				t.Fatalf("document tags = %v", got)
			}
			servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+doc+"/attributes/lang"+servertest.Query(site.Query, aq), nil, tok), http.StatusOK)
			servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+doc+"/attributes/lang"+site.Query, nil, tok), http.StatusNotFound)
			servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+doc+"/tags/reviewed"+servertest.Query(site.Query, aq), nil, tok), http.StatusOK)
			if got := fmt.Sprint(tagKeys(aq)); got != "[kind]" {
				t.Fatalf("artifact tags after delete = %s", got)
			}

			// PATCH changes the artifact's category and metadata only.
			r = s.Do(http.MethodPatch, "/documents/"+doc+servertest.Query(site.Query, aq), map[string]any{"artifactCategory": "TEXT", "metadata": []map[string]any{{"key": "engine", "value": "other"}}}, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			if b := r.JSON(t); quiretest.Str(t, b, "documentId") != doc || quiretest.Str(t, b, "artifactId") != art {
				t.Fatalf("PATCH response = %v", b)
			}
			a = s.Do(http.MethodGet, "/documents/"+doc+servertest.Query(site.Query, aq), nil, tok).JSON(t)
			if quiretest.Str(t, a, "artifactCategory") != "TEXT" || quiretest.Str(t, quiretest.Item(t, a, "metadata", 0), "value") != "other" {
				t.Fatalf("artifact after PATCH = %v", a)
			}

			// Upload new bytes to the artifact through its presigned URL.
			content := bytes.Repeat([]byte{0, 1, 2, 0xff}, 70000)
			r = s.Do(http.MethodGet, "/documents/"+doc+"/upload"+servertest.Query(site.Query, aq), nil, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			if b := r.JSON(t); quiretest.Str(t, b, "artifactId") != art || quiretest.Str(t, b, "documentId") != doc {
				t.Fatalf("upload response = %v", b)
			}
			servertest.MustStatus(t, servertest.Put(s, quiretest.Str(t, r.JSON(t), "url"), content), http.StatusOK)
			if got := artifactDownload(t, s, tok, site.Query, doc, aq); !bytes.Equal(got, content) {
				t.Fatalf("artifact download = %d bytes, not the %d uploaded", len(got), len(content))
			}
			if got := contentOf(t, s, tok, site.Query, doc, ""); got != "original" {
				t.Fatalf("document content after the artifact's upload = %q", got)
			}
		})
	}
}

// TestArtifacts_ListPaged: GET /documents/{id}/artifacts pages through
// every artifact once, oldest first, in the documents-list shape.
func TestArtifacts_ListPaged(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			doc := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "p.txt", "content": "p"})
			other := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "o.txt", "content": "o"})
			servertest.AddArtifact(t, s, tok, site.Query, other, map[string]any{"content": "x"})
			var want []string
			for i := range 5 {
				cat := "A"
				if i%2 == 1 {
					cat = "B"
				}
				want = append(want, servertest.AddArtifact(t, s, tok, site.Query, doc, map[string]any{"content": fmt.Sprint(i), "artifactCategory": cat}))
			}
			var got, sizes []string
			next := ""
			for range 10 {
				extra := "limit=2"
				if next != "" {
					extra += "&next=" + next
				}
				r := s.Do(http.MethodGet, "/documents/"+doc+"/artifacts"+servertest.Query(site.Query, extra), nil, tok)
				servertest.MustStatus(t, r, http.StatusOK)
				b := r.JSON(t)
				docs := quiretest.List(t, b, "documents")
				sizes = append(sizes, fmt.Sprint(len(docs)))
				for _, d := range docs {
					m := quiretest.Obj(t, d)
					if quiretest.Str(t, m, "documentId") != doc {
						t.Fatalf("listed %v", m)
					}
					got = append(got, quiretest.Str(t, m, "artifactId"))
				}
				next, _ = b["next"].(string)
				if next == "" {
					break
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) || fmt.Sprint(sizes) != "[2 2 1]" {
				t.Fatalf("listed %v in pages %v, want %v", got, sizes, want)
			}
			r := s.Do(http.MethodGet, "/documents/"+doc+"/artifacts"+servertest.Query(site.Query, "artifactCategory=B"), nil, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			if n := len(quiretest.List(t, r.JSON(t), "documents")); n != 2 {
				t.Fatalf("category B lists %d artifacts, want 2", n)
			}
			servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+doc+"/artifacts"+servertest.Query(site.Query, "limit=x"), nil, tok), http.StatusBadRequest)
			r = s.Do(http.MethodGet, "/documents/"+doc+"/artifacts"+servertest.Query(site.Query, "next=bogus"), nil, tok)
			servertest.MustStatus(t, r, http.StatusBadRequest)
			servertest.MustBody(t, r, `{"message":"Invalid Next token"}`)
		})
	}
}

// TestArtifacts_PromoteRoundTrip: a promoted artifact's bytes are what the
// document serves; clearing the promotion serves the original bytes again.
func TestArtifacts_PromoteRoundTrip(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			orig := bytes.Repeat([]byte("original\x00"), 1000)
			derived := bytes.Repeat([]byte("derived\x01"), 3000)
			r := s.Do(http.MethodPost, "/documents/upload"+site.Query, map[string]any{"path": "d.bin"}, tok)
			servertest.MustStatus(t, r, http.StatusCreated)
			doc := quiretest.Str(t, r.JSON(t), "documentId")
			servertest.MustStatus(t, servertest.Put(s, quiretest.Str(t, r.JSON(t), "url"), orig), http.StatusOK)
			r = s.Do(http.MethodPost, "/documents"+site.Query, map[string]any{"documentId": doc, "artifacts": true, "path": "d.pdf"}, tok)
			servertest.MustStatus(t, r, http.StatusCreated)
			art := quiretest.Str(t, r.JSON(t), "artifactId")
			servertest.MustStatus(t, servertest.Put(s, quiretest.Str(t, r.JSON(t), "uploadUrl"), derived), http.StatusOK)

			promote := func(body map[string]any) {
				t.Helper()
				servertest.MustStatus(t, s.Do(http.MethodPut, "/documents/"+doc+"/artifacts/promoteArtifact"+site.Query, body, tok), http.StatusOK)
			}
			promote(map[string]any{"artifactId": art})
			if d := s.Do(http.MethodGet, "/documents/"+doc+site.Query, nil, tok).JSON(t); quiretest.Str(t, d, "promotedArtifactId") != art {
				t.Fatalf("document = %v", d)
			}
			if got := artifactDownload(t, s, tok, site.Query, doc, ""); !bytes.Equal(got, derived) {
				t.Fatalf("promoted download = %d bytes, want the artifact's %d", len(got), len(derived))
			}
			if u := s.Do(http.MethodGet, "/documents/"+doc+"/url"+site.Query, nil, tok).JSON(t); quiretest.Str(t, u, "artifactId") != art {
				t.Fatalf("url response = %v", u)
			}
			promote(map[string]any{})
			if d := s.Do(http.MethodGet, "/documents/"+doc+site.Query, nil, tok).JSON(t); d["promotedArtifactId"] != nil {
				t.Fatalf("promotion not cleared: %v", d)
			}
			if got := artifactDownload(t, s, tok, site.Query, doc, ""); !bytes.Equal(got, orig) {
				t.Fatalf("download after clearing = %d bytes, want the original %d", len(got), len(orig))
			}
			if got := artifactDownload(t, s, tok, site.Query, doc, "artifactId="+art); !bytes.Equal(got, derived) {
				t.Fatalf("artifact lost its bytes: %d", len(got))
			}
			// Deleting the promoted artifact clears the promotion.
			promote(map[string]any{"artifactId": art})
			servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+doc+servertest.Query(site.Query, "artifactId="+art), nil, tok), http.StatusOK)
			d := s.Do(http.MethodGet, "/documents/"+doc+site.Query, nil, tok).JSON(t)
			if d["promotedArtifactId"] != nil || d["hasArtifacts"] != nil {
				t.Fatalf("document after its artifact's delete = %v", d)
			}
			if got := artifactDownload(t, s, tok, site.Query, doc, ""); !bytes.Equal(got, orig) {
				t.Fatalf("download after the artifact's delete = %d bytes", len(got))
			}
		})
	}
}

// TestArtifacts_DeleteCascades: soft delete hides a document's artifacts,
// restore shows them again, purge and delete remove them with their tags
// (a tag search finds nothing of them).
func TestArtifacts_DeleteCascades(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		for _, how := range []string{"delete", "purge"} {
			t.Run(site.Name+"/"+how, func(t *testing.T) {
				doc := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": how + ".txt", "content": "x"})
				tag := "cascade-" + how
				var arts []string
				for i := range 3 {
					arts = append(arts, servertest.AddArtifact(t, s, tok, site.Query, doc, map[string]any{"content": fmt.Sprint(i), "tags": []map[string]any{{"key": tag, "value": "v"}}}))
				}
				hits, _ := servertest.Search(t, s, tok, site.Query, map[string]any{"query": map[string]any{"tag": map[string]any{"key": tag}}}, "")
				if len(hits) != 3 || quiretest.Str(t, hits[0], "documentId") != doc || hits[0]["artifactId"] == nil {
					t.Fatalf("tag search before the delete = %v", hits)
				}
				aq := "artifactId=" + arts[1]
				if how == "purge" {
					servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+doc+servertest.Query(site.Query, "softDelete=true"), nil, tok), http.StatusOK)
					servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+doc+"/tags"+servertest.Query(site.Query, aq), nil, tok), http.StatusNotFound)
					if hits, _ := servertest.Search(t, s, tok, site.Query, map[string]any{"query": map[string]any{"tag": map[string]any{"key": tag}}}, ""); len(hits) != 0 {
						t.Fatalf("a soft-deleted document's artifacts are found: %v", hits)
					}
					servertest.MustStatus(t, s.Do(http.MethodPut, "/documents/"+doc+"/restore"+site.Query, nil, tok), http.StatusOK)
					servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+doc+"/tags"+servertest.Query(site.Query, aq), nil, tok), http.StatusOK)
					servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+doc+servertest.Query(site.Query, "softDelete=true"), nil, tok), http.StatusOK)
					servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+doc+"/purge"+site.Query, nil, tok), http.StatusOK)
				} else {
					servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+doc+site.Query, nil, tok), http.StatusOK)
				}
				for _, a := range arts {
					servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+doc+servertest.Query(site.Query, "artifactId="+a), nil, tok), http.StatusNotFound)
					servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+a+site.Query, nil, tok), http.StatusNotFound)
				}
				if hits, _ := servertest.Search(t, s, tok, site.Query, map[string]any{"query": map[string]any{"tag": map[string]any{"key": tag}}}, ""); len(hits) != 0 {
					t.Fatalf("tag search after the delete = %v", hits)
				}
			})
		}
	}
}

// TestArtifacts_BadInput: FormKiQ's error shapes for artifacts that do not
// exist, documents that do not exist and malformed requests.
func TestArtifacts_BadInput(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			doc := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "bad.txt", "content": "x"})
			other := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "other.txt", "content": "x"})
			foreign := servertest.AddArtifact(t, s, tok, site.Query, other, map[string]any{"content": "y"})
			const missing = "0b0c5d36-8f43-4c52-9d0e-1c2b3a4d5e6f"
			notFound := func(id string) string { return `{"message":"Document ` + id + ` not found."}` }
			for _, tt := range []struct {
				name, method, path string
				body               any
				status             int
				want               string
			}{
				{"unknown artifactId", "GET", "/documents/" + doc + servertest.Query(site.Query, "artifactId="+missing), nil, 404, notFound(missing)},
				{"another document's artifact", "GET", "/documents/" + doc + "/content" + servertest.Query(site.Query, "artifactId="+foreign), nil, 404, notFound(foreign)},
				{"artifactId on a missing document", "GET", "/documents/" + missing + "/tags" + servertest.Query(site.Query, "artifactId="+foreign), nil, 404, notFound(missing)},
				{"artifact of a missing document", "POST", "/documents" + site.Query, map[string]any{"documentId": missing, "artifacts": true, "content": "x"}, 404, notFound(missing)},
				{"artifact of an artifact", "POST", "/documents" + site.Query, map[string]any{"documentId": foreign, "artifacts": true, "content": "x"}, 404, notFound(foreign)},
				{"list of a missing document", "GET", "/documents/" + missing + "/artifacts" + site.Query, nil, 404, notFound(missing)},
				{"promote an unknown artifact", "PUT", "/documents/" + doc + "/artifacts/promoteArtifact" + site.Query, map[string]any{"artifactId": missing}, 404, notFound(missing)},
				{"promote another document's artifact", "PUT", "/documents/" + doc + "/artifacts/promoteArtifact" + site.Query, map[string]any{"artifactId": foreign}, 404, notFound(foreign)},
				{"delete an unknown artifact", "DELETE", "/documents/" + doc + servertest.Query(site.Query, "artifactId="+missing), nil, 404, notFound(missing)},
				{"invalid UTF-8", "POST", "/documents" + site.Query, []byte("{\"documentId\":\"" + doc + "\",\"artifacts\":true,\"content\":\"\xff\"}"), 400, `{"errors":[{"error":"request body is not valid UTF-8"}]}`},
				{"invalid UTF-8 promote", "PUT", "/documents/" + doc + "/artifacts/promoteArtifact" + site.Query, []byte("{\"artifactId\":\"\xfe\"}"), 400, `{"errors":[{"error":"request body is not valid UTF-8"}]}`},
				{"invalid documentId", "POST", "/documents" + site.Query, map[string]any{"documentId": "nope", "artifacts": true, "content": "x"}, 400, `{"errors":[{"key":"documentId","error":"invalid documentId 'nope'"}]}`},
				{"child documents", "POST", "/documents" + site.Query, map[string]any{"documentId": doc, "artifacts": true, "content": "x", "documents": []map[string]any{{"content": "y"}}}, 400, `{"errors":[{"key":"documents","error":"an artifact cannot have child documents"}]}`},
				{"category too long", "POST", "/documents" + site.Query, map[string]any{"documentId": doc, "artifacts": true, "content": "x", "artifactCategory": string(bytes.Repeat([]byte("c"), 300))}, 400, `{"errors":[{"key":"artifactCategory","error":"'artifactCategory' cannot exceed 256 bytes"}]}`},
				{"soft delete an artifact", "DELETE", "/documents/" + other + servertest.Query(site.Query, "softDelete=true&artifactId="+foreign), nil, 400, `{"errors":[{"key":"softDelete","error":"an artifact cannot be soft deleted"}]}`},
				{"artifacts on upload", "POST", "/documents/upload" + site.Query, map[string]any{"documentId": doc, "artifacts": true}, 400, `{"errors":[{"key":"artifacts","error":"add an artifact with POST /documents"}]}`},
				{"artifactId on a route without it", "PUT", "/documents/" + doc + "/restore" + servertest.Query(site.Query, "artifactId="+foreign), nil, 400, `{"errors":[{"key":"artifactId","error":"'artifactId' is not supported on this route"}]}`},
			} {
				t.Run(tt.name, func(t *testing.T) {
					r := s.Do(tt.method, tt.path, tt.body, tok)
					servertest.MustStatus(t, r, tt.status)
					servertest.MustBody(t, r, tt.want)
				})
			}
			// Nothing of the refused requests was written.
			r := s.Do(http.MethodGet, "/documents/"+doc+"/artifacts"+site.Query, nil, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			if n := len(quiretest.List(t, r.JSON(t), "documents")); n != 0 {
				t.Fatalf("refused requests left %d artifacts", n)
			}
			if d := s.Do(http.MethodGet, "/documents/"+doc+site.Query, nil, tok).JSON(t); d["hasArtifacts"] != nil || d["promotedArtifactId"] != nil {
				t.Fatalf("document after refused requests = %v", d)
			}
		})
	}
}

// TestArtifacts_DeleteTooBigForOneTransaction: a document whose artifacts
// hold more than one transaction can delete is still deleted whole.
func TestArtifacts_DeleteTooBigForOneTransaction(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	doc := servertest.AddDoc(t, s, tok, "", map[string]any{"path": "big.txt", "content": "x"})
	value := string(bytes.Repeat([]byte("v"), 1000))
	var arts []string
	for i := range 20 { // 20 × 100 tags of 1,000 bytes, indexed: over 2 MB of keys to delete
		var tags []map[string]any
		for j := range 100 {
			tags = append(tags, map[string]any{"key": fmt.Sprintf("t%03d", j), "value": value})
		}
		arts = append(arts, servertest.AddArtifact(t, s, tok, "", doc, map[string]any{"content": fmt.Sprint(i), "tags": tags}))
	}
	servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+doc, nil, tok), http.StatusOK)
	servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+doc, nil, tok), http.StatusNotFound)
	for _, a := range arts {
		servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+a, nil, tok), http.StatusNotFound)
	}
	if hits, _ := servertest.Search(t, s, tok, "", map[string]any{"query": map[string]any{"tag": map[string]any{"key": "t000"}}}, ""); len(hits) != 0 {
		t.Fatalf("tags of deleted artifacts are found: %v", hits)
	}
}

// TestArtifacts_HeadTakesItsGetsQueryParameters: HEAD answers as its GET
// would, artifactId and versionKey included (they were refused with 400
// on HEAD), and refuses them where the GET does.
func TestArtifacts_HeadTakesItsGetsQueryParameters(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	doc := servertest.AddDoc(t, s, admin, "", map[string]any{"path": "head/doc.txt", "content": "one"})
	servertest.MustStatus(t, s.Do(http.MethodPatch, "/documents/"+doc, map[string]any{"content": "two", "contentType": "text/plain"}, admin), http.StatusOK)
	vs := s.Do(http.MethodGet, "/documents/"+doc+"/versions", nil, admin)
	servertest.MustStatus(t, vs, http.StatusOK)
	vk := quiretest.Str(t, quiretest.Item(t, vs.JSON(t), "documents", 1), "versionKey")
	art := servertest.AddArtifact(t, s, admin, "", doc, map[string]any{"content": "artifact", "contentType": "text/plain"})
	for _, tc := range []struct {
		path string
		want int
	}{
		{"/documents/" + doc + "/content?artifactId=" + art, http.StatusOK},
		{"/documents/" + doc + "/content?versionKey=" + vk, http.StatusOK},
		{"/documents/" + doc + "/url?artifactId=" + art, http.StatusOK},
		{"/documents/" + doc + "/tags?artifactId=" + art, http.StatusOK},
		{"/documents/" + doc + "/tags?versionKey=" + vk, http.StatusBadRequest},
		{"/documents/" + doc + "/notifications?artifactId=" + art, http.StatusBadRequest},
	} {
		get := s.Do(http.MethodGet, tc.path, nil, admin)
		head := s.Do(http.MethodHead, tc.path, nil, admin)
		if get.Status != tc.want || head.Status != tc.want {
			t.Errorf("%s: GET %d, HEAD %d, want %d", tc.path, get.Status, head.Status, tc.want)
		}
	}
}
