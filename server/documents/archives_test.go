package documents_test

import (
	"archive/zip"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

func TestCompressDocuments(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	png := quiretest.PNG(quiretest.TextImage("zip"))
	text := strings.Repeat("compressible words ", 2000)
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			a := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "zip/a.txt", "contentType": "text/plain", "content": text})
			b := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "zip/b.png", "contentType": "image/png", "isBase64": true, "content": base64.StdEncoding.EncodeToString(png)})
			art := servertest.AddArtifact(t, s, tok, site.Query, a, map[string]any{"content": "the artifact", "contentType": "text/plain"})
			r := s.Do(http.MethodPost, "/documents/compress"+site.Query, map[string]any{"documentIds": []string{a, b}}, tok)
			servertest.MustStatus(t, r, http.StatusCreated)
			u := quiretest.Str(t, r.JSON(t), "downloadUrl")
			// The archive keeps what was asked for: a later upload does not change it.
			servertest.MustStatus(t, s.Do(http.MethodPatch, "/documents/"+a+site.Query, map[string]any{"content": "changed", "contentType": "text/plain"}, tok), http.StatusOK)
			files, methods := servertest.Unzip(t, u)
			want := map[string]string{"zip/a.txt": text, "zip/b.png": string(png), "zip/a.txt.artifacts/" + art: "the artifact"}
			if len(files) != len(want) {
				t.Fatalf("files %v", keys(files))
			}
			for name, content := range want {
				if files[name] != content {
					t.Errorf("%s: %d bytes, want %d", name, len(files[name]), len(content))
				}
			}
			if methods["zip/a.txt"] != zip.Deflate || methods["zip/b.png"] != zip.Store {
				t.Errorf("methods %v: text deflated, PNG stored", methods)
			}

			r = s.Do(http.MethodPost, "/documents/compress"+site.Query, map[string]any{"documents": []map[string]any{{"documentId": a, "artifactId": art}}}, tok)
			servertest.MustStatus(t, r, http.StatusCreated)
			files, _ = servertest.Unzip(t, quiretest.Str(t, r.JSON(t), "downloadUrl"))
			if len(files) != 1 || files["zip/a.txt.artifacts/"+art] != "the artifact" {
				t.Errorf("one artifact: %v", keys(files))
			}

			for _, tt := range []struct {
				name   string
				body   any
				status int
			}{
				{"nothing", map[string]any{}, 400},
				{"unknown document", map[string]any{"documentIds": []string{"6f1c1e55-1111-4222-8333-444455556666"}}, 404},
				{"artifact of another document", map[string]any{"documents": []map[string]any{{"documentId": b, "artifactId": art}}}, 404},
				{"too many", map[string]any{"documentIds": make([]string, 1001)}, 400},
			} {
				t.Run(tt.name, func(t *testing.T) {
					servertest.MustStatus(t, s.Do(http.MethodPost, "/documents/compress"+site.Query, tt.body, tok), tt.status)
				})
			}
			resp, err := http.Get(strings.Replace(u, "signature=", "signature=x", 1))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("a changed signature: %d", resp.StatusCode)
			}
		})
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestCompressEntryNamesStayInside: document paths are free text, so
// "..", "\", drive letters and absolute paths reach /documents/compress;
// every ZIP entry name must stay inside the folder a naive unzip writes to,
// and no document may be lost (issue 29, finding 8).
func TestCompressEntryNamesStayInside(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	paths := []string{
		"../../evil.txt",
		"a/../../../etc/cron.d/x",
		`..\..\win.txt`,
		`C:\Windows\system32\y.dll`,
		"C:/boot.ini",
		"./b/./c.txt",
		"dir/..",
		`\\server\share\z.txt`,
		"ok/plain.txt",
	}
	var ids []string
	for _, p := range paths {
		ids = append(ids, servertest.AddDoc(t, s, tok, "", map[string]any{"path": p, "contentType": "text/plain", "content": "content of " + p}))
	}
	r := s.Do(http.MethodPost, "/documents/compress", map[string]any{"documentIds": ids}, tok)
	servertest.MustStatus(t, r, http.StatusCreated)
	files, _ := servertest.Unzip(t, quiretest.Str(t, r.JSON(t), "downloadUrl"))
	if len(files) != len(paths) {
		t.Errorf("%d entries %v, want %d (one per document)", len(files), keys(files), len(paths))
	}
	for name := range files {
		bad := name == "" || strings.Contains(name, `\`) || strings.HasPrefix(name, "/") || strings.Contains(name, ":")
		for _, seg := range strings.Split(name, "/") {
			if seg == ".." || seg == "." || seg == "" {
				bad = true
			}
		}
		if bad {
			t.Errorf("entry name %q can write outside the folder it is extracted to", name)
		}
	}
	if files["ok/plain.txt"] != "content of ok/plain.txt" {
		t.Errorf("a plain path changed: %v", keys(files))
	}
}
