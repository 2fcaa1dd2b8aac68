package content_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"quire/quiretest"
	"quire/server/internal/servertest"
	"quire/storage"
)

// TestUploads_InterruptedNeverCommitted: a PUT to an upload URL whose
// client goes away before the end of its body (short of its
// Content-Length, or a chunked body before its terminating chunk) commits
// nothing, its chunks are swept, and a later complete upload works.
func TestUploads_InterruptedNeverCommitted(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	// fasthttp reads up to 8 KiB of a body before the handler runs; a
	// body cut inside them never reaches it.
	const prefetch = 8 << 10
	data := func(n int) []byte { return bytes.Repeat([]byte("quire-upload-"), n/13+1)[:n] }
	chunk := func(b []byte) string { return fmt.Sprintf("%x\r\n%s\r\n", len(b), b) }
	cases := []struct {
		name    string
		chunked bool
		header  string // Content-Length or Transfer-Encoding line
		sent    string // body bytes sent before the client closes
	}{
		{"no body byte", false, "Content-Length: 1000", ""},
		{"a few bytes", false, "Content-Length: 1000", "abcde"},
		{"just under a chunk", false, fmt.Sprintf("Content-Length: %d", storage.ChunkSize+5000), string(data(storage.ChunkSize - 1))},
		{"one chunk of two", false, fmt.Sprintf("Content-Length: %d", 2*storage.ChunkSize), string(data(storage.ChunkSize))},
		{"several MiB", false, fmt.Sprintf("Content-Length: %d", 5<<20), string(data(3<<20 + 17))},
		{"chunked, cut at a chunk boundary", true, "Transfer-Encoding: chunked", chunk(data(300<<10)) + chunk(data(900<<10))},
		{"chunked, cut inside a chunk", true, "Transfer-Encoding: chunked", chunk(data(64<<10)) + fmt.Sprintf("%x\r\n", 2<<20) + string(data(1<<20))},
		{"chunked, cut in a chunk size", true, "Transfer-Encoding: chunked", chunk(data(64<<10)) + "1f"},
		{"chunked, last chunk missing its CRLF", true, "Transfer-Encoding: chunked", chunk(data(64<<10)) + "0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id, uri := servertest.NewUpload(t, s, tok)
			before := servertest.UploadPuts(t, s)
			c := servertest.Dial(t, s, "")
			fmt.Fprintf(c, "PUT %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n%s\r\n\r\n%s", uri, tc.header, tc.sent)
			c.Close()
			if tc.chunked || len(tc.sent) > prefetch {
				servertest.WaitUploadPuts(t, s, before+1)
			}
			if d := s.Do(http.MethodGet, "/documents/"+id, nil, tok).JSON(t); d["contentLength"] != nil {
				t.Fatalf("cut upload committed: contentLength %v", d["contentLength"])
			}
			servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+id+"/content", nil, tok), http.StatusNotFound)
			if left, err := s.Node.DB.UnreferencedChunks(10); err != nil || len(left) != 0 {
				t.Fatalf("chunks of the cut upload left: %d (%v)", len(left), err)
			}
			// The same URL takes the whole content afterwards.
			whole := data(2<<20 + 3)
			servertest.MustStatus(t, s.Do(http.MethodPut, s.URL+uri, whole, ""), http.StatusOK)
			if d := s.Do(http.MethodGet, "/documents/"+id, nil, tok).JSON(t); d["contentLength"] != float64(len(whole)) {
				t.Fatalf("complete upload after a cut one: contentLength %v", d["contentLength"])
			}
		})
	}
}

// TestUploads_ChunkedComplete: a complete chunked body is committed, also
// when the client half-closes its side right after the terminating chunk
// (the check for a cut chunked body must not refuse it).
func TestUploads_ChunkedComplete(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	body := bytes.Repeat([]byte("z"), 3<<20)
	for _, halfClose := range []bool{false, true} {
		t.Run(fmt.Sprint("half close ", halfClose), func(t *testing.T) {
			id, uri := servertest.NewUpload(t, s, tok)
			c := servertest.Dial(t, s, "")
			fmt.Fprintf(c, "PUT %s HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", uri)
			for off := 0; off < len(body); off += 1 << 20 {
				fmt.Fprintf(c, "%x\r\n%s\r\n", 1<<20, body[off:off+1<<20])
			}
			fmt.Fprint(c, "0\r\n\r\n")
			if halfClose {
				c.(interface{ CloseWrite() error }).CloseWrite()
			}
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("complete chunked upload: %v %v", resp, err)
			}
			if d := s.Do(http.MethodGet, "/documents/"+id, nil, tok).JSON(t); d["contentLength"] != float64(len(body)) {
				t.Fatalf("contentLength %v, want %d", d["contentLength"], len(body))
			}
		})
	}
}

// TestChunkedJSONBody: a JSON body sent chunked (a client that does not
// know its length) is answered as soon as it is read, not when the
// client gives up.
func TestChunkedJSONBody(t *testing.T) {
	s := quiretest.NewServer(t)
	req, err := http.NewRequest(http.MethodPost, s.URL+"/documents", io.MultiReader(strings.NewReader(`{"path":"chunked.txt","content":"hello"}`)))
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = -1 // chunked
	req.Header.Set("Authorization", s.Admin())
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("chunked JSON request: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("status %d", resp.StatusCode)
	}
}
