package documents_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
	"quire/storage"
)

// TestBadInput_Refused: input over the limits of storage/limits.go, text
// that is not valid UTF-8, trailing JSON, null bodies, odd paths and links,
// and forged system tags each get a 400 in FormKiQ's shape, and nothing of
// any of them is written.
func TestBadInput_Refused(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	id := servertest.AddDoc(t, s, tok, "", map[string]any{"content": "x", "path": "keep.txt", "tags": []map[string]any{{"key": "k", "value": "v"}}})
	mib := strings.Repeat("a", 1<<20)
	manyTags := func(n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"key":"k%d","value":"v"}`, i)
		}
		return "[" + b.String() + "]"
	}
	children := func(n int, doc string) string {
		return "[" + strings.TrimSuffix(strings.Repeat(doc+",", n), ",") + "]"
	}
	metadata := func(prefix string, n int) string {
		var m []string
		for i := range n {
			m = append(m, fmt.Sprintf(`{"key":"%s%d","value":"v"}`, prefix, i))
		}
		return "[" + strings.Join(m, ",") + "]"
	}
	values := `["` + strings.TrimSuffix(strings.Repeat(`v",  "`, 101), `,  "`) + `]`
	// A content type is a term of the fulltext index (index/DESIGN.md,
	// "Token cap").
	longType := "text/" + strings.Repeat("x", storage.MaxContentTypeBytes)
	longTypeErr := fmt.Sprintf(`{"errors":[{"key":"contentType","error":"'contentType' cannot exceed %d bytes"}]}`, storage.MaxContentTypeBytes)
	tagsOf := func(key string) string { return `{"tags":[{"key":"` + key + `","value":"CLEAN"}]}` }
	const (
		invalidBody = `{"errors":[{"error":"invalid body"}]}`
		notUTF8     = `{"errors":[{"error":"request body is not valid UTF-8"}]}`
		dslash      = `{"errors":[{"key":"path","error":"invalid Path contains multiple '//' characters"}]}`
		forged      = `{"errors":[{"key":"CLAMAV_SCAN_STATUS","error":"unallowed tag key"}]}` // FormKiQ's answer
	)
	tests := []struct {
		name, method, path, body string
		status                   int
		want                     string // exact body; "" checks the status only
	}{
		// Limits (storage/limits.go), before anything is written.
		{"1 MiB path", "POST", "/documents", `{"content":"x","path":"` + mib + `"}`, 400, `{"errors":[{"key":"path","error":"'path' cannot exceed 1024 bytes"}]}`},
		{"1 MiB tag key", "POST", "/documents", `{"content":"x","tags":[{"key":"` + mib + `"}]}`, 400, `{"errors":[{"key":"tags.key","error":"'tags.key' cannot exceed 256 bytes"}]}`},
		{"1 MiB tag value", "POST", "/documents/" + id + "/tags", `{"tags":[{"key":"a","value":"` + mib + `"}]}`, 400, `{"errors":[{"key":"tags","error":"'tags' value cannot exceed 1024 bytes"}]}`},
		{"10,000 tags", "POST", "/documents", `{"content":"x","tags":` + manyTags(10000) + `}`, 400, `{"errors":[{"key":"tags","error":"maximum number of tags is 100"}]}`},
		{"10,000 tags on a document", "PUT", "/documents/" + id + "/tags", `{"tags":` + manyTags(10000) + `}`, 400, `{"errors":[{"key":"tags","error":"maximum number of tags is 100"}]}`},
		{"10,000 tags by match", "PATCH", "/documents/tags", `{"match":{"tag":{"key":"k"}},"update":{"tags":` + manyTags(10000) + `}}`, 400, `{"errors":[{"key":"update.tags","error":"maximum number of tags is 100"}]}`},
		{"101 values", "POST", "/documents", `{"content":"x","tags":[{"key":"a","values":` + values + `}]}`, 400, `{"errors":[{"key":"tags","error":"tag 'a' can have at most 100 values"}]}`},
		{"10,000 children", "POST", "/documents", `{"content":"x","documents":` + children(10000, `{"content":"c"}`) + `}`, 400, `{"errors":[{"key":"documents","error":"a request can create at most 100 child documents"}]}`},
		{"values of a request", "POST", "/documents", `{"content":"x","documents":` + children(20, `{"content":"c","tags":`+manyTags(60)+`}`) + `}`, 400,
			`{"errors":[{"error":"a request can set at most 1000 tag and attribute values of at most 131072 bytes together"}]}`},
		{"1 MiB attribute value", "POST", "/documents/" + id + "/attributes", `{"attributes":[{"key":"a","stringValue":"` + mib + `"}]}`, 400, `{"errors":[{"key":"attributes","error":"'attributes' value cannot exceed 1024 bytes"}]}`},
		{"10,000 actions", "POST", "/documents/" + id + "/actions", `{"actions":[` + strings.TrimSuffix(strings.Repeat(`{"type":"FULLTEXT"},`, 10000), ",") + `]}`, 400,
			`{"errors":[{"key":"actions","error":"a request can add at most 50 actions"}]}`},
		{"20 metadata", "PATCH", "/documents/" + id, `{"metadata":` + metadata("a", 20) + `}`, 200, ""},
		{"20 more metadata", "PATCH", "/documents/" + id, `{"metadata":` + metadata("b", 20) + `}`, 400, `{"errors":[{"key":"metadata","error":"maximum number of metadata is 25"}]}`},
		{"content type at the limit", "PATCH", "/documents/" + id, `{"contentType":"` + longType[:storage.MaxContentTypeBytes] + `"}`, 200, ""},
		{"long content type", "POST", "/documents", `{"content":"x","contentType":"` + longType + `"}`, 400, longTypeErr},
		{"long content type of a child", "POST", "/documents", `{"content":"x","documents":[{"content":"y","contentType":"` + longType + `"}]}`, 400, longTypeErr},
		{"long content type on PATCH", "PATCH", "/documents/" + id, `{"contentType":"` + longType + `"}`, 400, longTypeErr},
		{"long content type on upload", "POST", "/documents/upload", `{"path":"u.txt","contentType":"` + longType + `"}`, 400, longTypeErr},
		{"1 MiB folder", "POST", "/folders", `{"path":"` + mib + `"}`, 400, `{"errors":[{"key":"path","error":"'path' cannot exceed 1024 bytes"}]}`},
		{"1 MiB entity type", "POST", "/entityTypes", `{"entityType":{"namespace":"CUSTOM","name":"` + mib + `"}}`, 400, ""},
		{"1 MiB search term", "POST", "/queryFulltext", `{"query":{"match":{"content":"` + mib + `"}}}`, 400, `{"message":"Request body too large"}`},
		{"1 MiB queue", "POST", "/queues", `{"name":"` + mib + `"}`, 400, ""},

		// Invalid UTF-8 is refused, never replaced by U+FFFD.
		{"UTF-8 path", "POST", "/documents", "{\"content\":\"x\",\"path\":\"bi\xff\xfe.txt\"}", 400, notUTF8},
		{"UTF-8 attribute key", "POST", "/attributes", "{\"attribute\":{\"key\":\"bi\xc3\x28\"}}", 400, notUTF8},
		{"lone surrogate", "POST", "/documents/" + id + "/tags", `{"tags":[{"key":"a\udc00"}]}`, 400, notUTF8},
		{"surrogate pair is fine", "POST", "/documents/" + id + "/tags", `{"tags":[{"key":"\ud83d\ude00"}]}`, 201, ""},
		{"UTF-8 path parameter", "PUT", "/documents/" + id + "/tags/%FF%FE", `{"value":"x"}`, 400, `{"errors":[{"key":"path","error":"the request path is not valid UTF-8"}]}`},
		{"UTF-8 search term", "POST", "/search", "{\"query\":{\"text\":\"\xff\"}}", 400, notUTF8},
		{"UTF-8 query value", "GET", "/folders?path=%FF", "", 400, `{"errors":[{"key":"path","error":"query parameter 'path' is not valid UTF-8"}]}`},

		// One JSON value, and a body where one is needed.
		{"trailing garbage", "POST", "/documents", `{"content":"x"} garbage`, 400, invalidBody},
		{"two objects", "POST", "/documents/" + id + "/tags", `{"tags":[{"key":"a"}]}{"tags":[{"key":"b"}]}`, 400, invalidBody},
		{"null body", "PATCH", "/documents/" + id, `null`, 400, invalidBody},
		{"no body on create", "POST", "/documents", "", 400, `{"message":"request body is required"}`}, // FormKiQ's answer
		{"null body on create", "POST", "/documents", " null ", 400, `{"message":"request body is required"}`},
		{"null site configuration", "PATCH", "/sites/default/configuration", ` null `, 400, invalidBody},

		// Paths and links.
		{"'//' on create", "POST", "/documents", `{"content":"x","path":"myfile//test-file.txt"}`, 400, dslash},
		{"'//' on PATCH", "PATCH", "/documents/" + id, `{"path":"a//b.txt"}`, 400, dslash},
		{"'//' on upload", "POST", "/documents/upload", `{"path":"a//b.txt"}`, 400, dslash},
		{"'//' on upload URL", "GET", "/documents/upload?path=a%2F%2Fb.txt", "", 400, dslash},
		{"'//' on a child", "POST", "/documents", `{"content":"x","documents":[{"content":"y","path":"c//d.txt"}]}`, 400, dslash},
		{"CR LF in path", "POST", "/documents", `{"content":"x","path":"a\r\nb.txt"}`, 400, `{"errors":[{"key":"path","error":"'path' contains control characters"}]}`},
		{"javascript deep link", "POST", "/documents", `{"deepLinkPath":"javascript:alert(1)"}`, 400, `{"errors":[{"key":"deepLinkPath","error":"DeepLinkPath 'javascript:alert(1)' is not a valid URL"}]}`},
		{"relative deep link", "POST", "/documents", `{"deepLinkPath":"x"}`, 400, `{"errors":[{"key":"deepLinkPath","error":"DeepLinkPath 'x' is not a valid URL"}]}`},
		{"deep link on PATCH", "PATCH", "/documents/" + id, `{"deepLinkPath":"ftp://host/x"}`, 400, `{"errors":[{"key":"deepLinkPath","error":"DeepLinkPath 'ftp://host/x' is not a valid URL"}]}`},

		// Enumerations and checksums.
		{"checksum not hex", "POST", "/documents/upload", `{"checksumType":"SHA256","checksum":"abc"}`, 400, `{"errors":[{"key":"checksum","error":"invalid checksum"}]}`},
		{"SHA1 of SHA256 length", "GET", "/documents/upload?checksumType=SHA1&checksum=" + strings.Repeat("0", 64), "", 400, `{"errors":[{"key":"checksum","error":"invalid checksum"}]}`},
		{"syncStatus", "GET", "/documents?syncStatus=SOMETIMES", "", 400, `{"errors":[{"key":"syncStatus","error":"invalid 'syncStatus' parameter"}]}`},
		{"indexType", "POST", "/search", `{"query":{"meta":{"indexType":"tags"}}}`, 400, `{"errors":[{"key":"indexType","error":"invalid 'indexType'"}]}`},

		// A forged antivirus verdict, through every tag write route.
		{"system tag on create", "POST", "/documents", `{"content":"x","tags":[{"key":"CLAMAV_SCAN_STATUS","value":"CLEAN"}]}`, 400, forged},
		{"system tag on a child", "POST", "/documents", `{"content":"x","documents":[{"content":"y","tags":[{"key":"CLAMAV_SCAN_STATUS","value":"CLEAN"}]}]}`, 400, forged},
		{"system tag on upload", "POST", "/documents/upload", tagsOf("CLAMAV_SCAN_STATUS"), 400, forged},
		{"system tag on PATCH", "PATCH", "/documents/" + id, tagsOf("CLAMAV_SCAN_STATUS"), 400, forged},
		{"system tag POST", "POST", "/documents/" + id + "/tags", tagsOf("CLAMAV_SCAN_STATUS"), 400, forged},
		{"system tag PUT", "PUT", "/documents/" + id + "/tags", tagsOf("CLAMAV_SCAN_STATUS"), 400, forged},
		{"system tag PATCH", "PATCH", "/documents/" + id + "/tags", tagsOf("CLAMAV_SCAN_STATUS"), 400, forged},
		{"system tag by match", "PATCH", "/documents/tags", `{"match":{"tag":{"key":"k"}},"update":` + tagsOf("CLAMAV_SCAN_STATUS") + `}`, 400, forged},
		{"system tag DELETE", "DELETE", "/documents/" + id + "/tags/CLAMAV_SCAN_STATUS", "", 400, forged},
		{"system timestamp tag", "POST", "/documents/" + id + "/tags", tagsOf("CLAMAV_SCAN_TIMESTAMP"), 400,
			`{"errors":[{"key":"CLAMAV_SCAN_TIMESTAMP","error":"unallowed tag key"}]}`},
		{"both system tags named", "PUT", "/documents/" + id + "/tags", `{"tags":[{"key":"a"},{"key":"CLAMAV_SCAN_TIMESTAMP","value":"x"},{"key":"CLAMAV_SCAN_STATUS","value":"CLEAN"}]}`, 400,
			`{"errors":[{"key":"CLAMAV_SCAN_TIMESTAMP","error":"unallowed tag key"},{"key":"CLAMAV_SCAN_STATUS","error":"unallowed tag key"}]}`},
		{"system tag single PUT", "PUT", "/documents/" + id + "/tags/CLAMAV_SCAN_STATUS", `{"value":"CLEAN"}`, 400, forged},

		// FormKiQ's own messages (issue 11 §9).
		{"duplicate tag keys", "POST", "/documents/" + id + "/tags", `{"tags":[{"key":"a","value":"1"},{"key":"a","value":"2"}]}`, 400,
			`{"message":"Tag key can only be included once in body; please use 'values' to assign multiple tag values to that key"}`},
		{"attribute missing", "POST", "/attributes", `{}`, 400, `{"message":"invalid request body"}`},
		{"folder path missing", "POST", "/folders", `{}`, 400, `{"message":"missing 'path' parameters"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body any
			if tt.body != "" {
				body = tt.body
			}
			r := s.DoHeaders(tt.method, tt.path, body, tok, map[string]string{"Content-Type": "application/json"})
			servertest.MustStatus(t, r, tt.status)
			if tt.want != "" {
				servertest.MustBody(t, r, tt.want)
			}
		})
	}
	// Nothing of the refused requests was written: the one document with
	// its own path and tags (and the emoji tag that was allowed).
	l := s.Do(http.MethodGet, "/documents", nil, tok).JSON(t)
	if docs, _ := l["documents"].([]any); len(docs) != 1 {
		t.Fatalf("documents after refused requests: %v", l)
	}
	d := s.Do(http.MethodGet, "/documents/"+id, nil, tok).JSON(t)
	if d["path"] != "keep.txt" || d["deepLinkPath"] != nil {
		t.Fatalf("document changed by refused requests: %v", d)
	}
	tags := s.Do(http.MethodGet, "/documents/"+id+"/tags?limit=100", nil, tok)
	if got := string(tags.Body); strings.Count(got, `"key"`) != 2 || strings.Contains(got, "CLAMAV") {
		t.Fatalf("tags after refused requests: %s", got)
	}
	if f := s.Do(http.MethodGet, "/folders", nil, tok); strings.Contains(string(f.Body), "aaaa") {
		t.Fatalf("folder of a refused request: %s", f.Body)
	}
}

// TestBadInput_MatchTagsBatched: PATCH /documents/tags over many
// documents, or with large tags, is applied in batches that each fit one
// transaction, so every matching document gets them (no 400 or 500 after
// part of the documents were changed). Each case is too big for one
// Badger transaction: 6,000 tag values, or 2 MB of them.
func TestBadInput_MatchTagsBatched(t *testing.T) {
	tests := []struct {
		name      string
		docs      int
		tags      int
		valueSize int
	}{
		{"more values than one transaction holds", 60, 100, 1},
		{"more bytes than one transaction holds", 20, 100, 1000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // a server each
			if n := storage.DocsPerBatch(bigTags(tc.tags, tc.valueSize), 200); tc.docs <= n {
				t.Fatalf("%d documents fit one batch of %d: the case tests no batching", tc.docs, n)
			}
			s := quiretest.NewServer(t)
			tok := s.Admin()
			servertest.AddDocs(t, s, tok, "", tc.docs, func(i int) any {
				return map[string]any{"content": "x", "path": fmt.Sprintf("d%03d.txt", i), "tags": []map[string]any{{"key": "batch", "value": "1"}}}
			})
			var tags []map[string]any
			for _, tg := range bigTags(tc.tags, tc.valueSize) {
				tags = append(tags, map[string]any{"key": tg.Key, "value": tg.Value})
			}
			last := fmt.Sprintf("big%02d", tc.tags-1)
			r := s.Do(http.MethodPatch, "/documents/tags", map[string]any{"match": map[string]any{"tag": map[string]any{"key": "batch", "eq": "1"}}, "update": map[string]any{"tags": tags}}, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			res := s.Do(http.MethodPost, "/search?limit=1000", map[string]any{"query": map[string]any{"tag": map[string]any{"key": last}}}, tok).JSON(t)
			if got, _ := res["documents"].([]any); len(got) != tc.docs {
				t.Fatalf("documents with the new tags: %d, want %d", len(got), tc.docs)
			}
		})
	}
}

// bigTags returns n tags big00.. with values of size bytes.
func bigTags(n, size int) []storage.Tag {
	var out []storage.Tag
	for i := range n {
		out = append(out, storage.Tag{Key: fmt.Sprintf("big%02d", i), Value: strings.Repeat("v", size)})
	}
	return out
}

// TestSoftDeleted_EndInclusive: `end` includes the documents deleted at
// that time, as `start` does (FormKiQ's dates have whole seconds, Quire's
// deletedDate has nanoseconds); without softDeleted=true they match nothing.
func TestSoftDeleted_EndInclusive(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	id := servertest.AddDoc(t, s, tok, "", map[string]any{"content": "x"})
	servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+id+"?softDelete=true", nil, tok), http.StatusOK)
	l := s.Do(http.MethodGet, "/documents?softDeleted=true", nil, tok).JSON(t)
	docs, _ := l["documents"].([]any)
	if len(docs) != 1 {
		t.Fatalf("soft-deleted listing: %v", l)
	}
	at := quiretest.Str(t, quiretest.Obj(t, docs[0]), "deletedDate")
	servertest.AddDoc(t, s, tok, "", map[string]any{"content": "live"})
	tests := []struct {
		name, query string
		want        int
	}{
		{"start", "softDeleted=true&start=" + url.QueryEscape(at), 1},
		{"end", "softDeleted=true&end=" + url.QueryEscape(at), 1},
		{"start and end", "softDeleted=true&start=" + url.QueryEscape(at) + "&end=" + url.QueryEscape(at), 1},
		{"day", "softDeleted=true&end=" + at[:10], 1},
		{"before", "softDeleted=true&end=2000-01-01T00:00:00%2B0000", 0},
		// The dates select soft-deleted documents only (FormKiQ): without
		// softDeleted=true nothing matches, not even the live document.
		{"live listing", "", 1},
		{"start without softDeleted", "start=2000-01-01", 0},
		{"end without softDeleted", "end=2999-01-01", 0},
		{"range with softDeleted=false", "softDeleted=false&start=2000-01-01&end=2999-01-01", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(http.MethodGet, "/documents?"+tt.query, nil, tok).JSON(t)
			if got, _ := r["documents"].([]any); len(got) != tt.want {
				t.Fatalf("%s: %d documents, want %d (deleted %s): %v", tt.query, len(got), tt.want, at, r)
			}
		})
	}
}

// TestBadInput_DocumentSize: tags and attributes added request by request
// stop at the per-document limit, so the document can still be deleted
// in one transaction.
func TestBadInput_DocumentSize(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	id := servertest.AddDoc(t, s, tok, "", map[string]any{"content": "x"})
	big := strings.Repeat("v", 1000)
	status := 0
	for i := 0; i < 40 && status != http.StatusBadRequest; i++ {
		var tags []map[string]any
		for j := range 10 {
			tags = append(tags, map[string]any{"key": fmt.Sprintf("k%02d-%d", i, j), "values": []string{big + "1", big + "2"}})
		}
		r := s.Do(http.MethodPost, "/documents/"+id+"/tags", map[string]any{"tags": tags}, tok)
		status = r.Status
		if status == http.StatusBadRequest {
			servertest.MustBody(t, r, `{"errors":[{"key":"tags","error":"a document's tags can hold at most 2000 values of at most 131072 bytes together"}]}`)
		} else {
			servertest.MustStatus(t, r, http.StatusCreated)
		}
	}
	if status != http.StatusBadRequest {
		t.Fatal("tags grew past the per-document limit")
	}
	servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+id, nil, tok), http.StatusOK)
	servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+id, nil, tok), http.StatusNotFound)
}
