package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"quire/auth"
	"quire/storage"
)

// defaultURLDuration is how long signed URLs stay valid unless the request
// says otherwise (FormKiQ: 48 hours).
const defaultURLDuration = 48 * time.Hour

// uploadOpts are the constraints signed into an upload URL.
type uploadOpts struct {
	checksumType  string // SHA1, SHA256, SHA512
	checksum      string // hex or base64, as the client gave it
	contentLength int64  // exact size, 0 = any
	duration      time.Duration
}

// uploadURL returns a signed, expiring URL that accepts a streamed PUT of
// the document's content, and the headers the client must send with it.
func (s *Server) uploadURL(site, doc string, o uploadOpts) (string, map[string]string) {
	if o.duration <= 0 {
		o.duration = defaultURLDuration
	}
	exp := strconv.FormatInt(s.now().Add(o.duration).Unix(), 10)
	cl := ""
	if o.contentLength > 0 {
		cl = strconv.FormatInt(o.contentLength, 10)
	}
	sig := auth.SignURL(s.deps.Auth.URLKey(), http.MethodPut, site, doc, exp, o.checksumType, o.checksum, cl)
	q := url.Values{}
	q.Set("expires", exp)
	if o.checksumType != "" {
		q.Set("checksumType", o.checksumType)
		q.Set("checksum", o.checksum)
	}
	if cl != "" {
		q.Set("contentLength", cl)
	}
	q.Set("signature", sig)
	u := fmt.Sprintf("%s/uploads/%s/%s?%s", s.deps.PublicURL, url.PathEscape(site), doc, q.Encode())
	var headers map[string]string
	if o.checksumType != "" {
		headers = map[string]string{
			"x-amz-checksum-" + strings.ToLower(o.checksumType): toBase64Checksum(o.checksum),
			"x-amz-sdk-checksum-algorithm":                      o.checksumType,
		}
	}
	return u, headers
}

// downloadURL returns a signed, expiring URL that streams the content.
// DownloadURL returns a signed URL downloading a document's content (as
// an attachment), valid for d.
func (s *Server) DownloadURL(site, doc string, d time.Duration) string {
	return s.downloadURL(site, doc, false, d)
}

func (s *Server) downloadURL(site, doc string, inline bool, d time.Duration) string {
	if d <= 0 {
		d = defaultURLDuration
	}
	exp := strconv.FormatInt(s.now().Add(d).Unix(), 10)
	in := strconv.FormatBool(inline)
	sig := auth.SignURL(s.deps.Auth.URLKey(), http.MethodGet, site, doc, exp, in)
	q := url.Values{"expires": {exp}, "inline": {in}, "signature": {sig}}
	return fmt.Sprintf("%s/downloads/%s/%s?%s", s.deps.PublicURL, url.PathEscape(site), doc, q.Encode())
}

// toBase64Checksum turns a hex checksum into the base64 form S3-style
// checksum headers use; a base64 one is returned as is.
func toBase64Checksum(c string) string {
	if b, err := hex.DecodeString(c); err == nil {
		return base64.StdEncoding.EncodeToString(b)
	}
	return c
}

func checkURLExpiry(now time.Time, exp string) error {
	n, err := strconv.ParseInt(exp, 10, 64)
	if err != nil {
		return errStatus(http.StatusForbidden, "invalid signature")
	}
	if now.Unix() > n {
		return errStatus(http.StatusForbidden, "Request has expired")
	}
	return nil
}

// inflight protects chunks written by uploads still in progress from the
// sweep that follows a failed upload.
type inflight struct {
	mu sync.Mutex
	n  map[string]int
}

func (f *inflight) add(sha string) {
	f.mu.Lock()
	if f.n == nil {
		f.n = map[string]int{}
	}
	f.n[sha]++
	f.mu.Unlock()
}

func (f *inflight) done(shas []string) {
	f.mu.Lock()
	for _, s := range shas {
		if f.n[s]--; f.n[s] <= 0 {
			delete(f.n, s)
		}
	}
	f.mu.Unlock()
}

func (f *inflight) busy(sha string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n[sha] > 0
}

// handlePutUpload serves PUT /uploads/{siteId}/{documentId}: the target of
// upload URLs. The body is streamed into chunks; the content only becomes
// the document's when size and checksums match.
func (s *Server) handlePutUpload(c *fiber.Ctx) error {
	site, doc := siteParam(c), strings.Clone(c.Params("documentId"))
	q := func(k string) string { return strings.Clone(c.Query(k)) }
	exp, ct, cs, cl := q("expires"), q("checksumType"), q("checksum"), q("contentLength")
	if !auth.VerifyURL(s.deps.Auth.URLKey(), q("signature"), http.MethodPut, site, doc, exp, ct, cs, cl) {
		return errStatus(http.StatusForbidden, "invalid signature")
	}
	if err := checkURLExpiry(s.now(), exp); err != nil {
		return err
	}
	if _, err := s.db.GetDocument(site, doc); err != nil {
		return err
	}
	want := int64(-1)
	if cl != "" {
		want, _ = strconv.ParseInt(cl, 10, 64)
	}
	limit, err := s.uploadLimit(site, want)
	if err != nil {
		return err
	}
	if n := int64(c.Request().Header.ContentLength()); n >= 0 {
		if want >= 0 && n != want {
			return badRequest(fmt.Sprintf("content length %d does not match the signed contentLength %d", n, want))
		}
		if limit.n > 0 && n > limit.n {
			drain(c)
			return limit.err
		}
	}
	// Every checksum the client asked to verify: the one signed into the
	// URL and any x-amz-checksum-* header.
	type check struct {
		typ, want string
		h         hash.Hash
	}
	var checks []*check
	if ct != "" {
		checks = append(checks, &check{typ: ct, want: cs, h: newHash(ct)})
	}
	for _, typ := range []string{"SHA1", "SHA256", "SHA512"} {
		if v := string(c.Request().Header.Peek("x-amz-checksum-" + strings.ToLower(typ))); v != "" {
			checks = append(checks, &check{typ: typ, want: v, h: newHash(typ)})
		}
	}
	body := bodyStream(c)
	if body == nil {
		body = bytes.NewReader(c.Body())
	}
	body = &completeBody{r: body, want: int64(c.Request().Header.ContentLength()), conn: connOf(c)}
	var writers []io.Writer
	for _, ck := range checks {
		if ck.h == nil {
			return badRequest("invalid checksumType")
		}
		writers = append(writers, ck.h)
	}
	if len(writers) > 0 {
		body = io.TeeReader(body, io.MultiWriter(writers...))
	}
	var shas []string
	defer func() { s.uploads.done(shas) }()
	m, tail, err := storage.WriteContent(context.Background(), s.deps.Applier, body, limit.n, func(sha string) {
		s.uploads.add(sha)
		shas = append(shas, sha)
	})
	if errors.Is(err, storage.ErrTooLarge) {
		s.sweep(shas)
		drain(c)
		return limit.err
	}
	if err != nil {
		s.sweep(shas)
		if wr := (*storage.WriteRefusedError)(nil); errors.As(err, &wr) {
			drain(c) // so the client reads the 507 rather than a reset
		}
		return err
	}
	if want >= 0 && m.Size != want {
		s.sweep(shas)
		return badRequest(fmt.Sprintf("content length %d does not match the signed contentLength %d", m.Size, want))
	}
	for _, ck := range checks {
		if !checksumEqual(ck.want, ck.h.Sum(nil)) {
			s.sweep(shas)
			return badRequest(fmt.Sprintf("the %s checksum of the content does not match", ck.typ))
		}
	}
	commit := storage.CommitContent{DocumentID: doc, Content: m, Chunks: tail}
	if ct != "" {
		commit.ChecksumType = ct
		commit.Checksum = hex.EncodeToString(checks[0].h.Sum(nil))
	}
	if t := string(c.Request().Header.ContentType()); t != "" && !genericContentType(t) {
		commit.ContentType = strings.Clone(t)
	}
	cmd, err := storage.NewCommand(storage.OpCommitContent, site, "", s.now().UTC(), commit)
	if err != nil {
		return err
	}
	res, err := s.deps.Applier.Apply(context.Background(), cmd)
	if err != nil {
		s.sweep(shas)
		return err
	}
	if d, ok := res.Value.(*storage.Document); ok && d.DetectContentType {
		s.bg.detect(storage.PendingDetection{Site: site, DocumentID: doc, ContentSHA: d.ContentSHA256})
	}
	c.Set(fiber.HeaderETag, `"`+m.SHA256+`"`)
	return c.SendStatus(http.StatusOK)
}

// errIncompleteBody answers an upload whose client went away (or stalled)
// before the end of its body. Nothing is committed.
var errIncompleteBody = badRequest("request body ended before its declared end")

// completeBody fails an upload body that ends early. fasthttp's body
// stream reports a plain io.EOF when the client closes a Content-Length
// body short or a chunked one at a chunk boundary before its terminating
// chunk, and WriteContent takes io.ErrUnexpectedEOF for a normal end too;
// without this a cut upload would commit as a complete, truncated document.
type completeBody struct {
	r    io.Reader
	want int64 // declared Content-Length; -1: chunked
	n    int64
	// conn, when known, tells a chunked body's last-chunk EOF from the
	// client's: fasthttp reads no further than the terminating chunk, so
	// a failed connection read means the body was cut.
	conn *trackedConn
}

func (b *completeBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	switch {
	case err == nil:
	case err != io.EOF:
		err = errIncompleteBody
	case b.want >= 0 && b.n != b.want, b.want < 0 && b.conn != nil && b.conn.readErr.Load():
		err = errIncompleteBody
	}
	return n, err
}

// uploadCap is the most a PUT to an upload URL may carry (0: no limit)
// and the error for going over it.
type uploadCap struct {
	n   int64
	err error
}

// uploadLimit is the least of the signed contentLength (a client that
// declared less cannot send more, chunked or not), the site's
// maxContentLengthBytes as it is now (also for URLs signed before it was
// set) and the server's limit. Reading stops there and nothing is
// committed.
func (s *Server) uploadLimit(site string, signed int64) (uploadCap, error) {
	limit := uploadCap{s.deps.MaxUploadBytes, errBodyTooLarge}
	c, err := s.db.SiteConfig(site)
	if err != nil {
		return limit, err
	}
	if l := c.ContentLimit(); l > 0 && (limit.n <= 0 || l <= limit.n) {
		limit = uploadCap{l, storage.ContentTooLarge(l)}
	}
	if signed > 0 && (limit.n <= 0 || signed <= limit.n) {
		limit = uploadCap{signed, badRequest(fmt.Sprintf("the content is longer than the signed contentLength %d", signed))}
	}
	return limit, nil
}

// genericContentType reports content types that say nothing about the
// content (curl's default for --data-binary, for example).
func genericContentType(t string) bool {
	t = strings.ToLower(strings.TrimSpace(strings.SplitN(t, ";", 2)[0]))
	return t == "" || t == "application/octet-stream" || t == "application/x-www-form-urlencoded" || t == "binary/octet-stream"
}

// sweep removes chunks of a failed upload that nothing references and no
// other upload in progress wrote too.
func (s *Server) sweep(shas []string) {
	var free []string
	for _, sha := range shas {
		if !s.uploads.busy(sha) || countOf(shas, sha) == s.uploadsCount(sha) {
			free = append(free, sha)
		}
	}
	if len(free) == 0 {
		return
	}
	cmd, err := storage.NewCommand(storage.OpSweepChunks, "", "", s.now().UTC(), storage.SweepChunks{SHAs: free})
	if err == nil {
		_, err = s.deps.Applier.Apply(context.Background(), cmd)
	}
	if err != nil {
		s.log.Warn("sweep chunks of failed upload", "err", err)
	}
}

func (s *Server) uploadsCount(sha string) int {
	s.uploads.mu.Lock()
	defer s.uploads.mu.Unlock()
	return s.uploads.n[sha]
}

func countOf(list []string, v string) int {
	n := 0
	for _, x := range list {
		if x == v {
			n++
		}
	}
	return n
}

// handleGetDownload serves GET /downloads/{siteId}/{documentId}: the
// target of signed download URLs. It supports single byte ranges.
func (s *Server) handleGetDownload(c *fiber.Ctx) error {
	site, doc := siteParam(c), strings.Clone(c.Params("documentId"))
	exp, in := strings.Clone(c.Query("expires")), strings.Clone(c.Query("inline"))
	if !auth.VerifyURL(s.deps.Auth.URLKey(), c.Query("signature"), http.MethodGet, site, doc, exp, in) {
		return errStatus(http.StatusForbidden, "invalid signature")
	}
	if err := checkURLExpiry(s.now(), exp); err != nil {
		return err
	}
	rd, d, err := s.db.OpenContent(site, doc)
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
	disp := "attachment"
	// SVG can carry script: never render it inline (SERVICE-SPEC.md 5.12).
	if in == "true" && !isSVG(ctype, name) {
		disp = "inline"
	}
	c.Set(fiber.HeaderContentType, ctype)
	c.Set(fiber.HeaderContentDisposition, fmt.Sprintf("%s; filename=%q; filename*=UTF-8''%s", disp, asciiName(name), url.PathEscape(name)))
	c.Set("X-Content-Type-Options", "nosniff")
	c.Set("Content-Security-Policy", "sandbox")
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

func isSVG(ctype, name string) bool {
	return strings.Contains(strings.ToLower(ctype), "svg") || strings.HasSuffix(strings.ToLower(name), ".svg")
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

// uploadRequest is the body of POST /documents/upload.
type uploadRequest struct {
	documentIn
}

type urlResponse struct {
	DocumentID string            `json:"documentId"`
	URL        string            `json:"url"`
	Headers    map[string]string `json:"headers,omitempty"`
}

// uploadQuery reads and validates the upload URL parameters shared by the
// upload endpoints.
func (r *reqCtx) uploadQuery() (uploadOpts, []storage.ValidationItem) {
	var o uploadOpts
	var errs []storage.ValidationItem
	if v := r.Query("contentLength"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			errs = append(errs, storage.ValidationItem{Key: "contentLength", Msg: "invalid 'contentLength'"})
		}
		o.contentLength = n
	}
	if d, err := urlDuration(r); err != nil {
		errs = append(errs, storage.ValidationItem{Key: "duration", Msg: msgDuration})
	} else {
		o.duration = d
	}
	return o, errs
}

func checksumOpts(o *uploadOpts, typ, sum string) []storage.ValidationItem {
	typ = strings.ToUpper(typ)
	var errs []storage.ValidationItem
	if sum != "" && typ == "" {
		errs = append(errs, storage.ValidationItem{Key: "checksumType", Msg: "'checksumType' required when 'checksum' is set"})
	}
	if typ != "" {
		if newHash(typ) == nil {
			errs = append(errs, storage.ValidationItem{Key: "checksumType", Msg: "invalid 'checksumType'"})
		}
		if sum == "" {
			errs = append(errs, storage.ValidationItem{Key: "checksum", Msg: "'checksum' is required"})
		} else if newHash(typ) != nil && !checksumFormat(typ, sum) {
			errs = append(errs, storage.ValidationItem{Key: "checksum", Msg: "invalid checksum"})
		}
	}
	o.checksumType, o.checksum = typ, sum
	return errs
}

// checkContentLength checks the contentLength of an upload URL request
// against the server's limit and the site's maxContentLengthBytes, which
// makes it required (FormKiQ's messages). The signed URL carries it, and
// the PUT is held to it (uploadLimit).
func (s *Server) checkContentLength(r *reqCtx, o uploadOpts) ([]storage.ValidationItem, error) {
	if s.deps.MaxUploadBytes > 0 && o.contentLength > s.deps.MaxUploadBytes {
		return []storage.ValidationItem{{Key: "contentLength", Msg: fmt.Sprintf("'contentLength' cannot exceed %d bytes", s.deps.MaxUploadBytes)}}, nil
	}
	c, err := s.db.SiteConfig(r.site)
	if err != nil {
		return nil, err
	}
	switch l := c.ContentLimit(); {
	case l == 0:
	case r.Query("contentLength") == "":
		return []storage.ValidationItem{{Key: "contentLength", Msg: "'contentLength' is required when MaxContentLengthBytes is configured"}}, nil
	case o.contentLength > l:
		return storage.ContentTooLarge(l).Items, nil
	}
	return nil, nil
}

// handleAddDocumentUpload serves POST /documents/upload: it creates the
// document record and returns an upload URL for its content.
func (s *Server) handleAddDocumentUpload(r *reqCtx) error {
	var in uploadRequest
	if err := r.readBody(&in, s.deps.MaxBodyBytes); err != nil {
		return err
	}
	o, errs := r.uploadQuery()
	errs = append(errs, checksumOpts(&o, in.ChecksumType, in.Checksum)...)
	lerrs, err := s.checkContentLength(r, o)
	if err != nil {
		return err
	}
	errs = append(errs, lerrs...)
	if in.Content != nil {
		errs = append(errs, storage.ValidationItem{Key: "content", Msg: "'content' is not allowed, upload it to the returned url"})
	}
	id := uuid.NewString()
	if in.DocumentID != nil {
		id = *in.DocumentID
		if !isUUIDv4(id) {
			return invalid("documentId", fmt.Sprintf("invalid documentId '%s'", id))
		}
	}
	in.Checksum, in.ChecksumType = "", ""
	p, perrs := s.prepareDocument(r, &in.documentIn, id, "")
	errs = append(errs, perrs...)
	if err := checkErrors(errs); err != nil {
		return err
	}
	return s.createForUpload(r, p, o)
}

// handleGetDocumentUpload serves GET /documents/upload.
func (s *Server) handleGetDocumentUpload(r *reqCtx) error {
	o, errs := r.uploadQuery()
	errs = append(errs, checksumOpts(&o, r.Query("checksumType"), r.Query("checksum"))...)
	lerrs, err := s.checkContentLength(r, o)
	if err != nil {
		return err
	}
	errs = append(errs, lerrs...)
	id := uuid.NewString()
	in := documentIn{}
	if v := r.Query("path"); v != "" {
		pv := strings.Clone(v)
		in.Path = &pv
	}
	p, perrs := s.prepareDocument(r, &in, id, "")
	errs = append(errs, perrs...)
	if err := checkErrors(errs); err != nil {
		return err
	}
	return s.createForUpload(r, p, o)
}

func (s *Server) createForUpload(r *reqCtx, p *prepared, o uploadOpts) error {
	id := p.nd.Document.DocumentID
	if err := s.requireWritePaths(r, []storage.NewDocument{p.nd}); err != nil {
		return err
	}
	if _, err := s.apply(r, storage.OpAddDocuments, storage.AddDocuments{Docs: []storage.NewDocument{p.nd}}); err != nil {
		return err
	}
	u, h := s.uploadURL(r.site, id, o)
	status := http.StatusOK
	if r.Method() == http.MethodPost {
		status = http.StatusCreated
	}
	return r.Status(status).JSON(urlResponse{DocumentID: id, URL: u, Headers: h})
}

// handleGetDocumentIDUpload serves GET /documents/{documentId}/upload.
func (s *Server) handleGetDocumentIDUpload(r *reqCtx) error {
	id := r.docID()
	o, errs := r.uploadQuery()
	errs = append(errs, checksumOpts(&o, r.Query("checksumType"), r.Query("checksum"))...)
	lerrs, err := s.checkContentLength(r, o)
	if err != nil {
		return err
	}
	errs = append(errs, lerrs...)
	if err := checkErrors(errs); err != nil {
		return err
	}
	if _, err := s.db.GetDocument(r.site, id); err != nil {
		return err
	}
	u, h := s.uploadURL(r.site, id, o)
	return r.JSON(urlResponse{DocumentID: id, URL: u, Headers: h})
}

// maxInlineResponse is the largest text content GET /content returns in
// the JSON body; larger content gets a contentUrl.
const maxInlineResponse = 6 * 1000 * 1000

// handleGetDocumentContent serves GET /documents/{documentId}/content.
func (s *Server) handleGetDocumentContent(r *reqCtx) error {
	id := r.docID()
	d, err := s.db.GetDocument(r.site, id)
	if err != nil {
		return err
	}
	if d.DeepLinkPath != "" && !d.HasContent {
		return r.JSON(map[string]any{"contentUrl": d.DeepLinkPath, "contentType": d.ContentType})
	}
	if !d.HasContent {
		return &storage.NotFoundError{Msg: fmt.Sprintf("Document %s not found.", id)}
	}
	if isTextType(d.ContentType) && d.ContentLength < maxInlineResponse {
		rd, _, err := s.db.OpenContent(r.site, id)
		if err != nil {
			return err
		}
		defer rd.Close()
		b, err := storage.ReadAllSmall(rd, maxInlineResponse)
		if err != nil {
			return err
		}
		return r.JSON(map[string]any{"content": string(b), "contentType": d.ContentType, "isBase64": false})
	}
	return r.JSON(map[string]any{"contentUrl": s.downloadURL(r.site, id, false, 0), "contentType": d.ContentType})
}

func isTextType(t string) bool {
	t = strings.ToLower(strings.TrimSpace(strings.SplitN(t, ";", 2)[0]))
	return strings.HasPrefix(t, "text/") || t == "application/json" || t == "application/xml" ||
		strings.HasSuffix(t, "+json") || strings.HasSuffix(t, "+xml") || t == "application/x-yaml"
}

// handleGetDocumentURL serves GET /documents/{documentId}/url.
func (s *Server) handleGetDocumentURL(r *reqCtx) error {
	id := r.docID()
	d, err := s.db.GetDocument(r.site, id)
	if err != nil {
		return err
	}
	dur, err := urlDuration(r)
	if err != nil {
		return err
	}
	if d.DeepLinkPath != "" && !d.HasContent {
		return r.JSON(urlResponse{DocumentID: id, URL: d.DeepLinkPath})
	}
	if !d.HasContent {
		return &storage.NotFoundError{Msg: fmt.Sprintf("Document %s not found.", id)}
	}
	return r.JSON(urlResponse{DocumentID: id, URL: s.downloadURL(r.site, id, r.QueryBool("inline"), dur)})
}
