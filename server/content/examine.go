package content

import (
	"context"
	"errors"
	"fmt"
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

// PDF examination (FormKiQ's GET /objects/examine/pdf and
// /objects/examine/{id}/pdf; API.md "Examine PDF").

// HandleGetExaminePdfURL serves GET /objects/examine/pdf: an id and a
// signed URL to PUT the PDF to.
func (s *Handlers) HandleGetExaminePdfURL(r *api.Request) error {
	id := r.NewID()
	exp := strconv.FormatInt(s.Now().Add(api.DefaultURLDuration).Unix(), 10)
	sig := auth.SignURL(s.Deps.Auth.URLKey(), http.MethodPut, "examine", r.Site, id, exp)
	q := url.Values{"expires": {exp}, "signature": {sig}}
	u := fmt.Sprintf("%s/uploads/examine/%s/%s?%s", s.LinkBase(r.Ctx), url.PathEscape(r.Site), id, q.Encode())
	return r.JSON(map[string]any{"id": id, "uploadUrl": u})
}

// HandlePutExamine serves PUT /uploads/examine/{siteId}/{id}: the target
// of the examine upload URL (the signature is the credential).
func (s *Handlers) HandlePutExamine(c *fiber.Ctx) error {
	site, id := api.SiteParam(c), strings.Clone(c.Params("id"))
	exp := strings.Clone(c.Query("expires"))
	if !s.Deps.Auth.VerifyURL(c.Query("signature"), http.MethodPut, "examine", site, id, exp) {
		return api.ErrStatus(http.StatusForbidden, "invalid signature")
	}
	if err := api.CheckURLExpiry(s.Now(), exp); err != nil {
		return err
	}
	r := &api.Request{Ctx: c, Principal: &auth.Principal{Username: "examine", Sites: map[string][]auth.Permission{}}, Site: site, Now: s.Now().UTC()}
	m, tail, shas, err := s.WriteBody(r, storage.MaxExamineBytes)
	if err != nil {
		return err
	}
	defer s.Uploads.Done(shas)
	if _, err := s.Apply(r, storage.OpPutExamine, storage.PutExamine{ID: id, Content: m, Chunks: tail}); err != nil {
		s.Sweep(shas)
		return err
	}
	return c.SendStatus(http.StatusOK)
}

// HandleGetExaminePdf serves GET /objects/examine/{id}/pdf: what the
// uploaded PDF holds. FormKiQ answers 201.
func (s *Handlers) HandleGetExaminePdf(r *api.Request) error {
	o, err := s.DB.GetExamine(r.Site, api.PathParam(r, "id"), r.Now)
	if err != nil {
		return err
	}
	if s.Deps.Pipeline == nil {
		return api.ErrStatus(http.StatusServiceUnavailable, "no engines to examine PDFs")
	}
	rd, err := s.DB.OpenManifest(o.ContentSHA)
	if err != nil {
		return err
	}
	defer rd.Close()
	rep, err := s.Deps.Pipeline.ExaminePDF(r.UserContext(), rd)
	var ee *pdfwork.ExamineError
	if errors.As(err, &ee) {
		return api.BadRequest(ee.Msg)
	}
	if err != nil {
		return err
	}
	return r.Status(http.StatusCreated).JSON(map[string]any{"fileinfo": rep})
}

// SweepExamines removes examine objects past their time (leader only).
func (s *Handlers) SweepExamines() {
	s.SweepExpired("examine object", s.DB.ExpiredExamines, storage.OpDeleteExamine, func(id string) any {
		return storage.DeleteExamine{ID: id, Expired: true}
	})
}

// SweepExpired removes up to 500 records of a kind past their time, one
// command each (the applier checks the time again).
func (s *Handlers) SweepExpired(kind string, list func(at time.Time, limit int) ([]storage.DocRef, error), op storage.Op, payload func(id string) any) {
	refs, err := list(s.Now(), 500)
	if err != nil {
		s.Log.Warn("list expired records", "kind", kind, "err", err)
		return
	}
	for _, ref := range refs {
		cmd := storage.MustCommand(op, ref.Site, "", s.Now().UTC(), payload(ref.ID))
		if _, err := s.Deps.Applier.Apply(context.Background(), cmd); err != nil {
			s.Log.Warn("remove an expired record", "kind", kind, "site", ref.Site, "id", ref.ID, "err", err)
			return
		}
	}
}
