package server_test

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
)

func TestUploads_PresignedPut(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range sites {
		t.Run(site.name, func(t *testing.T) {
			content := bytes.Repeat([]byte("0123456789abcdef"), 300000) // 4.8 MB, several chunks
			sum := sha256.Sum256(content)
			r := s.Do(http.MethodPost, "/documents/upload"+site.query, map[string]any{
				"path": "big/report.bin", "checksumType": "SHA256", "checksum": hex.EncodeToString(sum[:]),
				"tags": []map[string]any{{"key": "source", "value": "scanner"}},
			}, tok)
			mustStatus(t, r, http.StatusCreated)
			b := r.JSON(t)
			id, u := str(t, b, "documentId"), str(t, b, "url")
			h := obj(t, b["headers"])
			if h["x-amz-checksum-sha256"] != base64.StdEncoding.EncodeToString(sum[:]) || h["x-amz-sdk-checksum-algorithm"] != "SHA256" {
				t.Fatalf("headers = %v", h)
			}
			// Before the upload the document exists without content.
			doc := s.Do(http.MethodGet, "/documents/"+id+site.query, nil, tok).JSON(t)
			if doc["contentLength"] != nil || doc["path"] != "big/report.bin" {
				t.Fatalf("document before upload = %v", doc)
			}
			// A wrong body is refused and changes nothing.
			bad := s.DoHeaders(http.MethodPut, u, []byte("not the content"), "", map[string]string{"Content-Type": "application/octet-stream"})
			mustStatus(t, bad, http.StatusBadRequest)
			if doc := s.Do(http.MethodGet, "/documents/"+id+site.query, nil, tok).JSON(t); doc["contentLength"] != nil {
				t.Fatalf("failed upload left content: %v", doc)
			}
			put := s.DoHeaders(http.MethodPut, u, content, "", map[string]string{"Content-Type": "application/octet-stream"})
			mustStatus(t, put, http.StatusOK)
			doc = s.Do(http.MethodGet, "/documents/"+id+site.query, nil, tok).JSON(t)
			if doc["contentLength"] != float64(len(content)) || doc["checksum"] != hex.EncodeToString(sum[:]) {
				t.Fatalf("document after upload = %v", doc)
			}
			tg := s.Do(http.MethodGet, "/documents/"+id+"/tags/source"+site.query, nil, tok)
			mustStatus(t, tg, http.StatusOK)
			// Read it back through a signed download URL, whole and by range.
			cu := str(t, s.Do(http.MethodGet, "/documents/"+id+"/url"+site.query, nil, tok).JSON(t), "url")
			dl := s.Do(http.MethodGet, cu, nil, "")
			mustStatus(t, dl, http.StatusOK)
			if !bytes.Equal(dl.Body, content) {
				t.Fatalf("downloaded %d bytes, not identical to the %d uploaded", len(dl.Body), len(content))
			}
			rg := s.DoHeaders(http.MethodGet, cu, nil, "", map[string]string{"Range": "bytes=1048570-1048585"})
			mustStatus(t, rg, http.StatusPartialContent)
			if !bytes.Equal(rg.Body, content[1048570:1048586]) {
				t.Fatalf("range = %q", rg.Body)
			}
			// Tampering with the signed URL is refused.
			forged := strings.Replace(cu, "inline=false", "inline=true", 1)
			mustStatus(t, s.Do(http.MethodGet, forged, nil, ""), http.StatusForbidden)
			mustStatus(t, s.Do(http.MethodPut, strings.Replace(u, "/"+id, "/"+strings.Repeat("0", 8)+id[8:], 1), "x", ""), http.StatusForbidden)
		})
	}
}

func TestUploads_GetEndpointsAndContentLength(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range sites {
		t.Run(site.name, func(t *testing.T) {
			r := s.Do(http.MethodGet, "/documents/upload"+q(site.query, "path=scans/a.txt&contentLength=5"), nil, tok)
			mustStatus(t, r, http.StatusOK)
			b := r.JSON(t)
			id, u := str(t, b, "documentId"), str(t, b, "url")
			mustStatus(t, put(s, u, "toolong"), http.StatusBadRequest)
			mustStatus(t, put(s, u, "hello"), http.StatusOK)
			c := s.Do(http.MethodGet, "/documents/"+id+"/content"+site.query, nil, tok)
			mustStatus(t, c, http.StatusOK)
			// No content type was given: it is detected (not text), so the
			// content comes as a URL.
			if c.JSON(t)["contentUrl"] == nil {
				t.Fatalf("content = %s", c.Body)
			}
			r2 := s.Do(http.MethodGet, "/documents/"+id+"/upload"+site.query, nil, tok)
			mustStatus(t, r2, http.StatusOK)
			mustStatus(t, put(s, str(t, r2.JSON(t), "url"), "replaced content"), http.StatusOK)
			doc := s.Do(http.MethodGet, "/documents/"+id+site.query, nil, tok).JSON(t)
			if doc["contentLength"] != float64(len("replaced content")) {
				t.Fatalf("after second upload = %v", doc)
			}
			nf := s.Do(http.MethodGet, "/documents/7c0b1f7e-1111-4e2e-9c3a-000000000000/upload"+site.query, nil, tok)
			mustStatus(t, nf, http.StatusNotFound)
			mustBody(t, nf, `{"message":"Document 7c0b1f7e-1111-4e2e-9c3a-000000000000 not found."}`)
			// HEAD of the creating GET is refused and creates nothing.
			before := len(list(t, s.Do(http.MethodGet, "/documents"+q(site.query, "limit=1000"), nil, tok).JSON(t), "documents"))
			h := s.Do(http.MethodHead, "/documents/upload"+q(site.query, "path=scans/head.txt"), nil, tok)
			mustStatus(t, h, http.StatusMethodNotAllowed)
			if after := len(list(t, s.Do(http.MethodGet, "/documents"+q(site.query, "limit=1000"), nil, tok).JSON(t), "documents")); after != before {
				t.Fatalf("HEAD /documents/upload created a document: %d documents, was %d", after, before)
			}
			v := s.Do(http.MethodGet, "/documents/upload"+q(site.query, "checksumType=SHA256"), nil, tok)
			mustStatus(t, v, http.StatusBadRequest)
			mustBody(t, v, `{"errors":[{"key":"checksum","error":"'checksum' is required"}]}`)
		})
	}
}

func TestUploads_ContentTypeDetected(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), make([]byte, 64)...)
	r := s.Do(http.MethodPost, "/documents/upload", map[string]any{"path": "image"}, tok)
	mustStatus(t, r, http.StatusCreated)
	b := r.JSON(t)
	mustStatus(t, put(s, str(t, b, "url"), png), http.StatusOK)
	deadline := time.Now().Add(10 * time.Second)
	for {
		doc := s.Do(http.MethodGet, "/documents/"+str(t, b, "documentId"), nil, tok).JSON(t)
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
			id := addDoc(t, s, tok, "", map[string]any{"path": tt.path, "contentType": tt.ctype, "content": "<svg/>"})
			u := str(t, s.Do(http.MethodGet, "/documents/"+id+"/url"+q("", tt.inline), nil, tok).JSON(t), "url")
			r := s.Do(http.MethodGet, u, nil, "")
			mustStatus(t, r, http.StatusOK)
			if cd := r.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, tt.want+";") {
				t.Fatalf("Content-Disposition = %q, want %s", cd, tt.want)
			}
			if r.Header.Get("Content-Type") != tt.ctype {
				t.Fatalf("Content-Type = %q", r.Header.Get("Content-Type"))
			}
		})
	}
}

// put uploads body to a signed URL as a client with no content type would.
func put(s *quiretest.Server, u string, body any) *quiretest.Response {
	return s.DoHeaders(http.MethodPut, u, body, "", map[string]string{"Content-Type": "application/octet-stream"})
}
