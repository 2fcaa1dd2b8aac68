package documents_test

import (
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

func TestDocuments_AddGetContent(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			r := s.Do(http.MethodPost, "/documents"+site.Query, map[string]any{
				"path":        "/letters/hello.txt",
				"contentType": "text/plain",
				"content":     "Hello, Quire",
				"tags":        []map[string]any{{"key": "category", "value": "letters"}, {"key": "people", "values": []string{"ann", "bob"}}, {"key": "flag"}},
				"metadata":    []map[string]any{{"key": "z", "value": "1"}, {"key": "a", "values": []string{"y", "x"}}},
				"actions":     []map[string]any{{"type": "fulltext"}},
			}, tok)
			servertest.MustStatus(t, r, http.StatusCreated)
			body := r.JSON(t)
			id := quiretest.Str(t, body, "documentId")
			if body["siteId"] != site.Name || body["uploadUrl"] != nil {
				t.Fatalf("response = %s, want siteId %s and no uploadUrl", r.Body, site.Name)
			}
			g := s.Do(http.MethodGet, "/documents/"+id+site.Query, nil, tok)
			servertest.MustStatus(t, g, http.StatusOK)
			doc := g.JSON(t)
			for k, want := range map[string]any{"path": "letters/hello.txt", "contentType": "text/plain", "contentLength": float64(12), "userId": "admin", "siteId": site.Name, "documentId": id} {
				if doc[k] != want {
					t.Errorf("%s = %v, want %v", k, doc[k], want)
				}
			}
			if d, _ := doc["insertedDate"].(string); len(d) != 24 || !strings.HasSuffix(d, "+0000") {
				t.Errorf("insertedDate = %q, want yyyy-MM-ddTHH:mm:ss+0000", d)
			}
			md := fmt.Sprint(doc["metadata"])
			if md != "[map[key:a values:[x y]] map[key:z value:1]]" {
				t.Errorf("metadata = %s, want sorted keys and values", md)
			}
			c := s.Do(http.MethodGet, "/documents/"+id+"/content"+site.Query, nil, tok)
			servertest.MustStatus(t, c, http.StatusOK)
			servertest.MustBody(t, c, `{"content":"Hello, Quire","contentType":"text/plain","isBase64":false}`)
			tg := s.Do(http.MethodGet, "/documents/"+id+"/tags"+site.Query, nil, tok)
			servertest.MustStatus(t, tg, http.StatusOK)
			tags := quiretest.List(t, tg.JSON(t), "tags")
			if len(tags) != 3 {
				t.Fatalf("tags = %s", tg.Body)
			}
			if f := quiretest.Obj(t, tags[1]); f["key"] != "flag" || f["value"] != "" || f["type"] != "USERDEFINED" {
				t.Errorf("key-only tag = %v", f)
			}
			if p := quiretest.Obj(t, tags[2]); fmt.Sprint(p["values"]) != "[ann bob]" {
				t.Errorf("multi-value tag = %v", p)
			}
			// The document is not visible from the other site.
			other := "?siteId=finance"
			if site.Name == "finance" {
				other = ""
			}
			servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+id+other, nil, tok), http.StatusNotFound)
		})
	}
}

func TestDocuments_AddValidation(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	tests := []struct {
		name string
		body string
		want int
		resp string
	}{
		{"malformed json", `{"content":`, 400, `{"errors":[{"error":"invalid body"}]}`},
		{"empty body", ``, 400, `{"message":"request body is required"}`}, // FormKiQ's answer
		{"wrong type", `{"content":5}`, 400, `{"errors":[{"key":"content","error":"invalid 'content' type"}]}`},
		{"nothing", `{"path":"a.txt"}`, 400, `{"errors":[{"error":"either 'content', 'documents', or 'deepLinkPath' are required"}]}`},
		{"content and deep link", `{"content":"x","deepLinkPath":"https://example.com/a.pdf"}`, 400, `{"errors":[{"error":"both 'content', and 'deepLinkPath' cannot be set"}]}`},
		{"bad id", `{"documentId":"abc","content":"x"}`, 400, `{"errors":[{"key":"documentId","error":"invalid documentId 'abc'"}]}`},
		{"checksum without type", `{"content":"x","checksum":"abc"}`, 400, `{"errors":[{"key":"checksumType","error":"'checksumType' required when 'checksum' is set"}]}`},
		{"checksum mismatch", `{"content":"x","checksumType":"SHA256","checksum":"abc"}`, 400, `{"errors":[{"key":"checksum","error":"invalid checksum"}]}`},
		{"bad width", `{"content":"x","width":"wide"}`, 400, `{"errors":[{"key":"width","error":"invalid 'width' must be numeric or 'auto'"}]}`},
		{"tag without key", `{"content":"x","tags":[{"value":"v"}]}`, 400, `{"errors":[{"key":"tags","error":"'key' is required"}]}`},
		{"bad action", `{"content":"x","actions":[{"type":"nope"}]}`, 400, `{"errors":[{"key":"type","error":"invalid action type 'nope'"}]}`},
		{"bad resource type", `{"content":"x","resourceType":"FILE"}`, 400, `{"errors":[{"key":"resourceType","error":"invalid resourceType 'FILE'"}]}`},
		{"bad base64", `{"content":"***","isBase64":true}`, 400, `{"errors":[{"key":"content","error":"invalid base64 content"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(http.MethodPost, "/documents", tt.body, tok)
			servertest.MustStatus(t, r, tt.want)
			servertest.MustBody(t, r, tt.resp)
		})
	}
	// Nothing was written by any of them.
	l := s.Do(http.MethodGet, "/documents", nil, tok)
	servertest.MustBody(t, l, `{"documents":[]}`)
}

func TestDocuments_Checksums(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	content := []byte("dummy data")
	s1, s256, s512 := sha1.Sum(content), sha256.Sum256(content), sha512.Sum512(content)
	tests := []struct {
		typ, given, stored string
	}{
		{"SHA1", hex.EncodeToString(s1[:]), hex.EncodeToString(s1[:])},
		{"SHA256", base64.StdEncoding.EncodeToString(s256[:]), hex.EncodeToString(s256[:])},
		{"SHA512", strings.ToUpper(hex.EncodeToString(s512[:])), hex.EncodeToString(s512[:])},
		{"SHA1", "", "611ff54ef4d8389cf982da9516804906d99389b6"}, // computed when only the type is given
	}
	for _, tt := range tests {
		t.Run(tt.typ+"/"+tt.given, func(t *testing.T) {
			id := servertest.AddDoc(t, s, tok, "", map[string]any{"content": string(content), "checksumType": tt.typ, "checksum": tt.given})
			doc := s.Do(http.MethodGet, "/documents/"+id, nil, tok).JSON(t)
			if doc["checksum"] != tt.stored || doc["checksumType"] != tt.typ {
				t.Fatalf("checksum = %v %v, want %s %s", doc["checksumType"], doc["checksum"], tt.typ, tt.stored)
			}
		})
	}
}

func TestDocuments_PathsAndIDs(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			a := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "inbox/scan.pdf", "content": "one"})
			b := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "inbox/scan.pdf", "content": "two"})
			if a == b {
				t.Fatal("same id twice")
			}
			doc := s.Do(http.MethodGet, "/documents/"+b+site.Query, nil, tok).JSON(t)
			if want := "inbox/scan (" + b + ").pdf"; doc["path"] != want {
				t.Fatalf("duplicate path = %v, want %s", doc["path"], want)
			}
			own := "8b9f8f6e-4a7e-4c55-9a70-5d4b0c1f2e3d"
			if site.Name == "finance" {
				own = "0f0c3a5e-2b1d-4e8f-a6c7-1d2e3f4a5b6c"
			}
			if got := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"documentId": own, "content": "x"}); got != own {
				t.Fatalf("documentId = %s, want the client's %s", got, own)
			}
			r := s.Do(http.MethodPost, "/documents"+site.Query, map[string]any{"documentId": own, "content": "y"}, tok)
			servertest.MustStatus(t, r, http.StatusConflict)
			servertest.MustBody(t, r, `{"message":"documentId '`+own+`' already exists"}`)
			noPath := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"content": "z"})
			if doc := s.Do(http.MethodGet, "/documents/"+noPath+site.Query, nil, tok).JSON(t); doc["path"] != noPath {
				t.Fatalf("default path = %v, want the documentId", doc["path"])
			}
		})
	}
}

func TestDocuments_ChildrenAndDeepLinks(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			servertest.MustStatus(t, s.Do(http.MethodPost, "/attributes"+site.Query, map[string]any{"attribute": map[string]any{"key": "invoice"}}, tok), http.StatusCreated)
			r := s.Do(http.MethodPost, "/documents"+site.Query, map[string]any{
				"path": "parent.txt", "content": "parent", "contentType": "text/plain",
				"documents": []map[string]any{
					{"path": "child1.txt", "content": "c1", "contentType": "text/plain",
						"tags":       []map[string]any{{"key": "kind", "value": "child"}},
						"metadata":   []map[string]any{{"key": "m", "value": "v"}},
						"attributes": []map[string]any{{"key": "invoice", "stringValue": "42"}}},
					{"path": "child2.txt"},
				},
			}, tok)
			servertest.MustStatus(t, r, http.StatusCreated)
			body := r.JSON(t)
			kids := quiretest.List(t, body, "documents")
			if len(kids) != 2 {
				t.Fatalf("children = %s", r.Body)
			}
			c1, c2 := quiretest.Obj(t, kids[0]), quiretest.Obj(t, kids[1])
			if c1["uploadUrl"] != nil || c2["uploadUrl"] == nil {
				t.Fatalf("child with content got uploadUrl or child without did not: %s", r.Body)
			}
			c1id := quiretest.Str(t, c1, "documentId")
			tg := s.Do(http.MethodGet, "/documents/"+c1id+"/tags/kind"+site.Query, nil, tok)
			servertest.MustStatus(t, tg, http.StatusOK)
			// FormKiQ #458 dropped the attributes of child documents.
			at := s.Do(http.MethodGet, "/documents/"+c1id+"/attributes/invoice"+site.Query, nil, tok)
			servertest.MustStatus(t, at, http.StatusOK)
			if a := quiretest.Obj(t, at.JSON(t)["attribute"]); a["stringValue"] != "42" || a["valueType"] != "STRING" {
				t.Fatalf("child attribute = %s", at.Body)
			}
			child := s.Do(http.MethodGet, "/documents/"+c1id+site.Query, nil, tok).JSON(t)
			if child["belongsToDocumentId"] != body["documentId"] || fmt.Sprint(child["metadata"]) != "[map[key:m value:v]]" {
				t.Fatalf("child = %v", child)
			}
			parent := s.Do(http.MethodGet, "/documents/"+quiretest.Str(t, body, "documentId")+site.Query, nil, tok).JSON(t)
			if docs, _ := parent["documents"].([]any); len(docs) != 2 {
				t.Fatalf("parent documents = %v", parent["documents"])
			}

			dl := s.Do(http.MethodPost, "/documents"+site.Query, map[string]any{"deepLinkPath": "https://intranet.example/files/contract.pdf"}, tok)
			servertest.MustStatus(t, dl, http.StatusCreated)
			dlb := dl.JSON(t)
			if dlb["uploadUrl"] != nil {
				t.Fatalf("deep link got an uploadUrl: %s", dl.Body)
			}
			doc := s.Do(http.MethodGet, "/documents/"+quiretest.Str(t, dlb, "documentId")+site.Query, nil, tok).JSON(t)
			if doc["path"] != "contract.pdf" || doc["deepLinkPath"] != "https://intranet.example/files/contract.pdf" || doc["resourceType"] != "DEEP_LINK" {
				t.Fatalf("deep link = %v", doc)
			}
			u := s.Do(http.MethodGet, "/documents/"+quiretest.Str(t, dlb, "documentId")+"/url"+site.Query, nil, tok).JSON(t)
			if u["url"] != "https://intranet.example/files/contract.pdf" {
				t.Fatalf("deep link url = %v", u)
			}
		})
	}
}

func TestDocuments_UpdateDeleteRestorePurge(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			id := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "a.txt", "content": "x"})
			p := s.Do(http.MethodPatch, "/documents/"+id+site.Query, map[string]any{"path": "moved/b.txt", "metadata": []map[string]any{{"key": "k", "value": "v"}}}, tok)
			servertest.MustStatus(t, p, http.StatusOK)
			doc := s.Do(http.MethodGet, "/documents/"+id+site.Query, nil, tok).JSON(t)
			if doc["path"] != "moved/b.txt" || fmt.Sprint(doc["metadata"]) != "[map[key:k value:v]]" {
				t.Fatalf("after PATCH = %v", doc)
			}
			bad := s.Do(http.MethodPatch, "/documents/"+id+site.Query, map[string]any{"path": "c.txt", "width": "huge"}, tok)
			servertest.MustStatus(t, bad, http.StatusBadRequest)
			if doc := s.Do(http.MethodGet, "/documents/"+id+site.Query, nil, tok).JSON(t); doc["path"] != "moved/b.txt" {
				t.Fatalf("a failed PATCH moved the document to %v", doc["path"])
			}

			d := s.Do(http.MethodDelete, "/documents/"+id+servertest.Query(site.Query, "softDelete=true"), nil, tok)
			servertest.MustStatus(t, d, http.StatusOK)
			servertest.MustBody(t, d, `{"message":"'`+id+`' object soft deleted"}`)
			servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+id+site.Query, nil, tok), http.StatusNotFound)
			sd := s.Do(http.MethodGet, "/documents"+servertest.Query(site.Query, "softDeleted=true"), nil, tok).JSON(t)
			if docs := quiretest.List(t, sd, "documents"); len(docs) != 1 || quiretest.Obj(t, docs[0])["deletedDate"] == nil {
				t.Fatalf("softDeleted listing = %v", sd)
			}
			rs := s.Do(http.MethodPut, "/documents/"+id+"/restore"+site.Query, nil, tok)
			servertest.MustBody(t, rs, `{"message":"document restored"}`)
			doc = s.Do(http.MethodGet, "/documents/"+id+site.Query, nil, tok).JSON(t)
			if doc["deletedDate"] != nil {
				t.Fatalf("restored document still has deletedDate: %v", doc)
			}
			del := s.Do(http.MethodDelete, "/documents/"+id+site.Query, nil, tok)
			servertest.MustBody(t, del, `{"message":"'`+id+`' object deleted"}`)
			nf := s.Do(http.MethodGet, "/documents/"+id+site.Query, nil, tok)
			servertest.MustStatus(t, nf, http.StatusNotFound)
			servertest.MustBody(t, nf, `{"message":"Document `+id+` not found."}`)

			id2 := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"content": "y"})
			pu := s.Do(http.MethodDelete, "/documents/"+id2+"/purge"+site.Query, nil, tok)
			servertest.MustBody(t, pu, `{"message":"Deleted document '`+id2+`' permanently"}`)
			servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+id2+"/purge"+site.Query, nil, tok), http.StatusNotFound)
		})
	}
}

func TestDocuments_ListPaging(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			var ids []string
			for i := 0; i < 12; i++ {
				ids = append(ids, servertest.AddDoc(t, s, tok, site.Query, map[string]any{"content": fmt.Sprint(i)}))
			}
			var got []string
			path := "/documents" + servertest.Query(site.Query, "limit=5")
			for pages := 0; pages < 5; pages++ {
				r := s.Do(http.MethodGet, path, nil, tok)
				servertest.MustStatus(t, r, http.StatusOK)
				b := r.JSON(t)
				for _, d := range quiretest.List(t, b, "documents") {
					got = append(got, quiretest.Str(t, quiretest.Obj(t, d), "documentId"))
				}
				next, _ := b["next"].(string)
				if next == "" {
					break
				}
				path = "/documents" + servertest.Query(site.Query, "limit=5&next="+next)
			}
			if len(got) != 12 {
				t.Fatalf("listed %d, want 12", len(got))
			}
			for i := range got {
				if got[i] != ids[11-i] {
					t.Fatalf("order differs at %d: newest first expected", i)
				}
			}
			r := s.Do(http.MethodGet, "/documents"+servertest.Query(site.Query, "next=garbage"), nil, tok)
			servertest.MustStatus(t, r, http.StatusBadRequest)
			servertest.MustBody(t, r, `{"message":"Invalid Next token"}`)
		})
	}
}

// GET /documents?projection=DOCUMENT_ID_ONLY lists ids only (FormKiQ's
// OpenAPI: "Use 'DOCUMENT_ID_ONLY' to return only the documentId
// attribute"); another projection is refused, never ignored.
func TestDocuments_ListProjection(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	id := servertest.AddDoc(t, s, tok, "", map[string]any{"content": "x", "path": "proj/a.txt"})
	cases := []struct {
		name, query string
		want        int
		keys        []string // the keys of the listed document
	}{
		{"ids only", "?projection=DOCUMENT_ID_ONLY", 200, []string{"documentId"}},
		{"ids only with a limit", "?projection=DOCUMENT_ID_ONLY&limit=5", 200, []string{"documentId"}},
		{"whole documents", "", 200, nil},
		{"another projection", "?projection=FULL", 400, nil},
		{"lower case", "?projection=document_id_only", 400, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.Do(http.MethodGet, "/documents"+c.query, nil, tok)
			servertest.MustStatus(t, r, c.want)
			if c.want != 200 {
				servertest.MustBody(t, r, `{"errors":[{"key":"projection","error":"invalid 'projection' parameter: the only projection is DOCUMENT_ID_ONLY"}]}`)
				return
			}
			var out struct {
				Documents []map[string]any `json:"documents"`
			}
			if err := json.Unmarshal(r.Body, &out); err != nil || len(out.Documents) != 1 {
				t.Fatalf("list: %v %s", err, r.Body)
			}
			d := out.Documents[0]
			if d["documentId"] != id {
				t.Fatalf("listed %v, want %s", d, id)
			}
			if c.keys != nil && len(d) != len(c.keys) {
				t.Fatalf("projected document %v, want only %v", d, c.keys)
			}
			if c.keys == nil && d["path"] != "proj/a.txt" {
				t.Fatalf("whole document %v lacks its path", d)
			}
		})
	}
}
