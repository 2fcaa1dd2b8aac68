// Package console embeds the web console (issue 31): standard ES modules
// and a style sheet, no build step (DESIGN.md). The server serves them at
// /console/ from the table Assets builds once at start: each file with its
// content type, a strong ETag and a gzip copy, so nothing is compressed
// per request.
package console

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"io/fs"
	"mime"
	"path"
	"sort"
	"strings"
	"sync"
)

//go:generate go run ./internal/bundle/gen

//go:embed index.html app.css app.bundle.js favicon.svg icons js pages i18n
var files embed.FS

// FS is the console's files, rooted at the console folder (index.html at
// its top).
func FS() fs.FS { return files }

// Asset is one file of the console, ready to serve.
type Asset struct {
	Name        string // path inside the console, "index.html", "js/api.js"
	ContentType string
	Body        []byte
	Gzip        []byte // gzip of Body (best compression)
	ETag        string // strong, quoted
}

var (
	once   sync.Once
	assets map[string]*Asset
)

// Assets returns every file of the console by its path.
func Assets() map[string]*Asset {
	once.Do(func() {
		assets = map[string]*Asset{}
		_ = fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			body, err := fs.ReadFile(files, p)
			if err != nil {
				return err
			}
			var z bytes.Buffer
			w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
			_, _ = w.Write(body)
			_ = w.Close()
			sum := sha256.Sum256(body)
			assets[p] = &Asset{Name: p, ContentType: contentType(p), Body: body, Gzip: z.Bytes(),
				ETag: `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`}
			return nil
		})
	})
	return assets
}

// Lookup returns the file at p ("" and "/" are index.html).
func Lookup(p string) (*Asset, bool) {
	p = strings.TrimPrefix(p, "/")
	if p == "" {
		p = "index.html"
	}
	a, ok := Assets()[p]
	return a, ok
}

// Names lists the console's files, sorted.
func Names() []string {
	out := make([]string, 0, len(Assets()))
	for n := range Assets() {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func contentType(p string) string {
	switch path.Ext(p) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".html":
		return "text/html; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	}
	if t := mime.TypeByExtension(path.Ext(p)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// CSP is the console's Content-Security-Policy: its own files only, no
// inline script or style, no framing of the console; previews load
// same-origin signed URLs (frame-src, img-src) and blob: URLs.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; " +
	"connect-src 'self'; frame-src 'self' blob:; object-src 'self' blob:; media-src 'self' blob:; font-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
