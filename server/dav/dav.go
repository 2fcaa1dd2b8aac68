package dav

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"html"
	"io"
	"io/fs"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"golang.org/x/net/webdav"

	"quire/auth"
	qintake "quire/intake"
	"quire/server/content"
	"quire/server/intake"
	"quire/server/internal/api"
	"quire/server/internal/testhooks"
	"quire/server/search"
	"quire/storage"
)

// WebDAV (issue 32, source 3): a site's folders and documents as a tree
// at /dav/{siteId}/..., for Windows Explorer's mapped drives, Finder,
// LibreOffice and scanners' scan to WebDAV. Every request carries Basic
// auth (a directory user's password, or an API key as the password) and
// is refused without TLS unless the client is on loopback. The site's
// permissions apply (READ to read, WRITE to write, DELETE to delete) and
// the site's folder permissions on every path. PUT streams the body into
// content chunks: a new path is a new document (the create path of POST
// /documents), an existing document's path a new version of it. MKCOL
// makes a folder, MOVE moves or renames a document or a folder, DELETE
// soft-deletes documents (a folder: the documents under it, then the
// emptied folders). See API.md "WebDAV".
//
// A PUT is an intake (source WEBDAV): the site's intake profile named
// "webdav" (davProfileName), or without one the defaults of a new
// profile (OCR then FULLTEXT), gives the document its tags, attributes
// and actions, and quire_intake_* counts it. The path is the client's
// (not the profile's template), the creator the authenticated user, and
// the profile's duplicate policy does not apply: a client that PUTs a
// file expects it at the path it named (an existing document there gets
// a new version, with the profile's actions queued again).

// Methods are the methods of the WebDAV route (fiber must know the
// ones HTTP does not).
var Methods = []string{"PROPFIND", "PROPPATCH", "MKCOL", "GET", "PUT", "DELETE", "MOVE", "COPY", "LOCK", "UNLOCK"}

// ExtraMethods are the WebDAV methods fiber's default list lacks.
var ExtraMethods = []string{"PROPFIND", "PROPPATCH", "MKCOL", "COPY", "MOVE", "LOCK", "UNLOCK"}

// Limits of the WebDAV source.
const (
	// davMaxListing is the most entries of one folder a PROPFIND lists.
	davMaxListing = 10000
	// davMaxCopyCheck is the most entries of a folder tree a COPY by a
	// caller without GOVERN walks, looking for watermarked documents.
	davMaxCopyCheck = 10000
	// davMaxResponse bounds a buffered answer (PROPFIND's multistatus).
	davMaxResponse = 64 << 20
	// davCredTTL is how long a checked Basic credential is trusted
	// (a file manager sends it with every request; a password costs an
	// argon2 hash).
	davCredTTL = time.Minute
	// davMaxTreeOps bounds the documents and folders one DELETE or folder
	// MOVE acts on.
	davMaxTreeOps = 10000
)

// davCreds caches checked Basic credentials (hash of user and password)
// as the token that stands for them (CredentialToken), which every
// request authenticates again against the store: the cache saves the
// password hash and the sign-in's log entry, never a revocation.
type davCreds struct {
	mu sync.Mutex
	m  map[[32]byte]davCred
}

type davCred struct {
	c   intake.CheckedCredential
	exp time.Time
}

func (c *davCreds) get(k [32]byte, now time.Time) (intake.CheckedCredential, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[k]; ok && now.Before(e.exp) {
		return e.c, true
	}
	delete(c.m, k)
	return intake.CheckedCredential{}, false
}

func (c *davCreds) put(k [32]byte, cred intake.CheckedCredential, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) > 10000 {
		c.m = map[[32]byte]davCred{}
	}
	c.m[k] = davCred{c: cred, exp: now.Add(davCredTTL)}
}

var davState struct {
	once  sync.Once
	locks webdav.LockSystem
}

// davLocks is the servers' lock system (LOCK/UNLOCK are advisory and
// held in memory: a restart forgets them, as their timeouts allow, and
// each cluster node holds its own; API.md "WebDAV" says what that means).
func davLocks() webdav.LockSystem {
	davState.once.Do(func() { davState.locks = webdav.NewMemLS() })
	return davState.locks
}

// Options answers OPTIONS on /dav/...: the WebDAV classes and
// methods (the CORS middleware answers every OPTIONS, without a token).
func Options(c *fiber.Ctx) {
	if p := c.Path(); p == "/dav" || strings.HasPrefix(p, "/dav/") {
		c.Set("DAV", "1, 2")
		c.Set("MS-Author-Via", "DAV")
		c.Set(fiber.HeaderAllow, "OPTIONS, HEAD, "+strings.Join(Methods, ", "))
	}
}

// davUnauthorized asks for Basic credentials.
func davUnauthorized(c *fiber.Ctx) error {
	c.Set(fiber.HeaderWWWAuthenticate, `Basic realm="Quire WebDAV", charset="UTF-8"`)
	return api.ErrStatus(http.StatusUnauthorized, "Unauthorized")
}

// davPrincipal checks the request's Basic credentials.
func (s *Handlers) davPrincipal(c *fiber.Ctx) (*auth.Principal, error) {
	h := string(c.Request().Header.Peek(fiber.HeaderAuthorization))
	user, pass, ok := (&http.Request{Header: http.Header{"Authorization": {h}}}).BasicAuth()
	if !ok {
		return nil, intake.ErrBadCredentials
	}
	k := sha256.Sum256([]byte(user + "\x00" + pass))
	now := s.Now()
	if cred, ok := s.creds.get(k, now); ok && s.Intake.StillValid(cred) {
		if p, err := s.Deps.Auth.Authenticate(cred.Tok); err == nil {
			return p, nil
		}
		// Revoked, disabled or of another generation since: check the
		// password again.
	}
	cred, err := s.Intake.CredentialToken(context.Background(), api.PasswordCheck{Addr: c.IP()}, user, pass)
	if err != nil {
		return nil, err
	}
	p, err := s.Deps.Auth.Authenticate(cred.Tok)
	if err != nil {
		return nil, err
	}
	s.creds.put(k, cred, now)
	return p, nil
}

// davSecure: TLS, or a loopback client.
func davSecure(c *fiber.Ctx) bool {
	if c.Context().IsTLS() {
		return true
	}
	ip := c.Context().RemoteIP()
	return ip != nil && davTrusted(ip)
}

// davTrusted reports whether a client may send Basic credentials without
// TLS: a loopback client only (unless a test plays a LAN client from
// loopback: testhooks.DavLoopbackUntrusted).
func davTrusted(ip net.IP) bool { return ip.IsLoopback() && testhooks.DavLoopbackTrusted() }

// davWriteMethod: the method changes state (WRITE on the site).
func davWriteMethod(m string) bool {
	switch m {
	case "PUT", "MKCOL", "MOVE", "COPY", "PROPPATCH", "LOCK", "UNLOCK":
		return true
	}
	return false
}

// HandleDav serves /dav/{siteId}/...
func (s *Handlers) HandleDav(c *fiber.Ctx) error {
	if !davSecure(c) {
		api.Drain(c)
		return api.ErrStatus(http.StatusForbidden, "WebDAV needs HTTPS (plain HTTP is taken from loopback clients only)")
	}
	raw := string(c.Request().URI().Path())
	rest := strings.TrimPrefix(raw, "/dav")
	rest = strings.TrimPrefix(rest, "/")
	siteEsc, sub, _ := strings.Cut(rest, "/")
	site, err := url.PathUnescape(siteEsc)
	if err != nil || !utf8.ValidString(site) {
		api.Drain(c)
		return api.ErrStatus(http.StatusBadRequest, "invalid path")
	}
	p, err := s.davPrincipal(c)
	if errors.Is(err, intake.ErrBadCredentials) {
		api.Drain(c)
		return davUnauthorized(c)
	}
	if err != nil {
		api.Drain(c)
		return err
	}
	if site == "" || !storage.CheckSiteID(site) {
		api.Drain(c)
		return api.ErrStatus(http.StatusNotFound, "WebDAV paths are /dav/{siteId}/...")
	}
	perm := auth.PermRead
	switch {
	case c.Method() == http.MethodDelete:
		perm = auth.PermDelete
	case davWriteMethod(c.Method()):
		perm = auth.PermWrite
	}
	if !p.Can(site, auth.PermRead) || !p.Can(site, perm) {
		api.Drain(c)
		return api.ErrStatus(http.StatusForbidden, "no "+string(perm)+" permission on site "+site)
	}
	r := &api.Request{Ctx: c, Principal: p, Site: site, Now: s.Now().UTC()}
	fsys := &davFS{s: s, r: r}
	qp, err := url.PathUnescape(sub)
	if err != nil || !utf8.ValidString(qp) {
		api.Drain(c)
		return api.ErrStatus(http.StatusBadRequest, "invalid path")
	}
	qp = davClean(qp)
	if msg := fsys.precheck(c, qp); msg != "" {
		api.Drain(c)
		return api.ErrStatus(http.StatusForbidden, msg)
	}
	switch c.Method() {
	case http.MethodGet, http.MethodHead:
		return s.davGet(c, fsys, qp)
	case "PROPFIND":
		if strings.EqualFold(strings.TrimSpace(string(c.Request().Header.Peek("Depth"))), "infinity") || len(c.Request().Header.Peek("Depth")) == 0 {
			// RFC 4918 9.1: a server may refuse an unbounded walk.
			api.Drain(c)
			c.Set(fiber.HeaderContentType, "application/xml; charset=utf-8")
			return c.Status(http.StatusForbidden).SendString(`<?xml version="1.0" encoding="utf-8"?><D:error xmlns:D="DAV:"><D:propfind-finite-depth/></D:error>`)
		}
	}
	return s.davServe(c, fsys, site)
}

// precheck says why the caller lacks a folder permission the method
// needs ("": it has them), answered 403 (the webdav handler would answer
// 405 or 404).
func (fsys *davFS) precheck(c *fiber.Ctx, qp string) string {
	deny := func(dir, perm string) string { return storage.FolderDenied(dir, perm).Msg }
	dir, _ := api.SplitDocPath(qp)
	switch c.Method() {
	case http.MethodGet, http.MethodHead, "PROPFIND", http.MethodOptions:
		if _, err := fsys.Stat(context.Background(), qp); errors.Is(err, fs.ErrPermission) {
			return deny(qp, storage.FolderRead)
		}
	case http.MethodPut, "MKCOL", "PROPPATCH":
		if !fsys.s.FolderAllows(fsys.r, dir, storage.FolderWrite) {
			return deny(dir, storage.FolderWrite)
		}
	case http.MethodDelete:
		if !fsys.s.FolderAllows(fsys.r, dir, storage.FolderDelete) {
			return deny(dir, storage.FolderDelete)
		}
	case "MOVE", "COPY":
		if c.Method() == "MOVE" && !fsys.s.FolderAllows(fsys.r, dir, storage.FolderWrite) {
			return deny(dir, storage.FolderWrite)
		}
		if c.Method() == "COPY" && !fsys.r.Principal.Can(fsys.r.Site, auth.PermGovern) {
			// A copy of a watermarked document would carry no watermark
			// (API.md "Watermarks"); in a folder's copy, davFile.open
			// refuses it.
			if fi, err := fsys.Stat(context.Background(), qp); err == nil && !fi.(*davInfo).dir {
				if marks, err := fsys.s.Content.DocMarks(fsys.r.Site, fi.(*davInfo).id); err != nil || len(marks) > 0 {
					return "the document carries a watermark: only GOVERN may copy it"
				}
			} else if err == nil {
				if msg := fsys.markedInside(qp); msg != "" {
					return msg
				}
			}
		}
		if u, err := url.Parse(string(c.Request().Header.Peek("Destination"))); err == nil {
			d := strings.TrimPrefix(u.Path, "/dav/"+fsys.r.Site)
			ddir, _ := api.SplitDocPath(davClean(d))
			if !fsys.s.FolderAllows(fsys.r, ddir, storage.FolderWrite) {
				return deny(ddir, storage.FolderWrite)
			}
		}
	}
	return ""
}

// markedInside walks folder qp before a non-governor's COPY of it: a
// watermarked document inside refuses the whole copy (checked first, so
// that the copy does not stop half-way on it), and so does a tree larger
// than davMaxCopyCheck entries, which is not walked to the end.
func (fsys *davFS) markedInside(qp string) string {
	todo, seen := []string{qp}, 0
	for len(todo) > 0 {
		dir := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		list, err := fsys.list(dir)
		if err != nil {
			return "the folder cannot be read: " + err.Error()
		}
		for _, fi := range list {
			if seen++; seen > davMaxCopyCheck {
				return fmt.Sprintf("the folder holds more than %d entries: only GOVERN may copy it (its documents' watermarks are not checked one by one)", davMaxCopyCheck)
			}
			in := fi.(*davInfo)
			full := in.name
			if dir != "" {
				full = dir + "/" + in.name
			}
			if in.dir {
				todo = append(todo, full)
				continue
			}
			if marks, err := fsys.s.Content.DocMarks(fsys.r.Site, in.id); err != nil || len(marks) > 0 {
				return "'" + full + "' carries a watermark: only GOVERN may copy its folder"
			}
		}
	}
	return ""
}

// davClean is a Quire path from a WebDAV one ("" is the site's root).
func davClean(p string) string { return strings.Trim(path.Clean("/"+p), "/") }

// davGet streams a document (GET, HEAD), or lists a folder as HTML.
func (s *Handlers) davGet(c *fiber.Ctx, fsys *davFS, qp string) error {
	fi, err := fsys.Stat(context.Background(), qp)
	if errors.Is(err, fs.ErrNotExist) {
		return api.ErrStatus(http.StatusNotFound, "Not Found")
	}
	if err != nil {
		return err
	}
	info := fi.(*davInfo)
	if info.dir {
		items, err := fsys.list(qp)
		if err != nil {
			return err
		}
		var b strings.Builder
		b.WriteString("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Quire</title></head><body><ul>\n")
		for _, it := range items {
			name := it.Name()
			if it.IsDir() {
				name += "/"
			}
			fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a></li>\n", html.EscapeString(url.PathEscape(it.Name())+strings.TrimPrefix(name, it.Name())), html.EscapeString(name))
		}
		b.WriteString("</ul></body></html>\n")
		c.Set(fiber.HeaderContentType, "text/html; charset=utf-8")
		return c.SendString(b.String())
	}
	cr, doc, err := s.DB.OpenContent(fsys.r.Site, info.id)
	if err != nil {
		if api.IsNotFound(err) {
			return api.ErrStatus(http.StatusNotFound, "Not Found")
		}
		return err
	}
	// Passive types show in a browser that follows a WebDAV link; active
	// ones are saved, never run on Quire's origin (ServeStored).
	api.ServeStored(c, api.StoredFile{ContentType: info.ctype, Name: path.Base(qp), Inline: true})
	c.Set(fiber.HeaderLastModified, doc.LastModifiedDate.UTC().Format(http.TimeFormat))
	// A watermarked document is served stamped (WebDAV has no bypass).
	if sent, err := s.Content.SendIfMarked(c, fsys.r.Site, info.id, cr, doc.ContentType); sent {
		return err
	}
	c.Set(fiber.HeaderETag, info.etag)
	c.Set(fiber.HeaderAcceptRanges, "none")
	if c.Method() == http.MethodHead {
		cr.Close()
		c.Response().Header.SetContentLength(int(cr.Size()))
		c.Response().SkipBody = true
		return nil
	}
	c.Context().SetBodyStream(cr, int(cr.Size()))
	return nil
}

// davServe runs x/net/webdav's handler for the other methods on a
// net/http request made from fiber's: the request body is streamed, the
// answer (a status, or PROPFIND's multistatus) is buffered, bounded.
func (s *Handlers) davServe(c *fiber.Ctx, fsys *davFS, site string) error {
	u, err := url.ParseRequestURI(string(c.Request().RequestURI()))
	if err != nil {
		api.Drain(c)
		return api.ErrStatus(http.StatusBadRequest, "invalid request URI")
	}
	body := api.BodyStream(c)
	if body == nil {
		body = bytes.NewReader(c.Body())
	}
	fsys.body = &davBody{r: &content.CompleteBody{R: body, Want: int64(c.Request().Header.ContentLength()), Conn: api.ConnOf(c)}}
	req, err := http.NewRequestWithContext(context.Background(), c.Method(), u.String(), io.NopCloser(fsys.body))
	if err != nil {
		api.Drain(c)
		return api.ErrStatus(http.StatusBadRequest, "invalid request")
	}
	req.Host = string(c.Request().Host())
	req.ContentLength = int64(c.Request().Header.ContentLength())
	c.Request().Header.VisitAll(func(k, v []byte) { req.Header.Add(string(k), string(v)) })
	req.RemoteAddr = c.Context().RemoteAddr().String()
	h := &webdav.Handler{Prefix: "/dav/" + site, FileSystem: fsys, LockSystem: davLocks(),
		Logger: func(r *http.Request, err error) {
			if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrExist) {
				s.Log.Debug("webdav", "method", r.Method, "err", err)
			}
		}}
	w := &davResponse{h: http.Header{}}
	h.ServeHTTP(w, req)
	if fsys.failed != nil {
		api.Drain(c)
		return fsys.failed
	}
	for k, vs := range w.h {
		for _, v := range vs {
			c.Response().Header.Add(k, v)
		}
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.over {
		return api.ErrStatus(http.StatusInsufficientStorage, "the answer is too large")
	}
	if w.status >= 400 && !strings.Contains(w.h.Get("Content-Type"), "xml") {
		// webdav's plain status text, in Quire's error shape.
		msg := strings.TrimSpace(w.buf.String())
		if msg == "" {
			msg = http.StatusText(w.status)
		}
		return api.ErrStatus(w.status, msg)
	}
	c.Status(w.status)
	return c.Send(w.buf.Bytes())
}

// davResponse is a bounded, buffered http.ResponseWriter.
type davResponse struct {
	h      http.Header
	status int
	buf    bytes.Buffer
	over   bool
}

func (w *davResponse) Header() http.Header { return w.h }
func (w *davResponse) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}
func (w *davResponse) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.buf.Len()+len(p) > davMaxResponse {
		w.over = true
		return 0, errors.New("webdav answer too large")
	}
	return w.buf.Write(p)
}

// davFS is a site's folders and documents as a webdav.FileSystem, for
// one request.
type davFS struct {
	s *Handlers
	r *api.Request
	// failed is a failure that must answer as Quire answers it (a
	// refused write: 507, a site limit: 413) rather than webdav's 405.
	failed error
	// body is the request's body as webdav reads it.
	body *davBody
}

// davBody remembers that the request body was cut short (or failed):
// x/net/webdav closes the file it wrote whatever its copy answered, and
// the close must then commit nothing.
type davBody struct {
	r   io.Reader
	err error
}

func (b *davBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		b.err = err
	}
	return n, err
}

// davInfo is a folder's or a document's os.FileInfo.
type davInfo struct {
	name  string
	dir   bool
	size  int64
	mod   time.Time
	id    string // document id
	ctype string
	etag  string
}

func (i *davInfo) Name() string       { return i.name }
func (i *davInfo) Size() int64        { return i.size }
func (i *davInfo) ModTime() time.Time { return i.mod }
func (i *davInfo) IsDir() bool        { return i.dir }
func (i *davInfo) Sys() any           { return nil }
func (i *davInfo) Mode() os.FileMode {
	if i.dir {
		return os.ModeDir | 0o755
	}
	return 0o644
}

// ContentType implements webdav.ContentTyper (no content sniffing).
func (i *davInfo) ContentType(context.Context) (string, error) {
	if i.dir {
		return "", webdav.ErrNotImplemented
	}
	return i.ctype, nil
}

// ETag implements webdav.ETager: the content's SHA-256.
func (i *davInfo) ETag(context.Context) (string, error) {
	if i.dir || i.etag == "" {
		return "", webdav.ErrNotImplemented
	}
	return i.etag, nil
}

func docInfo(name string, d *storage.Document) *davInfo {
	ct := d.ContentType
	if ct == "" {
		ct = mime.TypeByExtension(path.Ext(name))
	}
	if ct == "" {
		ct = "application/octet-stream"
	}
	etag := ""
	if d.ContentSHA256 != "" {
		etag = `"` + d.ContentSHA256 + `"`
	}
	return &davInfo{name: name, size: d.ContentLength, mod: d.LastModifiedDate, id: d.DocumentID, ctype: ct, etag: etag}
}

// Stat implements webdav.FileSystem. A path the folder permissions hide
// is fs.ErrPermission.
func (fsys *davFS) Stat(_ context.Context, name string) (os.FileInfo, error) {
	p := davClean(name)
	s, site := fsys.s, fsys.r.Site
	if p == "" {
		return &davInfo{name: "/", dir: true, mod: time.Unix(0, 0)}, nil
	}
	dir, base := api.SplitDocPath(p)
	if id, err := s.DB.DocumentIDByPath(site, p); err == nil && id != "" {
		d, err := s.DB.GetDocument(site, id)
		if err == nil {
			if !s.FolderAllows(fsys.r, dir, storage.FolderRead) {
				return nil, fs.ErrPermission
			}
			return docInfo(base, d), nil
		}
		if !api.IsNotFound(err) {
			return nil, err
		}
	} else if err != nil && !api.IsNotFound(err) {
		return nil, err
	}
	ok, err := s.DB.FolderExists(site, p)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fs.ErrNotExist
	}
	if !s.FolderAllows(fsys.r, p, storage.FolderRead) {
		return nil, fs.ErrPermission
	}
	return &davInfo{name: base, dir: true, mod: time.Unix(0, 0)}, nil
}

// list is a folder's entries the caller may read.
func (fsys *davFS) list(p string) ([]os.FileInfo, error) {
	s, site := fsys.s, fsys.r.Site
	var out []os.FileInfo
	after := ""
	for len(out) < davMaxListing {
		page, err := s.DB.ListFolderPage(site, p, after, 500)
		if err != nil {
			return nil, err
		}
		for _, it := range page.Items {
			full := it.Name
			if p != "" {
				full = p + "/" + it.Name
			}
			if it.Entry.Folder {
				if s.FolderAllows(fsys.r, full, storage.FolderRead) {
					out = append(out, &davInfo{name: it.Name, dir: true, mod: time.Unix(0, 0)})
				}
				continue
			}
			if it.Doc != nil && s.FolderAllows(fsys.r, p, storage.FolderRead) {
				out = append(out, docInfo(it.Name, it.Doc))
			}
		}
		if page.Next == "" {
			break
		}
		after = page.Next
	}
	return out, nil
}

// Mkdir implements webdav.FileSystem.
func (fsys *davFS) Mkdir(_ context.Context, name string, _ os.FileMode) error {
	p := davClean(name)
	if p == "" {
		return fs.ErrExist
	}
	if _, err := fsys.Stat(context.Background(), p); err == nil {
		return fs.ErrExist
	}
	dir, _ := api.SplitDocPath(p)
	if ok, err := fsys.s.DB.FolderExists(fsys.r.Site, dir); err != nil {
		return err
	} else if !ok {
		return fs.ErrNotExist // 409: the parent is missing
	}
	if _, err := search.CheckFolderPath(p); err != nil {
		return fs.ErrInvalid
	}
	_, err := fsys.s.Apply(fsys.r, storage.OpAddFolder, storage.FolderRef{Path: p})
	return err
}

// OpenFile implements webdav.FileSystem: reading a folder or a document,
// or writing one (PUT).
func (fsys *davFS) OpenFile(ctx context.Context, name string, flag int, _ os.FileMode) (webdav.File, error) {
	p := davClean(name)
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC) != 0 {
		return fsys.create(p)
	}
	fi, err := fsys.Stat(ctx, p)
	if err != nil {
		return nil, err
	}
	return &davFile{fsys: fsys, path: p, info: fi.(*davInfo)}, nil
}

// davFile is an open folder or document (read side).
type davFile struct {
	fsys *davFS
	path string
	info *davInfo
	cr   *storage.ContentReader
	list []os.FileInfo
	pos  int
}

func (f *davFile) open() error {
	if f.cr != nil {
		return nil
	}
	if f.info.dir {
		return fs.ErrInvalid
	}
	// Reads here serve COPY: a watermarked document's content is not
	// copied into an unwatermarked one, but by its governors.
	if r := f.fsys.r; !r.Principal.Can(r.Site, auth.PermGovern) {
		marks, err := f.fsys.s.Content.DocMarks(r.Site, f.info.id)
		if err != nil {
			return err
		}
		if len(marks) > 0 {
			return fs.ErrPermission
		}
	}
	cr, _, err := f.fsys.s.DB.OpenContent(f.fsys.r.Site, f.info.id)
	if err != nil {
		return err
	}
	f.cr = cr
	return nil
}

func (f *davFile) Read(p []byte) (int, error) {
	if err := f.open(); err != nil {
		return 0, err
	}
	return f.cr.Read(p)
}

func (f *davFile) Seek(off int64, whence int) (int64, error) {
	if err := f.open(); err != nil {
		return 0, err
	}
	return f.cr.Seek(off, whence)
}

func (f *davFile) Write([]byte) (int, error) { return 0, fs.ErrPermission }

func (f *davFile) Close() error {
	if f.cr != nil {
		return f.cr.Close()
	}
	return nil
}

func (f *davFile) Stat() (os.FileInfo, error) { return f.info, nil }

func (f *davFile) Readdir(count int) ([]os.FileInfo, error) {
	if !f.info.dir {
		return nil, fs.ErrInvalid
	}
	if f.list == nil {
		l, err := f.fsys.list(f.path)
		if err != nil {
			return nil, err
		}
		f.list = l
	}
	rest := f.list[f.pos:]
	if count <= 0 {
		f.pos = len(f.list)
		return rest, nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	n := min(count, len(rest))
	f.pos += n
	return rest[:n], nil
}

// create opens a document for writing (PUT): the body streams into
// content chunks; Close makes the document, or a new version of the
// document at the path.
func (fsys *davFS) create(p string) (webdav.File, error) {
	dir, base := api.SplitDocPath(p)
	if p == "" || base == "" {
		return nil, fs.ErrInvalid
	}
	if fi, err := fsys.Stat(context.Background(), p); err == nil && fi.IsDir() {
		return nil, fs.ErrInvalid
	}
	if ok, err := fsys.s.DB.FolderExists(fsys.r.Site, dir); err != nil {
		return nil, err
	} else if !ok {
		return nil, fs.ErrNotExist // 409
	}
	if errs := storage.CheckText("path", p, storage.MaxPathBytes); errs != nil {
		return nil, fs.ErrInvalid
	}
	existing := ""
	if id, err := fsys.s.DB.DocumentIDByPath(fsys.r.Site, p); err == nil {
		if _, err := fsys.s.DB.GetDocument(fsys.r.Site, id); err == nil {
			existing = id
		}
	}
	limit, err := fsys.s.Content.UploadLimit(fsys.r.Site, -1)
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	w := &davWriter{fsys: fsys, path: p, name: base, existing: existing, pw: pw, done: make(chan struct{}),
		head: qintake.NewHeadReader(pr), ctype: string(fsys.r.Request().Header.ContentType())}
	go func() {
		defer close(w.done)
		defer pr.Close()
		w.m, w.tail, w.err = storage.WriteContent(context.Background(), fsys.s.Deps.Applier, w.head, limit.N, func(sha string) {
			fsys.s.Content.Uploads.Add(sha)
			w.shas = append(w.shas, sha)
		})
		if errors.Is(w.err, storage.ErrTooLarge) {
			w.err = limit.Err
		}
		if w.err != nil {
			pr.CloseWithError(w.err)
		}
	}()
	return w, nil
}

// davWriter is a document being written by PUT.
type davWriter struct {
	fsys     *davFS
	path     string
	name     string
	existing string
	pw       *io.PipeWriter
	done     chan struct{}
	n        int64
	m        storage.Manifest
	tail     []storage.Chunk
	shas     []string
	err      error
	closed   bool
	head     *qintake.HeadReader
	ctype    string // the request's Content-Type
}

func (w *davWriter) Write(p []byte) (int, error) {
	n, err := w.pw.Write(p)
	w.n += int64(n)
	return n, err
}

func (w *davWriter) Read([]byte) (int, error)           { return 0, fs.ErrPermission }
func (w *davWriter) Seek(int64, int) (int64, error)     { return 0, fs.ErrPermission }
func (w *davWriter) Readdir(int) ([]os.FileInfo, error) { return nil, fs.ErrInvalid }

func (w *davWriter) Stat() (os.FileInfo, error) {
	return &davInfo{name: w.name, size: w.n, mod: w.fsys.r.Now}, nil
}

// Close ends the body and commits the document (or its new version)
// through the site's WebDAV intake profile.
func (w *davWriter) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	w.pw.Close()
	<-w.done
	s, r := w.fsys.s, w.fsys.r
	defer s.Content.Uploads.Done(w.shas)
	prof, stored, perr := s.davProfile(r.Site)
	name := davProfileName
	if prof != nil {
		name = prof.Name
	}
	dir, _ := api.SplitDocPath(w.path)
	src := qintake.Source{Kind: qintake.KindWebDAV, Name: w.name, Folder: dir, ContentType: w.ctype,
		Actor: r.User(), RequestID: api.RequestID(r.Ctx)}
	fail := func(err error) error {
		s.Content.Sweep(w.shas)
		w.fsys.failed = err
		s.Intake.Intake.Counted(qintake.KindWebDAV, name, "failed", 0)
		if stored && qintake.Permanent(err) {
			s.Intake.IntakeFailed(r.Site, name, src, err)
		}
		return err
	}
	if w.err != nil {
		return fail(w.err)
	}
	if b := w.fsys.body; b != nil && b.err != nil {
		return fail(b.err) // a cut PUT: nothing is committed
	}
	if perr != nil {
		return fail(perr)
	}
	if err := s.Gate.Wait(context.Background()); err != nil {
		return fail(err)
	}
	nd := s.Intake.Intake.Build(prof, src, w.path, w.m, w.tail, w.head.Head())
	nd.Document.UserID = r.User()
	// Without a webdav profile the site's processing.defaultActions apply,
	// added by the applier in the writing transaction (issue 46).
	nd.DefaultActions = !stored
	var err error
	outcome := strings.ToLower(storage.IntakeCreated)
	if w.existing != "" {
		ct := nd.Document.ContentType
		up := storage.UpdateDocument{DocumentID: w.existing, Content: nd.Content, Chunks: nd.Chunks, ContentType: &ct,
			Tags: nd.Tags, Attributes: nd.Attributes, Actions: nd.Actions, Writer: s.ActorOf(r), DefaultActions: nd.DefaultActions}
		_, err = s.Apply(r, storage.OpUpdateDocument, up)
		outcome = strings.ToLower(storage.IntakeVersioned)
	} else {
		_, err = s.Apply(r, storage.OpAddDocuments, storage.AddDocuments{Docs: []storage.NewDocument{nd}, Writer: s.ActorOf(r)})
	}
	if err != nil {
		return fail(err)
	}
	s.Intake.Intake.Counted(qintake.KindWebDAV, name, outcome, w.m.Size)
	return nil
}

// davProfileName is the intake profile WebDAV uploads of a site go
// through, when the site has one.
const davProfileName = "webdav"

// davProfile is the site's WebDAV intake profile (stored: true) or,
// without one, a profile with no actions of its own: the site's default
// processing applies (the PUT sets DefaultActions).
func (s *Handlers) davProfile(site string) (*storage.IntakeProfile, bool, error) {
	p, err := s.DB.IntakeProfile(site, davProfileName)
	if err == nil {
		return p, true, nil
	}
	if !api.IsNotFound(err) {
		return nil, false, err
	}
	return &storage.IntakeProfile{Name: davProfileName}, false, nil
}

// RemoveAll implements webdav.FileSystem: a document is soft-deleted; a
// folder's documents are soft-deleted, then its emptied folders removed.
func (fsys *davFS) RemoveAll(ctx context.Context, name string) error {
	p := davClean(name)
	if p == "" {
		return fs.ErrPermission
	}
	fi, err := fsys.Stat(ctx, p)
	if err != nil {
		return err
	}
	ops := 0
	var rm func(p string, info *davInfo) error
	rm = func(p string, info *davInfo) error {
		ops++
		if ops > davMaxTreeOps {
			return fmt.Errorf("more than %d documents and folders", davMaxTreeOps)
		}
		if !info.dir {
			dir, _ := api.SplitDocPath(p)
			if !fsys.s.FolderAllows(fsys.r, dir, storage.FolderDelete) {
				return fs.ErrPermission
			}
			return fsys.s.Documents.ApplyRef(fsys.r, storage.OpSoftDelete, info.id)
		}
		items, err := fsys.list(p)
		if err != nil {
			return err
		}
		for _, it := range items {
			if err := rm(p+"/"+it.Name(), it.(*davInfo)); err != nil {
				return err
			}
		}
		if !fsys.s.FolderAllows(fsys.r, p, storage.FolderDelete) {
			return fs.ErrPermission
		}
		_, err = fsys.s.Apply(fsys.r, storage.OpDeleteFolder, storage.FolderRef{Path: p})
		return err
	}
	return rm(p, fi.(*davInfo))
}

// Rename implements webdav.FileSystem (MOVE): a document takes the new
// path; a folder moves into the new parent (a folder move), and a new
// name is made by moving its entries into a new folder.
func (fsys *davFS) Rename(ctx context.Context, oldName, newName string) error {
	from, to := davClean(oldName), davClean(newName)
	if from == "" || to == "" {
		return fs.ErrPermission
	}
	fi, err := fsys.Stat(ctx, from)
	if err != nil {
		return err
	}
	toDir, toBase := api.SplitDocPath(to)
	if ok, err := fsys.s.DB.FolderExists(fsys.r.Site, toDir); err != nil {
		return err
	} else if !ok {
		return fs.ErrNotExist
	}
	info := fi.(*davInfo)
	if !info.dir {
		up := storage.UpdateDocument{DocumentID: info.id, Path: &to, Writer: fsys.s.ActorOf(fsys.r)}
		_, err := fsys.s.Apply(fsys.r, storage.OpUpdateDocument, up)
		return err
	}
	if to == from || strings.HasPrefix(to+"/", from+"/") {
		return fs.ErrInvalid
	}
	_, fromBase := api.SplitDocPath(from)
	if fromBase == toBase {
		return fsys.moveFolder(from, toDir)
	}
	// A new name: a new folder, the entries moved into it, the old one
	// removed.
	if err := fsys.Mkdir(ctx, to, 0); err != nil {
		return err
	}
	items, err := fsys.list(from)
	if err != nil {
		return err
	}
	for _, it := range items {
		if err := fsys.Rename(ctx, from+"/"+it.Name(), to+"/"+it.Name()); err != nil {
			return err
		}
	}
	_, err = fsys.s.Apply(fsys.r, storage.OpDeleteFolder, storage.FolderRef{Path: from})
	return err
}

// moveFolder moves folder source into target ("" the root) and waits.
func (fsys *davFS) moveFolder(source, target string) error {
	s, r := fsys.s, fsys.r
	res, err := s.Apply(r, storage.OpStartFolderMove, storage.StartFolderMove{JobID: uuid.NewString(), Source: source, Target: target})
	if err != nil {
		return err
	}
	return <-s.Search.Moves.Run(r.Site, res.Value.(storage.FolderMoveJob))
}
