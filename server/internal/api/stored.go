package api

import (
	"fmt"
	"mime"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"
)

func asciiName(s string) string {
	b := []byte(s)
	for i, ch := range b {
		if ch < 0x20 || ch > 0x7e || ch == '"' || ch == '\\' {
			b[i] = '_'
		}
	}
	return string(b)
}

// Stored bytes on Quire's origin (issue 43, finding 1): a document's
// content is whatever a writer uploaded. Served as the stored type on
// the console's origin, an HTML or SVG file would run its script with
// the console's cookies. Every answer that carries stored bytes (signed
// downloads of content, versions, artifacts and watermarked copies,
// published copies, archives, the e-sign document, WebDAV GET, the
// backup) therefore goes through ServeStored, and only routes whose row
// (server/routes.go) says stored may answer with them: TestStoredBytes_* walk the route
// table and fail for a route that answers stored bytes without these
// headers, and storedGuard turns a listed route that streams bytes
// without them into a 500 at run time.

// localStored marks a response whose safe headers ServeStored set.
const localStored = "storedBytes"

// StoredFile is stored bytes about to be answered.
type StoredFile struct {
	// ContentType is the stored type ("" is application/octet-stream).
	ContentType string
	// Name is the file name offered to a browser that saves it.
	Name string
	// Inline asks a browser to show the file rather than save it. It is
	// honoured for passive types only (activeType).
	Inline bool
}

// ServeStored sets the headers every answer of stored bytes carries:
// the type, Content-Disposition (attachment for every active type
// whatever the caller asked, as FormKiQ's S3 URLs serve them),
// X-Content-Type-Options: nosniff so a browser never guesses a more
// dangerous type, and Content-Security-Policy: sandbox so that a page
// opened anyway runs as a unique origin with no script and no cookies.
func ServeStored(c *fiber.Ctx, f StoredFile) {
	ctype := f.ContentType
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	disp := "attachment"
	if f.Inline && !activeType(ctype, f.Name) {
		disp = "inline"
	}
	if f.Name != "" {
		disp = fmt.Sprintf("%s; filename=%q; filename*=UTF-8''%s", disp, asciiName(f.Name), url.PathEscape(f.Name))
	}
	c.Set(fiber.HeaderContentType, ctype)
	c.Set(fiber.HeaderContentDisposition, disp)
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderContentSecurityPolicy, "sandbox")
	c.Locals(localStored, true)
}

// activeTypes are media types a browser runs script in (or renders as a
// document that can): HTML, XHTML, SVG, XML (XSLT, XHTML namespaces),
// JavaScript and the like.
var activeTypes = map[string]bool{
	"text/html": true, "application/xhtml+xml": true, "image/svg+xml": true, "text/xml": true,
	"application/xml": true, "text/xsl": true, "application/xslt+xml": true, "text/javascript": true,
	"application/javascript": true, "application/x-javascript": true, "text/ecmascript": true,
	"application/ecmascript": true, "text/x-javascript": true, "application/x-shockwave-flash": true,
}

// activeExts are file names a browser treats as active whatever the type.
var activeExts = []string{".html", ".htm", ".shtml", ".xhtml", ".xht", ".svg", ".svgz", ".xml", ".xsl", ".xslt", ".js", ".mjs", ".swf"}

// activeType reports whether stored content of type ctype named name can
// run script when a browser renders it: by its type (unparseable types
// count as active), any +xml type, or its file name.
func activeType(ctype, name string) bool {
	t, _, err := mime.ParseMediaType(ctype)
	if err != nil {
		return true
	}
	if activeTypes[t] || strings.HasSuffix(t, "+xml") || strings.Contains(t, "script") || strings.Contains(t, "html") {
		return true
	}
	n := strings.ToLower(name)
	for _, e := range activeExts {
		if strings.HasSuffix(n, e) {
			return true
		}
	}
	return false
}

// SafeHeaders sends X-Content-Type-Options: nosniff on every answer (no
// answer of Quire's needs a browser to guess its type), and refuses a
// streamed success of a stored-bytes route (RouteFlags.Stored) that did
// not go through ServeStored: a 500 and a log line, never the bytes.
func (s *Env) SafeHeaders(c *fiber.Ctx) error {
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	err := c.Next()
	if err != nil || c.Response().StatusCode() >= 300 || !c.Response().IsBodyStream() {
		return err
	}
	if s.Flags(c).Stored == "" {
		return nil
	}
	if ok, _ := c.Locals(localStored).(bool); ok {
		return nil
	}
	s.Log.Error("stored bytes answered without serveStored", "requestId", RequestID(c), "route", RouteName(c))
	c.Response().ResetBody()
	c.Response().Header.Del(fiber.HeaderContentDisposition)
	return errStoredUnsafe
}

// errStoredUnsafe is a stored-bytes route that skipped ServeStored: a
// bug, answered as a plain 500.
var errStoredUnsafe = fmt.Errorf("stored bytes without safe headers")
