package content_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// getBytes GETs a signed URL and returns the status, body and ETag.
func getBytes(t *testing.T, u string) (int, []byte, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b, resp.Header.Get("ETag")
}

// whitePNG is a w×h white PNG.
func whitePNG(w, h int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	var b bytes.Buffer
	png.Encode(&b, img)
	return b.Bytes()
}

// changedPixels counts the pixels of r that are not white.
func changedPixels(t *testing.T, b []byte, r image.Rectangle, w, h int) int {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("stamped PNG does not decode: %v", err)
	}
	if img.Bounds().Dx() != w || img.Bounds().Dy() != h {
		t.Fatalf("stamped PNG is %v, want %dx%d", img.Bounds(), w, h)
	}
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA); c != (color.RGBA{255, 255, 255, 255}) {
				n++
			}
		}
	}
	return n
}

func sha(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }

// TestWatermarks_ServedStamped: a document carrying a WATERMARK
// attribute is served stamped through /url, /content, versions and
// archives, on either site: a PDF keeps parsing and gains the text, an
// image keeps its size and changes where the mark is, never the stored
// bytes or their ETag. bypassWatermark serves the original to GOVERN
// only; content that cannot be stamped is refused, never served as is.
func TestWatermarks_ServedStamped(t *testing.T) {
	quiretest.NeedProgram(t, "qpdf", "qpdf")
	quiretest.NeedProgram(t, "pdfinfo", "poppler-utils")
	s := quiretest.NewServer(t)
	admin := s.Admin()
	pdf := quiretest.TextPDF("Hello world")
	img := whitePNG(200, 100)
	mark := map[string]any{"text": "QUIREMARK", "fontSize": 20, "opacity": 1,
		"position": map[string]any{"xAnchor": "LEFT", "yAnchor": "TOP", "xOffset": 4, "yOffset": 4}}
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			sid := site.Name
			reader, writer, gov := s.Token("r", sid+"_read"), s.Token("w", sid), s.Token("g", sid+"_govern")
			servertest.MustStatus(t, s.Do(http.MethodPost, "/attributes"+site.Query, map[string]any{"attribute": map[string]any{"key": "wm", "dataType": "WATERMARK", "watermark": mark}}, admin), http.StatusCreated)
			servertest.MustStatus(t, s.Do(http.MethodPost, "/attributes"+site.Query, map[string]any{"attribute": map[string]any{"key": "note"}}, admin), http.StatusCreated)
			r := s.Do(http.MethodGet, "/attributes/wm"+site.Query, nil, reader)
			servertest.MustStatus(t, r, http.StatusOK)
			if !strings.Contains(string(r.Body), `"text":"QUIREMARK"`) || !strings.Contains(string(r.Body), `"dataType":"WATERMARK"`) {
				t.Errorf("attribute = %s", r.Body)
			}
			wm := []map[string]any{{"key": "wm"}}
			p := servertest.AddDoc(t, s, writer, site.Query, map[string]any{"path": "wm/a.pdf", "contentType": "application/pdf", "isBase64": true, "content": base64.StdEncoding.EncodeToString(pdf), "attributes": wm})
			g := servertest.AddDoc(t, s, writer, site.Query, map[string]any{"path": "wm/b.png", "contentType": "image/png", "isBase64": true, "content": base64.StdEncoding.EncodeToString(img), "attributes": wm})
			txt := servertest.AddDoc(t, s, writer, site.Query, map[string]any{"path": "wm/c.txt", "contentType": "text/plain", "content": "secret", "attributes": wm})

			// /url, as a reader: stamped PDF (parses, carries the text,
			// not the stored bytes or ETag).
			r = s.Do(http.MethodGet, "/documents/"+p+"/url"+site.Query, nil, reader)
			servertest.MustStatus(t, r, http.StatusOK)
			u := quiretest.Str(t, r.JSON(t), "url")
			st, b, etag := getBytes(t, u)
			if st != http.StatusOK || bytes.Equal(b, pdf) || !bytes.HasPrefix(b, []byte("%PDF")) {
				t.Fatalf("stamped PDF: %d, %d bytes, same as stored %v", st, len(b), bytes.Equal(b, pdf))
			}
			if txt := servertest.PdfText(t, b); !strings.Contains(txt, "QUIREMARK") || !strings.Contains(txt, "Hello world") {
				t.Errorf("stamped PDF text = %q", txt)
			}
			if etag == "" || etag == `"`+sha(pdf)+`"` || etag != `"`+sha(b)+`"` {
				t.Errorf("ETag %s: the stamped bytes' (%s), not the stored's", etag, sha(b))
			}
			// The signed URL cannot be turned into a bypass.
			if st, _, _ := getBytes(t, u+"&bypassWatermark=true"); st != http.StatusForbidden {
				t.Errorf("bypass added to a signed URL: %d", st)
			}

			// The image through /content's contentUrl: same size, the
			// mark's corner changed, the opposite corner not.
			r = s.Do(http.MethodGet, "/documents/"+g+"/content"+site.Query, nil, reader)
			servertest.MustStatus(t, r, http.StatusOK)
			st, b, _ = getBytes(t, quiretest.Str(t, r.JSON(t), "contentUrl"))
			if st != http.StatusOK {
				t.Fatalf("stamped PNG: %d %s", st, b)
			}
			if n := changedPixels(t, b, image.Rect(0, 0, 140, 40), 200, 100); n < 50 {
				t.Errorf("%d pixels changed where the mark is", n)
			}
			if n := changedPixels(t, b, image.Rect(150, 60, 200, 100), 200, 100); n != 0 {
				t.Errorf("%d pixels changed away from the mark", n)
			}

			// A signature envelope or a generated document would hand out
			// the stored bytes: a writer is refused, a governor is not.
			for _, tc := range []struct {
				path string
				body any
			}{
				{"/esignature/local/" + p + "/envelopes", map[string]any{"signers": []map[string]any{{"name": "Ann", "email": "ann@example.com"}}}},
				{"/documents/" + p + "/generate", map[string]any{"outputType": "PDF", "insertDocuments": []map[string]any{{"documentId": g, "position": "APPEND"}}}},
			} {
				r = s.Do(http.MethodPost, tc.path+site.Query, tc.body, writer)
				if r.Status != http.StatusUnauthorized || !strings.Contains(string(r.Body), "carries a watermark") {
					t.Errorf("POST %s by a writer: %d %s, want 401", tc.path, r.Status, r.Body)
				}
				if r = s.Do(http.MethodPost, tc.path+site.Query, tc.body, gov); strings.Contains(string(r.Body), "carries a watermark") {
					t.Errorf("POST %s by a governor: %d %s", tc.path, r.Status, r.Body)
				}
			}

			// A RESIZE rendition made a document of its own (path): it
			// carries the source's watermark, so it is served stamped too.
			servertest.MustStatus(t, s.Do(http.MethodPost, "/documents/"+g+"/actions"+site.Query, map[string]any{"actions": []map[string]any{
				{"type": "RESIZE", "parameters": map[string]any{"width": "200", "height": "100", "path": "copies/"}}}}, writer), http.StatusOK)
			if st := servertest.WaitActions(t, s, writer, site.Query, g); len(st) == 0 || st[len(st)-1] != "COMPLETE" {
				t.Fatalf("RESIZE: %v", st)
			}
			acts := servertest.Actions(t, s, writer, site.Query, g)
			copyID, _ := quiretest.Obj(t, acts[len(acts)-1]["metadata"])["documentId"].(string)
			if copyID == "" {
				t.Fatalf("RESIZE with a path made no document: %v", acts[len(acts)-1])
			}
			r = s.Do(http.MethodGet, "/documents/"+copyID+"/url"+site.Query, nil, writer)
			servertest.MustStatus(t, r, http.StatusOK)
			if st, b, _ := getBytes(t, quiretest.Str(t, r.JSON(t), "url")); st != http.StatusOK || changedPixels(t, b, image.Rect(0, 0, 140, 40), 200, 100) < 50 {
				t.Errorf("the RESIZE copy of a watermarked image is served unstamped (%d)", st)
			}

			// bypassWatermark: GOVERN gets the stored bytes; READ and
			// WRITE are refused.
			for _, route := range []string{"/url", "/content"} {
				r = s.Do(http.MethodGet, "/documents/"+p+route+servertest.Query(site.Query, "bypassWatermark=true"), nil, gov)
				servertest.MustStatus(t, r, http.StatusOK)
				u := quiretest.Str(t, r.JSON(t), map[string]string{"/url": "url", "/content": "contentUrl"}[route])
				if st, b, etag := getBytes(t, u); st != http.StatusOK || !bytes.Equal(b, pdf) || etag != `"`+sha(pdf)+`"` {
					t.Errorf("%s bypassed: %d, stored bytes %v, ETag %s", route, st, bytes.Equal(b, pdf), etag)
				}
				for _, tok := range []string{reader, writer} {
					servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+p+route+servertest.Query(site.Query, "bypassWatermark=true"), nil, tok), http.StatusUnauthorized)
				}
			}
			servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+p+"/url"+servertest.Query(site.Query, "bypassWatermark=yes"), nil, gov), http.StatusBadRequest)

			// Text cannot be stamped: refused, but to a bypass.
			for _, route := range []string{"/url", "/content"} {
				r = s.Do(http.MethodGet, "/documents/"+txt+route+site.Query, nil, reader)
				servertest.MustStatus(t, r, http.StatusBadRequest)
				if !strings.Contains(string(r.Body), "cannot be watermarked") {
					t.Errorf("%s of text: %s", route, r.Body)
				}
			}
			r = s.Do(http.MethodGet, "/documents/"+txt+"/content"+servertest.Query(site.Query, "bypassWatermark=true"), nil, gov)
			servertest.MustStatus(t, r, http.StatusOK)
			servertest.MustBody(t, r, `{"content":"secret","contentType":"text/plain","isBase64":false}`)

			// An earlier version is stamped too.
			servertest.MustStatus(t, s.Do(http.MethodPatch, "/documents/"+p+site.Query, map[string]any{"contentType": "application/pdf", "isBase64": true, "content": base64.StdEncoding.EncodeToString(quiretest.TextPDF("Second"))}, writer), http.StatusOK)
			vs := servertest.VersionsOf(t, s, admin, site.Query, p, "")
			if len(vs) < 2 {
				t.Fatalf("versions = %v", vs)
			}
			for _, v := range vs {
				k := quiretest.Str(t, v, "versionKey")
				r = s.Do(http.MethodGet, "/documents/"+p+"/url"+servertest.Query(site.Query, "versionKey="+k), nil, reader)
				servertest.MustStatus(t, r, http.StatusOK)
				if _, b, _ := getBytes(t, quiretest.Str(t, r.JSON(t), "url")); !strings.Contains(servertest.PdfText(t, b), "QUIREMARK") {
					t.Errorf("version %s served unstamped", k)
				}
			}

			// Archives: stamped for a reader, stored bytes with a bypass,
			// refused when an entry cannot be stamped.
			r = s.Do(http.MethodPost, "/documents/compress"+site.Query, map[string]any{"documentIds": []string{g}}, reader)
			servertest.MustStatus(t, r, http.StatusCreated)
			files, _ := servertest.Unzip(t, quiretest.Str(t, r.JSON(t), "downloadUrl"))
			if n := changedPixels(t, []byte(files["wm/b.png"]), image.Rect(0, 0, 140, 40), 200, 100); n < 50 {
				t.Errorf("archived PNG: %d pixels changed where the mark is", n)
			}
			r = s.Do(http.MethodPost, "/documents/compress"+servertest.Query(site.Query, "bypassWatermark=true"), map[string]any{"documentIds": []string{g}}, gov)
			servertest.MustStatus(t, r, http.StatusCreated)
			if files, _ := servertest.Unzip(t, quiretest.Str(t, r.JSON(t), "downloadUrl")); files["wm/b.png"] != string(img) {
				t.Errorf("bypassed archive: PNG is not the stored one")
			}
			servertest.MustStatus(t, s.Do(http.MethodPost, "/documents/compress"+servertest.Query(site.Query, "bypassWatermark=true"), map[string]any{"documentIds": []string{g}}, reader), http.StatusUnauthorized)
			servertest.MustStatus(t, s.Do(http.MethodPost, "/documents/compress"+site.Query, map[string]any{"documentIds": []string{g, txt}}, reader), http.StatusBadRequest)

			// Lifting a watermark is GOVERN's, as a bypass is: a writer
			// can neither take the attribute off nor change the mark.
			r = s.Do(http.MethodDelete, "/documents/"+g+"/attributes/wm"+site.Query, nil, writer)
			servertest.MustStatus(t, r, http.StatusBadRequest)
			servertest.MustBody(t, r, `{"errors":[{"key":"wm","error":"removing a watermark attribute needs GOVERN permission"}]}`)
			r = s.Do(http.MethodPut, "/documents/"+g+"/attributes"+site.Query, map[string]any{"attributes": []map[string]any{{"key": "note", "stringValue": "x"}}}, writer)
			servertest.MustStatus(t, r, http.StatusBadRequest)
			servertest.MustBody(t, r, `{"errors":[{"key":"wm","error":"removing a watermark attribute needs GOVERN permission"}]}`)
			servertest.MustStatus(t, s.Do(http.MethodPatch, "/attributes/wm"+site.Query, map[string]any{"attribute": map[string]any{"watermark": map[string]any{"text": ".", "opacity": 0.01}}}, writer), http.StatusUnauthorized)
			r = s.Do(http.MethodGet, "/documents/"+g+"/url"+site.Query, nil, reader)
			servertest.MustStatus(t, r, http.StatusOK)
			if _, b, _ := getBytes(t, quiretest.Str(t, r.JSON(t), "url")); bytes.Equal(b, img) {
				t.Errorf("served unstamped after a writer's attempts")
			}
			servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+g+"/attributes/wm"+site.Query, nil, gov), http.StatusOK)
			r = s.Do(http.MethodGet, "/documents/"+g+"/url"+site.Query, nil, reader)
			servertest.MustStatus(t, r, http.StatusOK)
			if _, b, _ := getBytes(t, quiretest.Str(t, r.JSON(t), "url")); !bytes.Equal(b, img) {
				t.Errorf("the watermark GOVERN removed is still stamped")
			}
		})
	}
}

// TestWatermarks_DefinitionsAndWebDAV: watermark definitions are checked
// field by field (FormKiQ's error shape), a watermark attribute on a
// document takes no value, an update changes the definition, and WebDAV
// serves the stamped copy and refuses to COPY it.
func TestWatermarks_DefinitionsAndWebDAV(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	servertest.MustStatus(t, s.Do(http.MethodPost, "/attributes", map[string]any{"attribute": map[string]any{"key": "plain"}}, tok), http.StatusCreated)
	servertest.MustStatus(t, s.Do(http.MethodPost, "/attributes", map[string]any{"attribute": map[string]any{"key": "wm", "dataType": "WATERMARK", "watermark": map[string]any{"text": "DRAFT"}}}, tok), http.StatusCreated)
	def := func(wm any) map[string]any {
		return map[string]any{"attribute": map[string]any{"key": "w2", "dataType": "WATERMARK", "watermark": wm}}
	}
	for _, tt := range []struct {
		name, method, path string
		body               any
		want               string
	}{
		{"no watermark", "POST", "/attributes", map[string]any{"attribute": map[string]any{"key": "w2", "dataType": "WATERMARK"}},
			`{"errors":[{"key":"watermark","error":"'watermark' is required for 'WATERMARK' attributes"}]}`},
		{"no text", "POST", "/attributes", def(map[string]any{"fontSize": 10}),
			`{"errors":[{"key":"watermark.text","error":"'text' is required"}]}`},
		{"bad fields", "POST", "/attributes", def(map[string]any{"text": "x", "fontSize": 0, "rotation": 400, "scale": "HUGE", "opacity": 0, "position": map[string]any{"xAnchor": "UP", "yAnchor": "LEFT", "xOffset": 1e9}}),
			`{"errors":[{"key":"watermark.fontSize","error":"'fontSize' must be between 1 and 400"},{"key":"watermark.rotation","error":"'rotation' must be between -360 and 360 degrees"},{"key":"watermark.scale","error":"invalid 'scale': use FIT_BEST or ORIGINAL"},{"key":"watermark.opacity","error":"'opacity' must be over 0 and at most 1"},{"key":"watermark.position.xAnchor","error":"invalid 'xAnchor': use LEFT, RIGHT or CENTER"},{"key":"watermark.position.yAnchor","error":"invalid 'yAnchor': use TOP, BOTTOM or CENTER"},{"key":"watermark.position.xOffset","error":"'xOffset' must be between -100000 and 100000"}]}`},
		{"image watermark", "POST", "/attributes", def(map[string]any{"text": "x", "imageDocumentId": "abc"}),
			`{"errors":[{"key":"watermark.imageDocumentId","error":"image watermarks are not supported: use 'text'"}]}`},
		{"unknown field", "POST", "/attributes", def(map[string]any{"text": "x", "colour": "red"}),
			`{"errors":[{"key":"watermark","error":"unknown field 'colour' in 'watermark'"}]}`},
		{"not an object", "POST", "/attributes", def("DRAFT"),
			`{"errors":[{"key":"watermark","error":"'watermark' must be an object"}]}`},
		{"text out of Latin-1", "POST", "/attributes", def(map[string]any{"text": "草稿"}),
			`{"errors":[{"key":"watermark.text","error":"'text' may hold printable Latin-1 characters only"}]}`},
		{"watermark on a STRING attribute", "POST", "/attributes", map[string]any{"attribute": map[string]any{"key": "w3", "watermark": map[string]any{"text": "x"}}},
			`{"errors":[{"key":"watermark","error":"'watermark' is only for 'WATERMARK' attributes"}]}`},
		{"watermark added to a STRING attribute", "PATCH", "/attributes/plain", map[string]any{"attribute": map[string]any{"watermark": map[string]any{"text": "x"}}},
			`{"errors":[{"key":"watermark","error":"'watermark' is only for 'WATERMARK' attributes"}]}`},
		{"invalid update", "PATCH", "/attributes/wm", map[string]any{"attribute": map[string]any{"watermark": map[string]any{"text": ""}}},
			`{"errors":[{"key":"watermark.text","error":"'text' is required"}]}`},
		{"a value on a document", "POST", "/documents", map[string]any{"content": "x", "attributes": []map[string]any{{"key": "wm", "stringValue": "DRAFT"}}},
			`{"errors":[{"key":"wm","error":"attribute does not support a value"}]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(tt.method, tt.path, tt.body, tok)
			servertest.MustStatus(t, r, http.StatusBadRequest)
			servertest.MustBody(t, r, tt.want)
		})
	}
	r := s.Do(http.MethodGet, "/attributes/wm", nil, tok)
	servertest.MustStatus(t, r, http.StatusOK)
	servertest.MustBody(t, r, `{"attribute":{"dataType":"WATERMARK","key":"wm","type":"STANDARD","watermark":{"text":"DRAFT"}}}`)
	servertest.MustStatus(t, s.Do(http.MethodPatch, "/attributes/wm", map[string]any{"attribute": map[string]any{"watermark": map[string]any{"text": "FINAL", "scale": "FIT_BEST", "rotation": 45}}}, tok), http.StatusOK)
	r = s.Do(http.MethodGet, "/attributes/wm", nil, tok)
	if !strings.Contains(string(r.Body), `"text":"FINAL"`) {
		t.Errorf("updated definition: %s", r.Body)
	}

	img := whitePNG(200, 100)
	servertest.AddDoc(t, s, tok, "", map[string]any{"path": "wm/d.png", "contentType": "image/png", "isBase64": true, "content": base64.StdEncoding.EncodeToString(img), "attributes": []map[string]any{{"key": "wm"}}})
	key := servertest.APIKey(t, s, "READ", "WRITE", "DELETE")
	code, body, _ := servertest.DavDo(t, s, "GET", "/dav/default/wm/d.png", key, nil, nil)
	if code != http.StatusOK || body == string(img) {
		t.Fatalf("WebDAV GET: %d, stored bytes %v", code, body == string(img))
	}
	if n := changedPixels(t, []byte(body), image.Rect(0, 0, 200, 100), 200, 100); n < 50 {
		t.Errorf("WebDAV GET: %d pixels stamped", n)
	}
	if code, _, _ := servertest.DavDo(t, s, "COPY", "/dav/default/wm/d.png", key, nil, map[string]string{"Destination": s.URL + "/dav/default/wm/copy.png"}); code != http.StatusForbidden {
		t.Errorf("WebDAV COPY of a watermarked document: %d, want 403", code)
	}
	// A folder holding it: refused before anything is copied.
	code, body, _ = servertest.DavDo(t, s, "COPY", "/dav/default/wm", key, nil, map[string]string{"Destination": s.URL + "/dav/default/wm2", "Depth": "infinity"})
	if code != http.StatusForbidden || !strings.Contains(body, "carries a watermark") {
		t.Errorf("WebDAV COPY of a folder holding a watermarked document: %d %s, want 403", code, body)
	}
	if r := s.Do(http.MethodGet, "/folders?path=wm2", nil, tok); r.Status == http.StatusOK && strings.Contains(string(r.Body), "d.png") {
		t.Errorf("the refused folder COPY copied: %s", r.Body)
	}
}
