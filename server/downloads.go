package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"quire/pipeline"
	"quire/storage"
)

// handleGetDownload serves GET /downloads/{siteId}/{documentId}: the
// target of signed download URLs. It supports single byte ranges.
func (s *Server) handleGetDownload(c *fiber.Ctx) error {
	site, doc := siteParam(c), strings.Clone(c.Params("documentId"))
	exp, in := strings.Clone(c.Query("expires")), strings.Clone(c.Query("inline"))
	fields := []string{http.MethodGet, site, doc, exp, in}
	vk := strings.Clone(c.Query("versionKey"))
	if vk != "" {
		fields = append(fields, vk) // versionDownloadURL
	}
	bypass := c.Query("bypassWatermark") == "true"
	if bypass {
		fields = append(fields, bypassField)
	}
	if !s.deps.Auth.VerifyURL(c.Query("signature"), fields...) {
		return errStatus(http.StatusForbidden, "invalid signature")
	}
	if err := checkURLExpiry(s.now(), exp); err != nil {
		return err
	}
	var rd *storage.ContentReader
	var d *storage.Document
	var err error
	if vk != "" {
		rd, d, err = s.openVersionDownload(site, doc, vk)
	} else {
		rd, d, err = s.db.OpenContent(site, doc)
	}
	if errors.Is(err, storage.ErrNotFound) && d != nil {
		return &storage.NotFoundError{Msg: fmt.Sprintf("Document %s content not found.", doc)}
	}
	if err != nil {
		return err
	}
	ctype := d.ContentType
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	name := d.Path
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	// SVG, HTML and the other active types are never rendered inline
	// (SERVICE-SPEC.md §5.12; serveStored).
	serveStored(c, storedFile{ContentType: ctype, Name: name, Inline: in == "true"})
	if !bypass {
		if sent, err := s.sendIfMarked(c, site, doc, rd, ctype); sent {
			return err
		}
	}
	c.Set(fiber.HeaderAcceptRanges, "bytes")
	c.Set(fiber.HeaderETag, `"`+d.ContentSHA256+`"`)
	size := rd.Size()
	start, end, partial, ok := parseRange(string(c.Request().Header.Peek(fiber.HeaderRange)), size)
	if !ok {
		rd.Close()
		c.Set(fiber.HeaderContentRange, fmt.Sprintf("bytes */%d", size))
		return c.SendStatus(http.StatusRequestedRangeNotSatisfiable)
	}
	if partial {
		c.Status(http.StatusPartialContent)
		c.Set(fiber.HeaderContentRange, fmt.Sprintf("bytes %d-%d/%d", start, end-1, size))
	}
	if c.Method() == http.MethodHead {
		rd.Close()
		c.Response().Header.SetContentLength(int(end - start))
		return nil
	}
	if _, err := rd.Seek(start, io.SeekStart); err != nil {
		rd.Close()
		return err
	}
	c.Response().SetBodyStream(&closingReader{Reader: io.LimitReader(rd, end-start), c: rd}, int(end-start))
	return nil
}

type closingReader struct {
	io.Reader
	c io.Closer
}

func (r *closingReader) Close() error { return r.c.Close() }

// parseRange parses a single "bytes=a-b" range. No header gives the whole
// content; an unsatisfiable or multi-range header gives ok=false (multi
// ranges are answered with the whole content instead).
func parseRange(h string, size int64) (start, end int64, partial, ok bool) {
	if h == "" || !strings.HasPrefix(h, "bytes=") || strings.Contains(h, ",") {
		return 0, size, false, true
	}
	spec := strings.TrimPrefix(h, "bytes=")
	a, b, found := strings.Cut(spec, "-")
	if !found {
		return 0, size, false, true
	}
	switch {
	case a == "":
		n, err := strconv.ParseInt(b, 10, 64)
		if err != nil || n <= 0 {
			return 0, 0, false, false
		}
		if n > size {
			n = size
		}
		return size - n, size, true, true
	default:
		s, err := strconv.ParseInt(a, 10, 64)
		if err != nil || s >= size {
			return 0, 0, false, false
		}
		e := size
		if b != "" {
			x, err := strconv.ParseInt(b, 10, 64)
			if err != nil || x < s {
				return 0, 0, false, false
			}
			if x < e-1 { // not x+1 < e: x+1 overflows at the int64 edge
				e = x + 1
			}
		}
		return s, e, true, true
	}
}

func asciiName(s string) string {
	b := []byte(s)
	for i, ch := range b {
		if ch < 0x20 || ch > 0x7e || ch == '"' || ch == '\\' {
			b[i] = '_'
		}
	}
	return string(b)
}

// handleGetDocumentURL serves GET /documents/{documentId}/url.
func (s *Server) handleGetDocumentURL(r *reqCtx) error {
	if v, err := s.requestedVersion(r); v != nil || err != nil {
		if err != nil {
			return err
		}
		return s.versionURL(r, v) // versions.go
	}
	d, err := s.servedDocument(r)
	if err != nil {
		return err
	}
	id := d.DocumentID
	resp := urlResponse{DocumentID: id}
	if d.ArtifactOf != "" {
		resp.DocumentID, resp.ArtifactID = d.ArtifactOf, id
	}
	dur, err := urlDuration(r)
	if err != nil {
		return err
	}
	short := false
	switch f := r.Query("format"); f {
	case "":
	case "short":
		short = true
	default:
		return invalid("format", "invalid 'format': only 'short' is supported")
	}
	if d.DeepLinkPath != "" && !d.HasContent {
		resp.URL = d.DeepLinkPath
		if short {
			if resp.URL, err = s.shortDocumentURL(r, id, d.DeepLinkPath, dur); err != nil {
				return err
			}
		}
		return r.JSON(resp)
	}
	if !d.HasContent {
		return &storage.NotFoundError{Msg: fmt.Sprintf("Document %s not found.", id)}
	}
	bypass, err := watermarkBypass(r)
	if err != nil {
		return err
	}
	if bypass && short {
		return invalid("bypassWatermark", "'bypassWatermark' is not supported with format 'short'")
	}
	if err := s.checkStampable(r.site, id, d.ContentType, bypass); err != nil {
		return err
	}
	resp.URL = s.downloadURL(s.linkBase(r.Ctx), r.site, id, r.QueryBool("inline"), bypass, dur)
	if short {
		if resp.URL, err = s.shortDocumentURL(r, id, "", dur); err != nil {
			return err
		}
	}
	return r.JSON(resp)
}

// sendIfMarked sends rd stamped when document doc carries watermarks
// (sent; rd is closed on failure); otherwise the caller sends rd as it is.
func (s *Server) sendIfMarked(c *fiber.Ctx, site, doc string, rd io.ReadCloser, ctype string) (sent bool, err error) {
	marks, err := s.docMarks(site, doc)
	if err != nil {
		rd.Close()
		return true, err
	}
	if len(marks) == 0 {
		return false, nil
	}
	return true, s.sendStamped(c, rd, ctype, marks)
}

// sendStamped answers a download of watermarked content: the whole
// stamped copy (no ranges), with its own ETag, never cached.
func (s *Server) sendStamped(c *fiber.Ctx, rd io.ReadCloser, ctype string, marks []pipeline.Mark) error {
	st, err := stamp(c.UserContext(), rd, ctype, marks)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderAcceptRanges, "none")
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderETag, `"`+st.SHA256+`"`)
	if c.Method() == http.MethodHead {
		st.Close()
		c.Response().Header.SetContentLength(int(st.Size))
		return nil
	}
	c.Response().SetBodyStream(st, int(st.Size))
	return nil
}
