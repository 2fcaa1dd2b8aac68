package content

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"quire/auth"
	"quire/pipeline/pdfwork"
	"quire/server/internal/api"
	"quire/storage"
)

// servedDocument is the record whose content GET /content and GET /url
// serve: the artifact the request names, else the document's promoted
// artifact, else the document.
func (s *Handlers) servedDocument(r *api.Request) (*storage.Document, error) {
	d, err := s.DB.GetDocument(r.Site, r.DocID())
	if err != nil || r.ArtifactID != "" || d.PromotedArtifactID == "" {
		return d, err
	}
	a, err := s.DB.GetArtifact(r.Site, d.DocumentID, d.PromotedArtifactID)
	if api.IsNotFound(err) {
		return d, nil // deleted meanwhile: its deletion clears the promotion
	}
	return a, err
}

// HandleGetDownload serves GET /downloads/{siteId}/{documentId}: the
// target of signed download URLs. It supports single byte ranges.
func (s *Handlers) HandleGetDownload(c *fiber.Ctx) error {
	site, doc := api.SiteParam(c), strings.Clone(c.Params("documentId"))
	exp, in := strings.Clone(c.Query("expires")), strings.Clone(c.Query("inline"))
	fields := []string{http.MethodGet, site, doc, exp, in}
	vk := strings.Clone(c.Query("versionKey"))
	if vk != "" {
		fields = append(fields, vk) // versionDownloadURL
	}
	bypass := c.Query("bypassWatermark") == "true"
	if bypass {
		fields = append(fields, api.BypassField)
	}
	if !s.Deps.Auth.VerifyURL(c.Query("signature"), fields...) {
		return api.ErrStatus(http.StatusForbidden, "invalid signature")
	}
	if err := api.CheckURLExpiry(s.Now(), exp); err != nil {
		return err
	}
	var rd *storage.ContentReader
	var d *storage.Document
	var err error
	if vk != "" {
		rd, d, err = s.openVersionDownload(site, doc, vk)
	} else {
		rd, d, err = s.DB.OpenContent(site, doc)
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
	// (SERVICE-SPEC.md §5.12; ServeStored).
	api.ServeStored(c, api.StoredFile{ContentType: ctype, Name: name, Inline: in == "true"})
	if !bypass {
		if sent, err := s.SendIfMarked(c, site, doc, rd, ctype); sent {
			return err
		}
	}
	c.Set(fiber.HeaderAcceptRanges, "bytes")
	c.Set(fiber.HeaderETag, `"`+d.ContentSHA256+`"`)
	if d.ArtifactOf != "" && d.ArtifactCategory == storage.ThumbnailCategory && vk == "" {
		// A thumbnail's content never changes (new content gets another
		// artifact): a browser may keep it while its URL is valid.
		if n, err := strconv.ParseInt(exp, 10, 64); err == nil && n > s.Now().Unix() {
			c.Set(fiber.HeaderCacheControl, fmt.Sprintf("private, max-age=%d", n-s.Now().Unix()))
		}
	}
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
	c.Response().SetBodyStream(&ClosingReader{Reader: io.LimitReader(rd, end-start), C: rd}, int(end-start))
	return nil
}

// ClosingReader is a body stream that closes C once sent.
type ClosingReader struct {
	io.Reader
	C io.Closer
}

func (r *ClosingReader) Close() error { return r.C.Close() }

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

// HandleGetDocumentURL serves GET /documents/{documentId}/url.
func (s *Handlers) HandleGetDocumentURL(r *api.Request) error {
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
	resp := api.UrlResponse{DocumentID: id}
	if d.ArtifactOf != "" {
		resp.DocumentID, resp.ArtifactID = d.ArtifactOf, id
	}
	dur, err := api.UrlDuration(r)
	if err != nil {
		return err
	}
	short := false
	switch f := r.Query("format"); f {
	case "":
	case "short":
		short = true
	default:
		return api.Invalid("format", "invalid 'format': only 'short' is supported")
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
	bypass, err := WatermarkBypass(r)
	if err != nil {
		return err
	}
	if bypass && short {
		return api.Invalid("bypassWatermark", "'bypassWatermark' is not supported with format 'short'")
	}
	if err := s.CheckStampable(r.Site, id, d.ContentType, bypass); err != nil {
		return err
	}
	resp.URL = s.SignDownloadURL(s.LinkBase(r.Ctx), r.Site, id, r.QueryBool("inline"), bypass, dur)
	if short {
		if resp.URL, err = s.shortDocumentURL(r, id, "", dur); err != nil {
			return err
		}
	}
	return r.JSON(resp)
}

// SendIfMarked sends rd stamped when document doc carries watermarks
// (sent; rd is closed on failure); otherwise the caller sends rd as it is.
func (s *Handlers) SendIfMarked(c *fiber.Ctx, site, doc string, rd io.ReadCloser, ctype string) (sent bool, err error) {
	marks, err := s.DocMarks(site, doc)
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
func (s *Handlers) sendStamped(c *fiber.Ctx, rd io.ReadCloser, ctype string, marks []pdfwork.Mark) error {
	st, err := Stamp(c.UserContext(), rd, ctype, marks)
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

// requestedVersion is the version the versionKey query parameter names, nil
// without one. It is a version of r.docID(): the artifact the request names,
// else the document itself (never its promoted artifact).
func (s *Handlers) requestedVersion(r *api.Request) (*storage.Version, error) {
	k := r.Query("versionKey")
	if k == "" {
		return nil, nil
	}
	if err := CheckVersionKey(k); err != nil {
		return nil, err
	}
	return s.DB.GetVersion(r.Site, r.DocID(), k)
}

// versionContent answers GET /content for version v: like the current
// content, inline text or a signed contentUrl.
func (s *Handlers) versionContent(r *api.Request, v *storage.Version) error {
	bypass, err := WatermarkBypass(r)
	if err != nil {
		return err
	}
	if v.DeepLinkPath != "" && !v.HasContent {
		return r.JSON(map[string]any{"contentUrl": v.DeepLinkPath, "contentType": v.ContentType})
	}
	if !v.HasContent {
		return &storage.NotFoundError{Msg: fmt.Sprintf("Document %s not found.", v.DocumentID)}
	}
	if err := s.CheckStampable(r.Site, v.DocumentID, v.ContentType, bypass); err != nil {
		return err
	}
	if isTextType(v.ContentType) && v.ContentLength < maxInlineResponse {
		rd, err := s.DB.OpenManifest(v.ContentSHA256)
		if err != nil {
			return err
		}
		defer rd.Close()
		b, err := storage.ReadAllSmall(rd, maxInlineResponse)
		if err != nil {
			return err
		}
		return r.JSON(map[string]any{"content": string(b), "contentType": v.ContentType, "isBase64": false})
	}
	return r.JSON(map[string]any{"contentUrl": s.versionDownloadURL(s.LinkBase(r.Ctx), r.Site, v, false, bypass, 0), "contentType": v.ContentType})
}

// versionURL answers GET /url for version v.
func (s *Handlers) versionURL(r *api.Request, v *storage.Version) error {
	if r.Query("format") != "" {
		return api.Invalid("format", "'format' is not supported with 'versionKey'")
	}
	dur, err := api.UrlDuration(r)
	if err != nil {
		return err
	}
	bypass, err := WatermarkBypass(r)
	if err != nil {
		return err
	}
	resp := api.UrlResponse{DocumentID: v.DocumentID}
	if r.ArtifactID != "" {
		resp.DocumentID, resp.ArtifactID = r.PathDocID(), v.DocumentID
	}
	switch {
	case v.DeepLinkPath != "" && !v.HasContent:
		resp.URL = v.DeepLinkPath
	case !v.HasContent:
		return &storage.NotFoundError{Msg: fmt.Sprintf("Document %s not found.", v.DocumentID)}
	default:
		if err := s.CheckStampable(r.Site, v.DocumentID, v.ContentType, bypass); err != nil {
			return err
		}
		resp.URL = s.versionDownloadURL(s.LinkBase(r.Ctx), r.Site, v, r.QueryBool("inline"), bypass, dur)
	}
	return r.JSON(resp)
}

// openVersionDownload opens the content of version k of doc for a signed
// download, as a document record carrying that version's name, type and
// content id.
func (s *Handlers) openVersionDownload(site, doc, k string) (*storage.ContentReader, *storage.Document, error) {
	v, err := s.DB.GetVersion(site, doc, k)
	if err != nil {
		return nil, nil, err
	}
	d := &storage.Document{DocumentID: doc, Path: v.Path, ContentType: v.ContentType, ContentSHA256: v.ContentSHA256}
	if !v.HasContent {
		return nil, d, storage.ErrNotFound
	}
	rd, err := s.DB.OpenManifest(v.ContentSHA256)
	return rd, d, err
}

// CheckVersionKey refuses a versionKey that no listing can have returned.
func CheckVersionKey(k string) error {
	if k == "" {
		return api.Invalid("versionKey", "'versionKey' is required")
	}
	if !storage.ValidVersionKey(k) {
		return api.Invalid("versionKey", fmt.Sprintf("invalid versionKey '%s'", k))
	}
	return nil
}

// versionDownloadURL is SignDownloadURL for an earlier version: versionKey is
// in the query and signed as one more field, so neither a document's URL
// nor another version's can be turned into it.
func (s *Handlers) versionDownloadURL(base, site string, v *storage.Version, inline, bypass bool, d time.Duration) string {
	if d <= 0 {
		d = api.DefaultURLDuration
	}
	exp := strconv.FormatInt(s.Now().Add(d).Unix(), 10)
	in := strconv.FormatBool(inline)
	fields := []string{http.MethodGet, site, v.DocumentID, exp, in, v.VersionKey}
	q := url.Values{"expires": {exp}, "inline": {in}, "versionKey": {v.VersionKey}}
	if bypass {
		fields = append(fields, api.BypassField)
		q.Set("bypassWatermark", "true")
	}
	q.Set("signature", auth.SignURL(s.Deps.Auth.URLKey(), fields...))
	return fmt.Sprintf("%s/downloads/%s/%s?%s", base, url.PathEscape(site), v.DocumentID, q.Encode())
}
