package content_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"

	"quire/quiretest"
	"quire/server/internal/servertest"
	"quire/storage"
)

func TestUploads_PresignedPut(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			content := bytes.Repeat([]byte("0123456789abcdef"), 300000) // 4.8 MB, several chunks
			sum := sha256.Sum256(content)
			r := s.Do(http.MethodPost, "/documents/upload"+site.Query, map[string]any{
				"path": "big/report.bin", "checksumType": "SHA256", "checksum": hex.EncodeToString(sum[:]),
				"tags": []map[string]any{{"key": "source", "value": "scanner"}},
			}, tok)
			servertest.MustStatus(t, r, http.StatusCreated)
			b := r.JSON(t)
			id, u := quiretest.Str(t, b, "documentId"), quiretest.Str(t, b, "url")
			h := quiretest.Obj(t, b["headers"])
			if h["x-amz-checksum-sha256"] != base64.StdEncoding.EncodeToString(sum[:]) || h["x-amz-sdk-checksum-algorithm"] != "SHA256" {
				t.Fatalf("headers = %v", h)
			}
			// Before the upload the document exists without content.
			doc := s.Do(http.MethodGet, "/documents/"+id+site.Query, nil, tok).JSON(t)
			if doc["contentLength"] != nil || doc["path"] != "big/report.bin" {
				t.Fatalf("document before upload = %v", doc)
			}
			// A wrong body is refused and changes nothing.
			bad := s.DoHeaders(http.MethodPut, u, []byte("not the content"), "", map[string]string{"Content-Type": "application/octet-stream"})
			servertest.MustStatus(t, bad, http.StatusBadRequest)
			if doc := s.Do(http.MethodGet, "/documents/"+id+site.Query, nil, tok).JSON(t); doc["contentLength"] != nil {
				t.Fatalf("failed upload left content: %v", doc)
			}
			// So is the right body with a content type over its limit.
			long := s.DoHeaders(http.MethodPut, u, content, "", map[string]string{"Content-Type": "text/" + strings.Repeat("x", storage.MaxContentTypeBytes)})
			servertest.MustStatus(t, long, http.StatusBadRequest)
			if !strings.Contains(string(long.Body), `"key":"contentType"`) {
				t.Fatalf("a content type over its limit: %s", long.Body)
			}
			if doc := s.Do(http.MethodGet, "/documents/"+id+site.Query, nil, tok).JSON(t); doc["contentLength"] != nil {
				t.Fatalf("a refused upload left content: %v", doc)
			}
			put := s.DoHeaders(http.MethodPut, u, content, "", map[string]string{"Content-Type": "application/octet-stream"})
			servertest.MustStatus(t, put, http.StatusOK)
			doc = s.Do(http.MethodGet, "/documents/"+id+site.Query, nil, tok).JSON(t)
			if doc["contentLength"] != float64(len(content)) || doc["checksum"] != hex.EncodeToString(sum[:]) {
				t.Fatalf("document after upload = %v", doc)
			}
			tg := s.Do(http.MethodGet, "/documents/"+id+"/tags/source"+site.Query, nil, tok)
			servertest.MustStatus(t, tg, http.StatusOK)
			// Read it back through a signed download URL, whole and by range.
			cu := quiretest.Str(t, s.Do(http.MethodGet, "/documents/"+id+"/url"+site.Query, nil, tok).JSON(t), "url")
			dl := s.Do(http.MethodGet, cu, nil, "")
			servertest.MustStatus(t, dl, http.StatusOK)
			if !bytes.Equal(dl.Body, content) {
				t.Fatalf("downloaded %d bytes, not identical to the %d uploaded", len(dl.Body), len(content))
			}
			rg := s.DoHeaders(http.MethodGet, cu, nil, "", map[string]string{"Range": "bytes=1048570-1048585"})
			servertest.MustStatus(t, rg, http.StatusPartialContent)
			if !bytes.Equal(rg.Body, content[1048570:1048586]) {
				t.Fatalf("range = %q", rg.Body)
			}
			// Tampering with the signed URL is refused.
			forged := strings.Replace(cu, "inline=false", "inline=true", 1)
			servertest.MustStatus(t, s.Do(http.MethodGet, forged, nil, ""), http.StatusForbidden)
			servertest.MustStatus(t, s.Do(http.MethodPut, strings.Replace(u, "/"+id, "/"+strings.Repeat("0", 8)+id[8:], 1), "x", ""), http.StatusForbidden)
		})
	}
}

func TestUploads_GetEndpointsAndContentLength(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			r := s.Do(http.MethodGet, "/documents/upload"+servertest.Query(site.Query, "path=scans/a.txt&contentLength=5"), nil, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			b := r.JSON(t)
			id, u := quiretest.Str(t, b, "documentId"), quiretest.Str(t, b, "url")
			servertest.MustStatus(t, servertest.Put(s, u, "toolong"), http.StatusBadRequest)
			servertest.MustStatus(t, servertest.Put(s, u, "hello"), http.StatusOK)
			c := s.Do(http.MethodGet, "/documents/"+id+"/content"+site.Query, nil, tok)
			servertest.MustStatus(t, c, http.StatusOK)
			// No content type was given: it is detected (not text), so the
			// content comes as a URL.
			if c.JSON(t)["contentUrl"] == nil {
				t.Fatalf("content = %s", c.Body)
			}
			r2 := s.Do(http.MethodGet, "/documents/"+id+"/upload"+site.Query, nil, tok)
			servertest.MustStatus(t, r2, http.StatusOK)
			servertest.MustStatus(t, servertest.Put(s, quiretest.Str(t, r2.JSON(t), "url"), "replaced content"), http.StatusOK)
			doc := s.Do(http.MethodGet, "/documents/"+id+site.Query, nil, tok).JSON(t)
			if doc["contentLength"] != float64(len("replaced content")) {
				t.Fatalf("after second upload = %v", doc)
			}
			nf := s.Do(http.MethodGet, "/documents/7c0b1f7e-1111-4e2e-9c3a-000000000000/upload"+site.Query, nil, tok)
			servertest.MustStatus(t, nf, http.StatusNotFound)
			servertest.MustBody(t, nf, `{"message":"Document 7c0b1f7e-1111-4e2e-9c3a-000000000000 not found."}`)
			// HEAD of the creating GET is refused and creates nothing.
			before := len(quiretest.List(t, s.Do(http.MethodGet, "/documents"+servertest.Query(site.Query, "limit=1000"), nil, tok).JSON(t), "documents"))
			h := s.Do(http.MethodHead, "/documents/upload"+servertest.Query(site.Query, "path=scans/head.txt"), nil, tok)
			servertest.MustStatus(t, h, http.StatusMethodNotAllowed)
			if after := len(quiretest.List(t, s.Do(http.MethodGet, "/documents"+servertest.Query(site.Query, "limit=1000"), nil, tok).JSON(t), "documents")); after != before {
				t.Fatalf("HEAD /documents/upload created a document: %d documents, was %d", after, before)
			}
			v := s.Do(http.MethodGet, "/documents/upload"+servertest.Query(site.Query, "checksumType=SHA256"), nil, tok)
			servertest.MustStatus(t, v, http.StatusBadRequest)
			servertest.MustBody(t, v, `{"errors":[{"key":"checksum","error":"'checksum' is required"}]}`)
		})
	}
}

func TestUploads_ContentTypeDetected(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), make([]byte, 64)...)
	r := s.Do(http.MethodPost, "/documents/upload", map[string]any{"path": "image"}, tok)
	servertest.MustStatus(t, r, http.StatusCreated)
	b := r.JSON(t)
	servertest.MustStatus(t, servertest.Put(s, quiretest.Str(t, b, "url"), png), http.StatusOK)
	deadline := time.Now().Add(10 * time.Second)
	for {
		doc := s.Do(http.MethodGet, "/documents/"+quiretest.Str(t, b, "documentId"), nil, tok).JSON(t)
		if doc["contentType"] == "image/png" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("content type not detected: %v", doc)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestDownloads_Disposition(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	tests := []struct {
		name, path, ctype, inline, want string
	}{
		{"attachment by default", "a.pdf", "application/pdf", "", "attachment"},
		{"inline when asked", "a.pdf", "application/pdf", "inline=true", "inline"},
		{"svg never inline", "logo.svg", "image/svg+xml", "inline=true", "attachment"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := servertest.AddDoc(t, s, tok, "", map[string]any{"path": tt.path, "contentType": tt.ctype, "content": "<svg/>"})
			u := quiretest.Str(t, s.Do(http.MethodGet, "/documents/"+id+"/url"+servertest.Query("", tt.inline), nil, tok).JSON(t), "url")
			r := s.Do(http.MethodGet, u, nil, "")
			servertest.MustStatus(t, r, http.StatusOK)
			if cd := r.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, tt.want+";") {
				t.Fatalf("Content-Disposition = %q, want %s", cd, tt.want)
			}
			if r.Header.Get("Content-Type") != tt.ctype {
				t.Fatalf("Content-Type = %q", r.Header.Get("Content-Type"))
			}
		})
	}
}
