package content

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"quire/server/internal/api"
	"quire/storage"
)

func NewHash(t string) hash.Hash {
	switch t {
	case "SHA1":
		return sha1.New()
	case "SHA256":
		return sha256.New()
	case "SHA512":
		return sha512.New()
	}
	return nil
}

// ChecksumFormat reports whether sum can be a checksum of type typ: hex
// of the digest's length (SHA1 40, SHA256 64, SHA512 128 digits), or its
// base64 (the x-amz-checksum-* header form).
func ChecksumFormat(typ, sum string) bool {
	h := NewHash(typ)
	if h == nil {
		return false
	}
	n := h.Size()
	if b, err := hex.DecodeString(sum); err == nil && len(b) == n {
		return true
	}
	b, err := base64.StdEncoding.DecodeString(sum)
	return err == nil && len(b) == n
}

// ChecksumEqual accepts a checksum as hex (any case) or base64.
func ChecksumEqual(given string, sum []byte) bool {
	if strings.EqualFold(given, hex.EncodeToString(sum)) {
		return true
	}
	return given == base64.StdEncoding.EncodeToString(sum)
}

// inflight protects chunks written by uploads still in progress from the
// sweep that follows a failed upload.
type inflight struct {
	mu sync.Mutex
	n  map[string]int
}

func (f *inflight) Add(sha string) {
	f.mu.Lock()
	if f.n == nil {
		f.n = map[string]int{}
	}
	f.n[sha]++
	f.mu.Unlock()
}

func (f *inflight) Done(shas []string) {
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

// HandlePutUpload serves PUT /uploads/{siteId}/{documentId}: the target of
// upload URLs. The body is streamed into chunks; the content only becomes
// the document's when size and checksums match.
func (s *Handlers) HandlePutUpload(c *fiber.Ctx) error {
	site, doc := api.SiteParam(c), strings.Clone(c.Params("documentId"))
	q := func(k string) string { return strings.Clone(c.Query(k)) }
	exp, ct, cs, cl := q("expires"), q("checksumType"), q("checksum"), q("contentLength")
	if !s.Deps.Auth.VerifyURL(q("signature"), http.MethodPut, site, doc, exp, ct, cs, cl) {
		return api.ErrStatus(http.StatusForbidden, "invalid signature")
	}
	if err := api.CheckURLExpiry(s.Now(), exp); err != nil {
		return err
	}
	if _, err := s.DB.GetDocument(site, doc); err != nil {
		return err
	}
	want := int64(-1)
	if cl != "" {
		want, _ = strconv.ParseInt(cl, 10, 64)
	}
	limit, err := s.UploadLimit(site, want)
	if err != nil {
		return err
	}
	// A content type the commit would refuse is refused before the
	// body is streamed into chunks.
	if err := api.CheckErrors(storage.CheckContentType(string(c.Request().Header.ContentType()))); err != nil {
		api.Drain(c)
		return err
	}
	if n := int64(c.Request().Header.ContentLength()); n >= 0 {
		if want >= 0 && n != want {
			return api.BadRequest(fmt.Sprintf("content length %d does not match the signed contentLength %d", n, want))
		}
		if limit.N > 0 && n > limit.N {
			api.Drain(c)
			return limit.Err
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
		checks = append(checks, &check{typ: ct, want: cs, h: NewHash(ct)})
	}
	for _, typ := range []string{"SHA1", "SHA256", "SHA512"} {
		if v := string(c.Request().Header.Peek("x-amz-checksum-" + strings.ToLower(typ))); v != "" {
			checks = append(checks, &check{typ: typ, want: v, h: NewHash(typ)})
		}
	}
	body := api.BodyStream(c)
	if body == nil {
		body = bytes.NewReader(c.Body())
	}
	body = &CompleteBody{R: body, Want: int64(c.Request().Header.ContentLength()), Conn: api.ConnOf(c)}
	var writers []io.Writer
	for _, ck := range checks {
		if ck.h == nil {
			return api.BadRequest("invalid checksumType")
		}
		writers = append(writers, ck.h)
	}
	if len(writers) > 0 {
		body = io.TeeReader(body, io.MultiWriter(writers...))
	}
	var shas []string
	defer func() { s.Uploads.Done(shas) }()
	m, tail, err := storage.WriteContent(context.Background(), s.Deps.Applier, body, limit.N, func(sha string) {
		s.Uploads.Add(sha)
		shas = append(shas, sha)
	})
	if errors.Is(err, storage.ErrTooLarge) {
		s.Sweep(shas)
		api.Drain(c)
		return limit.Err
	}
	if err != nil {
		s.Sweep(shas)
		if wr := (*storage.WriteRefusedError)(nil); errors.As(err, &wr) {
			api.Drain(c) // so the client reads the 507 rather than a reset
		}
		return err
	}
	if want >= 0 && m.Size != want {
		s.Sweep(shas)
		return api.BadRequest(fmt.Sprintf("content length %d does not match the signed contentLength %d", m.Size, want))
	}
	for _, ck := range checks {
		if !ChecksumEqual(ck.want, ck.h.Sum(nil)) {
			s.Sweep(shas)
			return api.BadRequest(fmt.Sprintf("the %s checksum of the content does not match", ck.typ))
		}
	}
	// An upload names no actions: new content of a document that had
	// some gets the site's default processing (API.md "Default
	// processing"); a first upload runs what its document was created with.
	commit := storage.CommitContent{DocumentID: doc, Content: m, Chunks: tail, DefaultActions: true}
	if ct != "" {
		commit.ChecksumType = ct
		commit.Checksum = hex.EncodeToString(checks[0].h.Sum(nil))
	}
	if t := string(c.Request().Header.ContentType()); t != "" && !genericContentType(t) {
		commit.ContentType = strings.Clone(t)
	}
	cmd, err := storage.NewCommand(storage.OpCommitContent, site, "", s.Now().UTC(), commit)
	if err != nil {
		return err
	}
	// A key of this request's own, so a cluster node whose forward of the
	// commit broke (a leader change mid-upload) sends it again itself
	// instead of answering an unknown outcome (the chunks before it are
	// idempotent already): the upload outlives a failover.
	cmd.Idem = &storage.Idempotency{Key: "upload-commit " + uuid.NewString(), Hash: "upload"}
	// New content for the fulltext index: wait while it lags (bounded by
	// GateMaxWait; the chunks are written, no transaction is held).
	if err := s.Gate.Wait(context.Background()); err != nil {
		s.Sweep(shas)
		return err
	}
	res, err := s.Deps.Applier.Apply(context.Background(), cmd)
	if err != nil {
		s.Sweep(shas)
		return err
	}
	if d, ok := res.Value.(*storage.Document); ok && d.DetectContentType {
		s.Detect(storage.PendingDetection{Site: site, DocumentID: doc, ContentSHA: d.ContentSHA256})
	}
	c.Set(fiber.HeaderETag, `"`+m.SHA256+`"`)
	return c.SendStatus(http.StatusOK)
}

// ErrIncompleteBody answers an upload whose client went away (or stalled)
// before the end of its body. Nothing is committed.
var ErrIncompleteBody = api.BadRequest("request body ended before its declared end")

// CompleteBody fails an upload body that ends early. fasthttp's body
// stream reports a plain io.EOF when the client closes a Content-Length
// body short or a chunked one at a chunk boundary before its terminating
// chunk, and WriteContent takes io.ErrUnexpectedEOF for a normal end too;
// without this a cut upload would commit as a complete, truncated document.
type CompleteBody struct {
	R    io.Reader
	Want int64 // declared Content-Length; -1: chunked
	n    int64
	// conn, when known, tells a chunked body's last-chunk EOF from the
	// client's: fasthttp reads no further than the terminating chunk, so
	// a failed connection read means the body was cut.
	Conn api.ReadFailer
}

func (b *CompleteBody) Read(p []byte) (int, error) {
	n, err := b.R.Read(p)
	b.n += int64(n)
	switch {
	case err == nil:
	case err != io.EOF:
		err = ErrIncompleteBody
	case b.Want >= 0 && b.n != b.Want, b.Want < 0 && b.Conn != nil && b.Conn.ReadFailed():
		err = ErrIncompleteBody
	}
	return n, err
}

// uploadCap is the most a PUT to an upload URL may carry (0: no limit)
// and the error for going over it.
type uploadCap struct {
	N   int64
	Err error
}

// UploadLimit is the least of the signed ContentLength (a client that
// declared less cannot send more, chunked or not), the site's
// maxContentLengthBytes as it is now (also for URLs signed before it was
// set) and the server's limit. Reading stops there and nothing is
// committed.
func (s *Handlers) UploadLimit(site string, signed int64) (uploadCap, error) {
	limit := uploadCap{s.Deps.MaxUploadBytes, api.ErrBodyTooLarge}
	c, err := s.DB.SiteConfig(site)
	if err != nil {
		return limit, err
	}
	if l := c.ContentLimit(); l > 0 && (limit.N <= 0 || l <= limit.N) {
		limit = uploadCap{l, storage.ContentTooLarge(l)}
	}
	if signed > 0 && (limit.N <= 0 || signed <= limit.N) {
		limit = uploadCap{signed, api.BadRequest(fmt.Sprintf("the content is longer than the signed contentLength %d", signed))}
	}
	return limit, nil
}

// genericContentType reports content types that say nothing about the
// content (curl's default for --data-binary, for example).
func genericContentType(t string) bool {
	t = strings.ToLower(strings.TrimSpace(strings.SplitN(t, ";", 2)[0]))
	return t == "" || t == "application/octet-stream" || t == "application/x-www-form-urlencoded" || t == "binary/octet-stream"
}

// Sweep removes chunks of a failed upload that nothing references and no
// other upload in progress wrote too.
func (s *Handlers) Sweep(shas []string) {
	var free []string
	for _, sha := range shas {
		if !s.Uploads.busy(sha) || countOf(shas, sha) == s.uploadsCount(sha) {
			free = append(free, sha)
		}
	}
	if len(free) == 0 {
		return
	}
	cmd, err := storage.NewCommand(storage.OpSweepChunks, "", "", s.Now().UTC(), storage.SweepChunks{SHAs: free})
	if err == nil {
		_, err = s.Deps.Applier.Apply(context.Background(), cmd)
	}
	if err != nil {
		s.Log.Warn("sweep chunks of failed upload", "err", err)
	}
}

func (s *Handlers) uploadsCount(sha string) int {
	s.Uploads.mu.Lock()
	defer s.Uploads.mu.Unlock()
	return s.Uploads.n[sha]
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

// UploadQuery reads and validates the upload URL parameters shared by the
// upload endpoints.
func UploadQuery(r *api.Request) (api.UploadOpts, []storage.ValidationItem) {
	var o api.UploadOpts
	var errs []storage.ValidationItem
	if v := r.Query("contentLength"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			errs = append(errs, storage.ValidationItem{Key: "contentLength", Msg: "invalid 'contentLength'"})
		}
		o.ContentLength = n
	}
	if d, err := api.UrlDuration(r); err != nil {
		errs = append(errs, storage.ValidationItem{Key: "duration", Msg: api.MsgDuration})
	} else {
		o.Duration = d
	}
	return o, errs
}

func ChecksumOpts(o *api.UploadOpts, typ, sum string) []storage.ValidationItem {
	typ = strings.ToUpper(typ)
	var errs []storage.ValidationItem
	if sum != "" && typ == "" {
		errs = append(errs, storage.ValidationItem{Key: "checksumType", Msg: "'checksumType' required when 'checksum' is set"})
	}
	if typ != "" {
		if NewHash(typ) == nil {
			errs = append(errs, storage.ValidationItem{Key: "checksumType", Msg: "invalid 'checksumType'"})
		}
		if sum == "" {
			errs = append(errs, storage.ValidationItem{Key: "checksum", Msg: "'checksum' is required"})
		} else if NewHash(typ) != nil && !ChecksumFormat(typ, sum) {
			errs = append(errs, storage.ValidationItem{Key: "checksum", Msg: "invalid checksum"})
		}
	}
	o.ChecksumType, o.Checksum = typ, sum
	return errs
}

// CheckContentLength checks the ContentLength of an upload URL request
// against the server's limit and the site's maxContentLengthBytes, which
// makes it required: 400s with FormKiQ's {"message"}. The signed URL
// carries it, and the PUT is held to it and to the site's limit as it is
// then (UploadLimit; the commit's applier checks the size once more).
func (s *Handlers) CheckContentLength(r *api.Request, o api.UploadOpts) error {
	tooLarge := func(l int64) error { return api.BadRequest(fmt.Sprintf("'contentLength' cannot exceed %d bytes", l)) }
	if s.Deps.MaxUploadBytes > 0 && o.ContentLength > s.Deps.MaxUploadBytes {
		return tooLarge(s.Deps.MaxUploadBytes)
	}
	c, err := s.DB.SiteConfig(r.Site)
	if err != nil {
		return err
	}
	switch l := c.ContentLimit(); {
	case l == 0:
	case r.Query("contentLength") == "":
		return api.BadRequest("'contentLength' is required when MaxContentLengthBytes is configured")
	case o.ContentLength > l:
		return tooLarge(l)
	}
	return nil
}

// HandleGetDocumentIDUpload serves GET /documents/{documentId}/upload.
func (s *Handlers) HandleGetDocumentIDUpload(r *api.Request) error {
	id := r.DocID()
	o, errs := UploadQuery(r)
	errs = append(errs, ChecksumOpts(&o, r.Query("checksumType"), r.Query("checksum"))...)
	if err := s.CheckContentLength(r, o); err != nil {
		return err
	}
	if err := api.CheckErrors(errs); err != nil {
		return err
	}
	if _, err := s.DB.GetDocument(r.Site, id); err != nil {
		return err
	}
	o.Base = s.LinkBase(r.Ctx)
	u, h := s.UploadURL(r.Site, id, o)
	if r.ArtifactID != "" {
		return r.JSON(api.UrlResponse{DocumentID: r.PathDocID(), ArtifactID: r.ArtifactID, URL: u, Headers: h})
	}
	return r.JSON(api.UrlResponse{DocumentID: id, URL: u, Headers: h})
}

// WriteBody streams the request body into content chunks, at most limit
// bytes (and the site's maxContentLengthBytes). The chunks' hashes are
// held as an upload's until the caller calls s.uploads.done.
func (s *Handlers) WriteBody(r *api.Request, limit int64) (storage.Manifest, []storage.Chunk, []string, error) {
	cap, err := s.UploadLimit(r.Site, -1)
	if err != nil {
		return storage.Manifest{}, nil, nil, err
	}
	if cap.N <= 0 || limit < cap.N {
		cap = uploadCap{limit, api.ErrBodyTooLarge}
	}
	if n := int64(r.Request().Header.ContentLength()); n >= 0 && cap.N > 0 && n > cap.N {
		api.Drain(r.Ctx)
		return storage.Manifest{}, nil, nil, cap.Err
	}
	body := api.BodyStream(r.Ctx)
	if body == nil {
		body = bytes.NewReader(r.Body())
	}
	body = &CompleteBody{R: body, Want: int64(r.Request().Header.ContentLength()), Conn: api.ConnOf(r.Ctx)}
	var shas []string
	m, tail, err := storage.WriteContent(context.Background(), s.Deps.Applier, body, cap.N, func(sha string) {
		s.Uploads.Add(sha)
		shas = append(shas, sha)
	})
	if err != nil {
		s.Sweep(shas)
		s.Uploads.Done(shas)
		if errors.Is(err, storage.ErrTooLarge) {
			api.Drain(r.Ctx)
			return storage.Manifest{}, nil, nil, cap.Err
		}
		return storage.Manifest{}, nil, nil, err
	}
	return m, tail, shas, nil
}
