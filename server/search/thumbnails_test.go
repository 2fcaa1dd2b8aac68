package search_test

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/jpeg"
	"image/png"
	"net/http"
	"path"
	"strings"
	"testing"
	"time"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// thumbURLs maps a listing's entries (by name) to their thumbnailUrl.
func thumbURLs(t *testing.T, r *quiretest.Response, field string) map[string]string {
	t.Helper()
	servertest.MustStatus(t, r, http.StatusOK)
	out := map[string]string{}
	for _, x := range quiretest.List(t, r.JSON(t), field) {
		m := quiretest.Obj(t, x)
		if src, ok := m["_source"].(map[string]any); ok {
			m = src
		}
		u, _ := m["thumbnailUrl"].(string)
		out[path.Base(quiretest.Str(t, m, "path"))] = u
	}
	return out
}

// TestThumbnails_FirstPage: a PDF's first page, a PNG and a JPEG get a
// thumbnail (issue 47, item 2): a PNG of at most 256 px a side, made once
// in the background the first time a listing asks, kept as an artifact of
// category THUMBNAIL and named by a signed thumbnailUrl on the entries of
// GET /folders, GET /documents and searches, served with the stored-bytes
// headers; a text file gets none; new content gets a new thumbnail.
func TestThumbnails_FirstPage(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	var jpg bytes.Buffer
	if err := jpeg.Encode(&jpg, quiretest.TextImage("A wide photograph of the office", "second line"), nil); err != nil {
		t.Fatal(err)
	}
	pdf := servertest.AddDoc(t, s, tok, "", map[string]any{"path": "thumbs/letter.pdf", "contentType": "application/pdf", "isBase64": true,
		"content": base64.StdEncoding.EncodeToString(quiretest.TextPDF("Dear Anna", "page one"))})
	servertest.AddDoc(t, s, tok, "", map[string]any{"path": "thumbs/scan.png", "contentType": "image/png", "isBase64": true,
		"content": base64.StdEncoding.EncodeToString(quiretest.PNG(quiretest.TextImage("Hi")))})
	servertest.AddDoc(t, s, tok, "", map[string]any{"path": "thumbs/photo.jpg", "contentType": "image/jpeg", "isBase64": true,
		"content": base64.StdEncoding.EncodeToString(jpg.Bytes())})
	servertest.AddDoc(t, s, tok, "", map[string]any{"path": "thumbs/notes.txt", "contentType": "text/plain", "content": "no picture"})

	var urls map[string]string
	quiretest.Eventually(t, "thumbnails of the PDF and the images", 60*time.Second, func() bool {
		urls = thumbURLs(t, s.Do(http.MethodGet, "/folders?path=thumbs", nil, tok), "documents")
		return urls["letter.pdf"] != "" && urls["scan.png"] != "" && urls["photo.jpg"] != ""
	})
	if urls["notes.txt"] != "" {
		t.Errorf("a text file has a thumbnail: %s", urls["notes.txt"])
	}
	for name, u := range urls {
		if u == "" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			r := s.Do(http.MethodGet, u, nil, "")
			servertest.MustStatus(t, r, http.StatusOK)
			for k, want := range map[string]string{"Content-Type": "image/png", "X-Content-Type-Options": "nosniff", "Content-Security-Policy": "sandbox"} {
				if got := r.Header.Get(k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
			img, err := png.Decode(bytes.NewReader(r.Body))
			if err != nil {
				t.Fatalf("not a PNG: %v", err)
			}
			if b := img.Bounds(); b.Dx() > 256 || b.Dy() > 256 || b.Dx() < 16 || b.Dy() < 16 {
				t.Fatalf("thumbnail of %v", b.Size())
			}
		})
	}
	// A PDF's page is white with black text: the thumbnail is not blank.
	r := s.Do(http.MethodGet, urls["letter.pdf"], nil, "")
	if img, err := png.Decode(bytes.NewReader(r.Body)); err == nil && !hasDark(img) {
		t.Errorf("the PDF's thumbnail shows no text")
	}

	// Made once: listing again adds no second thumbnail.
	for range 3 {
		thumbURLs(t, s.Do(http.MethodGet, "/folders?path=thumbs&sortBy=path", nil, tok), "documents")
	}
	arts := s.Do(http.MethodGet, "/documents/"+pdf+"/artifacts", nil, tok)
	if n := strings.Count(string(arts.Body), `"THUMBNAIL"`); n != 1 {
		t.Fatalf("%d THUMBNAIL artifacts after four listings: %s", n, arts.Body)
	}

	// The other listings name it too.
	for _, tt := range []struct {
		name, method, path string
		body               any
		field              string
	}{
		{"GET /documents", http.MethodGet, "/documents?limit=100", nil, "documents"},
		{"POST /search by folder", http.MethodPost, "/search", map[string]any{"query": map[string]any{"meta": map[string]any{"folder": "thumbs"}}}, "documents"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := thumbURLs(t, s.Do(tt.method, tt.path, tt.body, tok), tt.field)
			if got["letter.pdf"] == "" || got["scan.png"] == "" || got["notes.txt"] != "" {
				t.Fatalf("thumbnailUrl per entry: %v", got)
			}
		})
	}

	// New content: a new thumbnail, of the new first page.
	servertest.MustStatus(t, s.Do(http.MethodPatch, "/documents/"+pdf, map[string]any{"contentType": "application/pdf", "isBase64": true,
		"content": base64.StdEncoding.EncodeToString(quiretest.TextPDF("A new first page"))}, tok), http.StatusOK)
	quiretest.Eventually(t, "a thumbnail of the new content", 60*time.Second, func() bool {
		u := thumbURLs(t, s.Do(http.MethodGet, "/folders?path=thumbs", nil, tok), "documents")["letter.pdf"]
		return u != "" && u != urls["letter.pdf"]
	})
}

// hasDark reports whether img has a pixel darker than light grey (text
// scaled down to a thumbnail is grey, not black).
func hasDark(img image.Image) bool {
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if r, g, bl, _ := img.At(x, y).RGBA(); r+g+bl < 3*0xC000 {
				return true
			}
		}
	}
	return false
}
