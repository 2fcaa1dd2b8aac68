package documents

import (
	"fmt"
	"net/http"
	"strings"

	"quire/server/content"
	"quire/server/internal/api"
	"quire/storage"
)

// uploadRequest is the body of POST /documents/upload.
type uploadRequest struct {
	documentIn
}

// HandleAddDocumentUpload serves POST /documents/upload: it creates the
// document record and returns an upload URL for its content.
func (s *Handlers) HandleAddDocumentUpload(r *api.Request) error {
	var in uploadRequest
	if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	o, errs := content.UploadQuery(r)
	errs = append(errs, content.ChecksumOpts(&o, in.ChecksumType, in.Checksum)...)
	if err := s.Content.CheckContentLength(r, o); err != nil {
		return err
	}
	if in.Content != nil {
		errs = append(errs, storage.ValidationItem{Key: "content", Msg: "'content' is not allowed, upload it to the returned url"})
	}
	if in.Artifacts {
		errs = append(errs, storage.ValidationItem{Key: "artifacts", Msg: "add an artifact with POST /documents"})
	}
	id := r.NewID()
	if in.DocumentID != nil {
		id = *in.DocumentID
		if !api.IsUUIDv4(id) {
			return api.Invalid("documentId", fmt.Sprintf("invalid documentId '%s'", id))
		}
	}
	in.Checksum, in.ChecksumType = "", ""
	p, perrs := s.prepareDocument(r, &in.documentIn, id, "")
	errs = append(errs, perrs...)
	if err := api.CheckErrors(errs); err != nil {
		return err
	}
	return s.createForUpload(r, p, o)
}

// HandleGetDocumentUpload serves GET /documents/upload.
func (s *Handlers) HandleGetDocumentUpload(r *api.Request) error {
	// fiber answers HEAD with the GET handler; this GET creates a
	// document, so a HEAD (which a client or proxy may send freely,
	// without an Idempotency-Key) must not run it.
	if r.Method() == http.MethodHead {
		r.Set("Allow", "GET, POST")
		return api.ErrStatus(http.StatusMethodNotAllowed, "HEAD is not served on /documents/upload: GET creates a document")
	}
	o, errs := content.UploadQuery(r)
	errs = append(errs, content.ChecksumOpts(&o, r.Query("checksumType"), r.Query("checksum"))...)
	if err := s.Content.CheckContentLength(r, o); err != nil {
		return err
	}
	id := r.NewID()
	in := documentIn{}
	if v := r.Query("path"); v != "" {
		pv := strings.Clone(v)
		in.Path = &pv
	}
	p, perrs := s.prepareDocument(r, &in, id, "")
	errs = append(errs, perrs...)
	if err := api.CheckErrors(errs); err != nil {
		return err
	}
	return s.createForUpload(r, p, o)
}

func (s *Handlers) createForUpload(r *api.Request, p *prepared, o api.UploadOpts) error {
	id := p.nd.Document.DocumentID
	if err := s.RequireWritePaths(r, []storage.NewDocument{p.nd}); err != nil {
		return err
	}
	if _, err := s.Apply(r, storage.OpAddDocuments, storage.AddDocuments{Docs: []storage.NewDocument{p.nd}}); err != nil {
		return err
	}
	o.Base = s.LinkBase(r.Ctx)
	u, h := s.UploadURL(r.Site, id, o)
	status := http.StatusOK
	if r.Method() == http.MethodPost {
		status = http.StatusCreated
	}
	return r.Status(status).JSON(api.UrlResponse{DocumentID: id, URL: u, Headers: h})
}
