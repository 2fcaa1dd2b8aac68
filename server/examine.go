package server

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
	"quire/pipeline"
	"quire/storage"
)

// PDF examination (FormKiQ's GET /objects/examine/pdf and
// /objects/examine/{id}/pdf; API.md "Examine PDF").

// handleGetExaminePdfURL serves GET /objects/examine/pdf: an id and a
// signed URL to PUT the PDF to.
func (s *Server) handleGetExaminePdfURL(r *reqCtx) error {
	id := r.newID()
	exp := strconv.FormatInt(s.now().Add(defaultURLDuration).Unix(), 10)
	sig := auth.SignURL(s.deps.Auth.URLKey(), http.MethodPut, "examine", r.site, id, exp)
	q := url.Values{"expires": {exp}, "signature": {sig}}
	u := fmt.Sprintf("%s/uploads/examine/%s/%s?%s", s.linkBase(r.Ctx), url.PathEscape(r.site), id, q.Encode())
	return r.JSON(map[string]any{"id": id, "uploadUrl": u})
}

// handlePutExamine serves PUT /uploads/examine/{siteId}/{id}: the target
// of the examine upload URL (the signature is the credential).
func (s *Server) handlePutExamine(c *fiber.Ctx) error {
	site, id := siteParam(c), strings.Clone(c.Params("id"))
	exp := strings.Clone(c.Query("expires"))
	if !s.deps.Auth.VerifyURL(c.Query("signature"), http.MethodPut, "examine", site, id, exp) {
		return errStatus(http.StatusForbidden, "invalid signature")
	}
	if err := checkURLExpiry(s.now(), exp); err != nil {
		return err
	}
	r := &reqCtx{Ctx: c, p: &auth.Principal{Username: "examine", Sites: map[string][]auth.Permission{}}, site: site, now: s.now().UTC()}
	m, tail, shas, err := s.writeBody(r, storage.MaxExamineBytes)
	if err != nil {
		return err
	}
	defer s.uploads.done(shas)
	if _, err := s.apply(r, storage.OpPutExamine, storage.PutExamine{ID: id, Content: m, Chunks: tail}); err != nil {
		s.sweep(shas)
		return err
	}
	return c.SendStatus(http.StatusOK)
}

// handleGetExaminePdf serves GET /objects/examine/{id}/pdf: what the
// uploaded PDF holds. FormKiQ answers 201.
func (s *Server) handleGetExaminePdf(r *reqCtx) error {
	o, err := s.db.GetExamine(r.site, pathParam(r, "id"), r.now)
	if err != nil {
		return err
	}
	if s.deps.Pipeline == nil {
		return errStatus(http.StatusServiceUnavailable, "no engines to examine PDFs")
	}
	rd, err := s.db.OpenManifest(o.ContentSHA)
	if err != nil {
		return err
	}
	defer rd.Close()
	rep, err := s.deps.Pipeline.ExaminePDF(r.UserContext(), rd)
	var ee *pipeline.ExamineError
	if errors.As(err, &ee) {
		return badRequest(ee.Msg)
	}
	if err != nil {
		return err
	}
	return r.Status(http.StatusCreated).JSON(map[string]any{"fileinfo": rep})
}

// sweepExamines removes examine objects past their time (leader only).
func (s *Server) sweepExamines() {
	s.sweepExpired("examine object", s.db.ExpiredExamines, storage.OpDeleteExamine, func(id string) any {
		return storage.DeleteExamine{ID: id, Expired: true}
	})
}

// sweepExpired removes up to 500 records of a kind past their time, one
// command each (the applier checks the time again).
func (s *Server) sweepExpired(kind string, list func(at time.Time, limit int) ([]storage.DocRef, error), op storage.Op, payload func(id string) any) {
	refs, err := list(s.now(), 500)
	if err != nil {
		s.log.Warn("list expired records", "kind", kind, "err", err)
		return
	}
	for _, ref := range refs {
		cmd := storage.MustCommand(op, ref.Site, "", s.now().UTC(), payload(ref.ID))
		if _, err := s.deps.Applier.Apply(context.Background(), cmd); err != nil {
			s.log.Warn("remove an expired record", "kind", kind, "site", ref.Site, "id", ref.ID, "err", err)
			return
		}
	}
}
