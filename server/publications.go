package server

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"quire/auth"
	"quire/storage"
)

// handleGetPublication serves GET /publications/{documentId}: a redirect
// (307) to a signed URL of the published content.
func (s *Server) handleGetPublication(r *reqCtx) error {
	pub, err := s.db.GetPublication(r.site, r.docID())
	if err != nil {
		return err
	}
	exp := strconv.FormatInt(s.now().Add(defaultURLDuration).Unix(), 10)
	sig := auth.SignURL(s.deps.Auth.URLKey(), "publication", r.site, pub.DocumentID, pub.ContentSHA, exp)
	q := url.Values{"expires": {exp}, "v": {pub.ContentSHA}, "signature": {sig}}
	r.Set(fiber.HeaderLocation, fmt.Sprintf("%s/published/%s/%s?%s", s.linkBase(r.Ctx), url.PathEscape(r.site), pub.DocumentID, q.Encode()))
	return r.SendStatus(http.StatusTemporaryRedirect)
}

// handleDeletePublication serves DELETE /publications/{documentId}.
func (s *Server) handleDeletePublication(r *reqCtx) error {
	if _, err := s.apply(r, storage.OpUnpublish, storage.DocumentRef{DocumentID: r.docID()}); err != nil {
		return err
	}
	return r.JSON(messageBody{"Publication deleted"})
}

// handleGetPublished streams published content for a signed URL.
func (s *Server) handleGetPublished(c *fiber.Ctx) error {
	site, doc := siteParam(c), strings.Clone(c.Params("documentId"))
	exp, v := strings.Clone(c.Query("expires")), strings.Clone(c.Query("v"))
	if !s.deps.Auth.VerifyURL(c.Query("signature"), "publication", site, doc, v, exp) {
		return errStatus(http.StatusForbidden, "invalid signature")
	}
	if err := checkURLExpiry(s.now(), exp); err != nil {
		return err
	}
	pub, err := s.db.GetPublication(site, doc)
	if err != nil {
		return err
	}
	if pub.ContentSHA != v {
		return &storage.NotFoundError{Msg: "Publication for document " + doc + " changed"}
	}
	rd, err := s.db.OpenManifest(v)
	if err != nil {
		return err
	}
	ctype := pub.ContentType
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	name := pub.Path[strings.LastIndexByte(pub.Path, '/')+1:]
	serveStored(c, storedFile{ContentType: ctype, Name: name})
	// A watermarked document's publication is stamped as its content is
	// (API.md "Watermarks"); a type that cannot be is refused.
	if sent, err := s.sendIfMarked(c, site, doc, rd, ctype); sent {
		return err
	}
	c.Set(fiber.HeaderETag, `"`+v+`"`)
	return c.SendStream(rd, int(rd.Size()))
}
