package search_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/jpeg"
	"image/png"
	"net/http"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"quire/quiretest"
	"quire/server/internal/servertest"
	"quire/storage"
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

// thumbnailArtifacts lists the ids of a document's THUMBNAIL artifacts
// (GET /documents/{id}/artifacts?artifactCategory=THUMBNAIL, which is no
// listing of documents).
func thumbnailArtifacts(t *testing.T, s *quiretest.Server, tok, doc string) []string {
	t.Helper()
	r := s.Do(http.MethodGet, "/documents/"+doc+"/artifacts?artifactCategory=THUMBNAIL", nil, tok)
	servertest.MustStatus(t, r, http.StatusOK)
	var ids []string
	for _, x := range quiretest.List(t, r.JSON(t), "documents") {
		m := quiretest.Obj(t, x)
		if m["artifactCategory"] == "THUMBNAIL" {
			ids = append(ids, quiretest.Str(t, m, "artifactId"))
		}
	}
	return ids
}

// thumbnailsMade reads quire_thumbnails_made_total from /metrics.
func thumbnailsMade(t *testing.T, s *quiretest.Server) int {
	t.Helper()
	r := s.Do(http.MethodGet, "/metrics", nil, "")
	servertest.MustStatus(t, r, http.StatusOK)
	for _, l := range strings.Split(string(r.Body), "\n") {
		if v, ok := strings.CutPrefix(l, "quire_thumbnails_made_total "); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatalf("quire_thumbnails_made_total %q: %v", v, err)
			}
			return n
		}
	}
	t.Fatalf("no quire_thumbnails_made_total in /metrics")
	return 0
}

// TestThumbnails_FirstPage: a PDF's first page, a PNG and a JPEG get a
// thumbnail (issue 47): a PNG of at most 256 px a side, made by the
// pipeline when the document gets its content, with no listing asking,
// kept as an artifact of category THUMBNAIL and named by a signed
// thumbnailUrl on the entries of GET /folders, GET /documents and
// searches, served with the stored-bytes headers; a text file gets none;
// listings render nothing (quire_thumbnails_made_total stays); new
// content gets a new thumbnail, the old one served until it is ready and
// deleted then.
func TestThumbnails_FirstPage(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	var jpg bytes.Buffer
	if err := jpeg.Encode(&jpg, quiretest.TextImage("A wide photograph of the office", "second line"), nil); err != nil {
		t.Fatal(err)
	}
	pdf := servertest.AddDoc(t, s, tok, "", map[string]any{"path": "thumbs/letter.pdf", "contentType": "application/pdf", "isBase64": true,
		"content": base64.StdEncoding.EncodeToString(quiretest.TextPDF("Dear Anna", "page one"))})
	png1 := servertest.AddDoc(t, s, tok, "", map[string]any{"path": "thumbs/scan.png", "contentType": "image/png", "isBase64": true,
		"content": base64.StdEncoding.EncodeToString(quiretest.PNG(quiretest.TextImage("Hi")))})
	jpg1 := servertest.AddDoc(t, s, tok, "", map[string]any{"path": "thumbs/photo.jpg", "contentType": "image/jpeg", "isBase64": true,
		"content": base64.StdEncoding.EncodeToString(jpg.Bytes())})
	txt := servertest.AddDoc(t, s, tok, "", map[string]any{"path": "thumbs/notes.txt", "contentType": "text/plain", "content": "no picture"})

	// Made with the content: nobody lists the folder.
	quiretest.Eventually(t, "thumbnails of the PDF and the images, without a listing", 60*time.Second, func() bool {
		for _, d := range []string{pdf, png1, jpg1} {
			if len(thumbnailArtifacts(t, s, tok, d)) != 1 {
				return false
			}
		}
		return true
	})
	if ids := thumbnailArtifacts(t, s, tok, txt); len(ids) != 0 {
		t.Errorf("a text file has a thumbnail: %v", ids)
	}
	// A client lists the artifacts it made: thumbnails only when asked
	// for by category; an archive of the document leaves it out unless it
	// names it.
	r := s.Do(http.MethodGet, "/documents/"+png1+"/artifacts", nil, tok)
	servertest.MustStatus(t, r, http.StatusOK)
	if n := len(quiretest.List(t, r.JSON(t), "documents")); n != 0 {
		t.Errorf("GET /documents/{id}/artifacts lists %d artifacts of an image nobody added one to: %s", n, r.Body)
	}
	thumb := thumbnailArtifacts(t, s, tok, png1)[0]
	for _, tt := range []struct {
		name string
		body map[string]any
		want []string
	}{
		{"the document", map[string]any{"documentIds": []string{png1}}, []string{"thumbs/scan.png"}},
		{"its thumbnail named", map[string]any{"documents": []map[string]any{{"documentId": png1, "artifactId": thumb}}},
			[]string{"thumbs/scan.png.artifacts/" + thumb}},
	} {
		t.Run("archive of "+tt.name, func(t *testing.T) {
			r := s.Do(http.MethodPost, "/documents/compress", tt.body, tok)
			servertest.MustStatus(t, r, http.StatusCreated)
			files, _ := servertest.Unzip(t, quiretest.Str(t, r.JSON(t), "downloadUrl"))
			var got []string
			for name := range files {
				got = append(got, name)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("entries %v, want %v", got, tt.want)
			}
		})
	}
	if n := thumbnailsMade(t, s); n != 3 {
		t.Fatalf("quire_thumbnails_made_total %d before any listing, want 3", n)
	}
	urls := thumbURLs(t, s.Do(http.MethodGet, "/folders?path=thumbs", nil, tok), "documents")
	if urls["letter.pdf"] == "" || urls["scan.png"] == "" || urls["photo.jpg"] == "" {
		t.Fatalf("the first listing names not every thumbnail: %v", urls)
	}
	if urls["notes.txt"] != "" {
		t.Errorf("a text file has a thumbnailUrl: %s", urls["notes.txt"])
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
	r = s.Do(http.MethodGet, urls["letter.pdf"], nil, "")
	if img, err := png.Decode(bytes.NewReader(r.Body)); err == nil && !hasDark(img) {
		t.Errorf("the PDF's thumbnail shows no text")
	}

	// The other listings name it too; none of them makes one.
	for _, tt := range []struct {
		name, method, path string
		body               any
		field              string
	}{
		{"GET /folders sorted", http.MethodGet, "/folders?path=thumbs&sortBy=path", nil, "documents"},
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
	if n := thumbnailsMade(t, s); n != 3 {
		t.Errorf("quire_thumbnails_made_total %d after the listings, want 3", n)
	}
	if ids := thumbnailArtifacts(t, s, tok, pdf); len(ids) != 1 {
		t.Fatalf("THUMBNAIL artifacts after the listings: %v", ids)
	}

	// New content: the old thumbnail is served until the new one is made,
	// which replaces it.
	old := thumbnailArtifacts(t, s, tok, pdf)[0]
	servertest.MustStatus(t, s.Do(http.MethodPatch, "/documents/"+pdf, map[string]any{"contentType": "application/pdf", "isBase64": true,
		"content": base64.StdEncoding.EncodeToString(quiretest.TextPDF("A new first page"))}, tok), http.StatusOK)
	quiretest.Eventually(t, "a thumbnail of the new content in place of the old", 60*time.Second, func() bool {
		if u := thumbURLs(t, s.Do(http.MethodGet, "/folders?path=thumbs", nil, tok), "documents")["letter.pdf"]; u == "" {
			t.Fatalf("the PDF has no thumbnailUrl while its new one is made")
		}
		ids := thumbnailArtifacts(t, s, tok, pdf)
		return len(ids) == 1 && ids[0] != old
	})
	if u := thumbURLs(t, s.Do(http.MethodGet, "/folders?path=thumbs", nil, tok), "documents")["letter.pdf"]; u == urls["letter.pdf"] || u == "" {
		t.Errorf("the listing names the old thumbnail: %s", u)
	}
	if n := thumbnailsMade(t, s); n != 4 {
		t.Errorf("quire_thumbnails_made_total %d after new content, want 4", n)
	}
}

// TestThumbnails_ListingNeverRenders: with the pipeline stopped (a
// cluster follower's state), a new image is listed again and again and
// gets no thumbnail: its request waits in the store; once the pipeline
// runs again it is made, with no listing asking.
func TestThumbnails_ListingNeverRenders(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	if err := s.Node.Pipeline.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	doc := servertest.AddDoc(t, s, tok, "", map[string]any{"path": "still/scan.png", "contentType": "image/png", "isBase64": true,
		"content": base64.StdEncoding.EncodeToString(quiretest.PNG(quiretest.TextImage("Hi")))})
	for range 5 {
		if u := thumbURLs(t, s.Do(http.MethodGet, "/folders?path=still", nil, tok), "documents")["scan.png"]; u != "" {
			t.Fatalf("a thumbnailUrl with the pipeline stopped: %s", u)
		}
	}
	pending, err := s.Node.DB.PendingThumbnails(10)
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 1 || pending[0].DocumentID != doc {
		t.Fatalf("pending thumbnails after the listings: %+v", pending)
	}
	if n := thumbnailsMade(t, s); n != 0 {
		t.Fatalf("quire_thumbnails_made_total %d with the pipeline stopped", n)
	}
	if err := s.Node.Pipeline.Start(); err != nil {
		t.Fatal(err)
	}
	quiretest.Eventually(t, "the thumbnail made once the pipeline runs", 60*time.Second, func() bool {
		return len(thumbnailArtifacts(t, s, tok, doc)) == 1
	})
	if pending, err := s.Node.DB.PendingThumbnails(10); err != nil || len(pending) != 0 {
		t.Fatalf("pending thumbnails after it was made: %+v, %v", pending, err)
	}
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

// TestThumbnails_EarlierStore: a store written before thumbnails were
// recorded with the content (commands of RulesDefaultsByType; an earlier
// thumbnail made when a listing asked, an artifact whose metadata
// thumbnailOf names the content) gets its thumbnails once the server
// starts, with no listing asking: a PDF's and an image's are made, the
// earlier one of a document's content is named as it is, not made again;
// the walk that found them has ended, and a restart makes none again.
func TestThumbnails_EarlierStore(t *testing.T) {
	dir := t.TempDir()
	const (
		pdf   = "77777777-0000-4000-8000-000000000001"
		pic   = "77777777-0000-4000-8000-000000000002"
		kept  = "77777777-0000-4000-8000-000000000003"
		thumb = "77777777-0000-4000-8000-000000000009"
	)
	db, err := storage.Open(storage.Config{Dir: filepath.Join(dir, "db")})
	if err != nil {
		t.Fatal(err)
	}
	earlier := func(op storage.Op, payload any) {
		c := storage.MustCommand(op, "default", "joe", time.Now(), payload)
		c.Rules = storage.RulesDefaultsByType
		if _, err := db.Apply(context.Background(), c); err != nil {
			t.Fatalf("%s: %v", op, err)
		}
	}
	doc := func(id, name, ct string, body []byte, category string, meta ...storage.Metadata) storage.NewDocument {
		m, chunks, ok := storage.SmallContent(body)
		if !ok {
			t.Fatalf("%s: no small content", name)
		}
		return storage.NewDocument{Document: storage.Document{DocumentID: id, Path: name, ContentType: ct, ArtifactCategory: category, Metadata: meta},
			Content: &m, Chunks: chunks}
	}
	earlier(storage.OpAddDocuments, storage.AddDocuments{Docs: []storage.NewDocument{
		doc(pdf, "old/letter.pdf", "application/pdf", quiretest.TextPDF("Dear Anna"), ""),
		doc(pic, "old/scan.png", "image/png", quiretest.PNG(quiretest.TextImage("Hi")), ""),
		doc(kept, "old/kept.png", "image/png", quiretest.PNG(quiretest.TextImage("Kept")), ""),
	}})
	k, err := db.GetDocument("default", kept)
	if err != nil {
		t.Fatal(err)
	}
	earlier(storage.OpAddArtifact, storage.AddArtifact{DocumentID: kept, Artifact: doc(thumb, "", "image/png", quiretest.PNG(quiretest.TextImage("K")),
		"THUMBNAIL", storage.Metadata{Key: "thumbnailOf", Value: k.ContentSHA256})})
	if p, err := db.PendingThumbnails(10); err != nil || len(p) != 0 {
		t.Fatalf("the earlier store has pending thumbnails: %+v, %v", p, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s := quiretest.StartServer(t, dir)
	tok := s.Admin()
	quiretest.Eventually(t, "the earlier documents' thumbnails, without a listing", 60*time.Second, func() bool {
		return len(thumbnailArtifacts(t, s, tok, pdf)) == 1 && len(thumbnailArtifacts(t, s, tok, pic)) == 1 && thumbnailsMade(t, s) == 2
	})
	if ids := thumbnailArtifacts(t, s, tok, kept); len(ids) != 1 || ids[0] != thumb {
		t.Fatalf("the earlier thumbnail of kept.png: %v, want only %s", ids, thumb)
	}
	urls := thumbURLs(t, s.Do(http.MethodGet, "/folders?path=old", nil, tok), "documents")
	for _, name := range []string{"letter.pdf", "scan.png", "kept.png"} {
		if urls[name] == "" {
			t.Errorf("%s has no thumbnailUrl: %v", name, urls)
		}
	}
	if r := s.Do(http.MethodGet, urls["kept.png"], nil, ""); r.Status != http.StatusOK || !strings.Contains(r.Header.Get("Content-Type"), "image/png") {
		t.Errorf("the earlier thumbnail served: %d %s", r.Status, r.Header.Get("Content-Type"))
	}
	if _, step, err := s.Node.DB.ThumbnailWalk(1000, 64); err != nil || step != nil {
		t.Fatalf("the walk has not ended: %+v, %v", step, err)
	}
	s.Close()

	// A restart walks nothing again and makes nothing.
	s = quiretest.StartServer(t, dir)
	if p, err := s.Node.DB.PendingThumbnails(10); err != nil || len(p) != 0 {
		t.Fatalf("pending thumbnails after a restart: %+v, %v", p, err)
	}
	for _, d := range []string{pdf, pic, kept} {
		if ids := thumbnailArtifacts(t, s, s.Admin(), d); len(ids) != 1 {
			t.Errorf("%s after a restart: thumbnails %v", d, ids)
		}
	}
	if n := thumbnailsMade(t, s); n != 0 {
		t.Errorf("quire_thumbnails_made_total %d after a restart, want 0", n)
	}
}

// TestThumbnails_CachedLinks: listings within one window name the same
// thumbnailUrl, so a browser loads a thumbnail once: it expires at least
// an hour later, at the end of a half-hour window, and is served with
// Cache-Control letting a browser keep it until then; a document's own
// download (its content may change under the same URL) is not.
func TestThumbnails_CachedLinks(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	doc := servertest.AddDoc(t, s, tok, "", map[string]any{"path": "cached/scan.png", "contentType": "image/png", "isBase64": true,
		"content": base64.StdEncoding.EncodeToString(quiretest.PNG(quiretest.TextImage("Hi")))})
	quiretest.Eventually(t, "the thumbnail", 60*time.Second, func() bool { return len(thumbnailArtifacts(t, s, tok, doc)) == 1 })
	list := func() string {
		return thumbURLs(t, s.Do(http.MethodGet, "/folders?path=cached", nil, tok), "documents")["scan.png"]
	}
	a, b := list(), list()
	if a != b { // the two straddle a window's end: the next two do not
		a, b = b, list()
	}
	if a == "" || a != b {
		t.Fatalf("two listings name other links:\n%s\n%s", a, b)
	}
	u, err := url.Parse(a)
	if err != nil {
		t.Fatal(err)
	}
	exp, err := strconv.ParseInt(u.Query().Get("expires"), 10, 64)
	if err != nil {
		t.Fatalf("expires of %s: %v", a, err)
	}
	now := time.Now().Unix()
	if exp%1800 != 0 || exp < now+3600-60 || exp > now+5400 {
		t.Fatalf("the link expires at %d, %d s from now: want the end of a half-hour window an hour or more away", exp, exp-now)
	}
	r := s.Do(http.MethodGet, a, nil, "")
	servertest.MustStatus(t, r, http.StatusOK)
	cc := r.Header.Get("Cache-Control")
	maxAge, ok := strings.CutPrefix(cc, "private, max-age=")
	n, err := strconv.ParseInt(maxAge, 10, 64)
	if !ok || err != nil || n <= 0 || n > exp-now+1 || n < exp-now-60 {
		t.Fatalf("Cache-Control %q, want private until the link expires (%d s)", cc, exp-now)
	}
	r = s.Do(http.MethodGet, "/documents/"+doc+"/url", nil, tok)
	servertest.MustStatus(t, r, http.StatusOK)
	r = s.Do(http.MethodGet, quiretest.Str(t, r.JSON(t), "url"), nil, "")
	servertest.MustStatus(t, r, http.StatusOK)
	if cc := r.Header.Get("Cache-Control"); strings.Contains(cc, "max-age") {
		t.Errorf("a document's download is cached: %q", cc)
	}
}
