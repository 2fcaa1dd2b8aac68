package documents

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"quire/auth"
	"quire/server/internal/api"
	"quire/storage"
)

// HandleGetPublication serves GET /publications/{documentId}: a redirect
// (307) to a signed URL of the published content.
func (s *Handlers) HandleGetPublication(r *api.Request) error {
	pub, err := s.DB.GetPublication(r.Site, r.DocID())
	if err != nil {
		return err
	}
	exp := strconv.FormatInt(s.Now().Add(api.DefaultURLDuration).Unix(), 10)
	sig := auth.SignURL(s.Deps.Auth.URLKey(), "publication", r.Site, pub.DocumentID, pub.ContentSHA, exp)
	q := url.Values{"expires": {exp}, "v": {pub.ContentSHA}, "signature": {sig}}
	r.Set(fiber.HeaderLocation, fmt.Sprintf("%s/published/%s/%s?%s", s.LinkBase(r.Ctx), url.PathEscape(r.Site), pub.DocumentID, q.Encode()))
	return r.SendStatus(http.StatusTemporaryRedirect)
}

// HandleDeletePublication serves DELETE /publications/{documentId}.
func (s *Handlers) HandleDeletePublication(r *api.Request) error {
	if _, err := s.Apply(r, storage.OpUnpublish, storage.DocumentRef{DocumentID: r.DocID()}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "Publication deleted"})
}

// HandleGetPublished streams published content for a signed URL.
func (s *Handlers) HandleGetPublished(c *fiber.Ctx) error {
	site, doc := api.SiteParam(c), strings.Clone(c.Params("documentId"))
	exp, v := strings.Clone(c.Query("expires")), strings.Clone(c.Query("v"))
	if !s.Deps.Auth.VerifyURL(c.Query("signature"), "publication", site, doc, v, exp) {
		return api.ErrStatus(http.StatusForbidden, "invalid signature")
	}
	if err := api.CheckURLExpiry(s.Now(), exp); err != nil {
		return err
	}
	pub, err := s.DB.GetPublication(site, doc)
	if err != nil {
		return err
	}
	if pub.ContentSHA != v {
		return &storage.NotFoundError{Msg: "Publication for document " + doc + " changed"}
	}
	rd, err := s.DB.OpenManifest(v)
	if err != nil {
		return err
	}
	ctype := pub.ContentType
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	name := pub.Path[strings.LastIndexByte(pub.Path, '/')+1:]
	api.ServeStored(c, api.StoredFile{ContentType: ctype, Name: name})
	// A watermarked document's publication is stamped as its content is
	// (API.md "Watermarks"); a type that cannot be is refused.
	if sent, err := s.Content.SendIfMarked(c, site, doc, rd, ctype); sent {
		return err
	}
	c.Set(fiber.HeaderETag, `"`+v+`"`)
	return c.SendStream(rd, int(rd.Size()))
}
