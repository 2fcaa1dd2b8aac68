package documents

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"quire/server/internal/api"
	"quire/storage"
)

// HandleGetDocument serves GET /documents/{documentId}.
func (s *Handlers) HandleGetDocument(r *api.Request) error {
	d, err := s.DB.GetDocument(r.Site, r.DocID())
	if err != nil {
		return err
	}
	out := api.DocumentJSON(d)
	if len(d.Children) > 0 {
		kids, err := s.DB.GetDocuments(r.Site, d.Children)
		if err != nil {
			return err
		}
		var list []map[string]any
		for _, k := range kids {
			list = append(list, api.DocumentJSON(k))
		}
		out["documents"] = list
	}
	return r.JSON(out)
}

// HandleUpdateDocument serves PATCH /documents/{documentId}.
func (s *Handlers) HandleUpdateDocument(r *api.Request) error {
	id := r.DocID()
	var in documentIn
	if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	if in.Artifacts {
		return api.Invalid("artifacts", "add an artifact with POST /documents")
	}
	cur, err := s.DB.GetDocument(r.Site, id)
	if err != nil {
		return err
	}
	p, errs := s.prepareDocument(r, &in, id, cur.BelongsToDocumentID)
	var children []*prepared
	for i := range in.Documents {
		cp, cerrs := s.prepareDocument(r, &in.Documents[i], r.NewID(), id)
		errs = append(errs, cerrs...)
		children = append(children, cp)
	}
	if err := api.CheckErrors(errs); err != nil {
		return err
	}
	if err := s.checkInlineSize(r, append(children, p)...); err != nil {
		return err
	}
	d := &p.nd.Document
	upd := storage.UpdateDocument{DocumentID: id, Metadata: d.Metadata, Tags: p.nd.Tags, Actions: p.nd.Actions, Attributes: p.nd.Attributes,
		DefaultActions: p.nd.DefaultActions}
	if in.Path != nil {
		upd.Path = &d.Path
	}
	if in.DeepLinkPath != nil {
		upd.DeepLinkPath = &d.DeepLinkPath
	}
	if in.ContentType != nil {
		upd.ContentType = &d.ContentType
	}
	if in.Width.Set {
		upd.Width = &d.Width
	}
	if in.Height.Set {
		upd.Height = &d.Height
	}
	if in.ArtifactCategory != nil {
		upd.ArtifactCategory = &d.ArtifactCategory
	}
	if p.hasBody {
		if err := s.attachInline(r, p); err != nil {
			return err
		}
		upd.Content, upd.Chunks = p.nd.Content, p.nd.Chunks
		if d.ChecksumType != "" {
			upd.Checksum, upd.ChecksumType = &d.Checksum, &d.ChecksumType
		}
		if in.ContentType == nil {
			upd.ContentType = &d.ContentType
		}
	}
	for _, cp := range children {
		if err := s.attachInline(r, cp); err != nil {
			return err
		}
		upd.Children = append(upd.Children, cp.nd)
	}
	if upd.Path != nil {
		if err := s.RequireDocPath(r, *upd.Path, storage.FolderWrite); err != nil {
			return err
		}
	}
	if err := s.RequireWritePaths(r, upd.Children); err != nil {
		return err
	}
	s.StampActionRights(r, upd.Actions)
	if _, err := s.Apply(r, storage.OpUpdateDocument, upd); err != nil {
		return err
	}
	resp := addDocumentResponse{DocumentID: id, SiteID: r.Site}
	if r.ArtifactID != "" {
		resp.DocumentID, resp.ArtifactID = r.PathDocID(), r.ArtifactID
	}
	if !p.hasBody && cur.DeepLinkPath == "" && d.DeepLinkPath == "" {
		resp.UploadURL, resp.Headers = s.UploadURL(r.Site, id, api.UploadOpts{Base: s.LinkBase(r.Ctx)})
	}
	for _, cp := range children {
		cr := childResult{DocumentID: cp.nd.Document.DocumentID}
		if !cp.hasBody && cp.nd.Document.DeepLinkPath == "" {
			cr.UploadURL, cr.Headers = s.UploadURL(r.Site, cr.DocumentID, api.UploadOpts{Base: s.LinkBase(r.Ctx)})
		}
		resp.Documents = append(resp.Documents, cr)
	}
	return r.JSON(resp)
}

func (s *Handlers) ApplyRef(r *api.Request, op storage.Op, id string) error {
	_, err := s.Apply(r, op, storage.DocumentRef{DocumentID: id})
	return err
}

// HandleDeleteDocument serves DELETE /documents/{documentId}.
func (s *Handlers) HandleDeleteDocument(r *api.Request) error {
	id := r.DocID()
	if r.ArtifactID != "" {
		if r.QueryBool("softDelete") {
			return api.Invalid("softDelete", "an artifact cannot be soft deleted")
		}
		return s.deleteArtifact(r, "'%s' object deleted")
	}
	if r.QueryBool("softDelete") {
		if err := s.ApplyRef(r, storage.OpSoftDelete, id); err != nil {
			return err
		}
		return r.JSON(api.MessageBody{Message: fmt.Sprintf("'%s' object soft deleted", id)})
	}
	if err := s.deleteDocument(r, id); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf("'%s' object deleted", id)})
}

// HandleRestoreDocument serves PUT /documents/{documentId}/restore.
func (s *Handlers) HandleRestoreDocument(r *api.Request) error {
	if err := s.ApplyRef(r, storage.OpRestore, r.DocID()); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "document restored"})
}

// HandlePurgeDocument serves DELETE /documents/{documentId}/purge.
func (s *Handlers) HandlePurgeDocument(r *api.Request) error {
	id := r.DocID()
	if r.ArtifactID != "" {
		return s.deleteArtifact(r, "Deleted document '%s' permanently")
	}
	if err := s.deleteDocument(r, id); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf("Deleted document '%s' permanently", id)})
}

// HandleGetDocuments serves GET /documents.
func (s *Handlers) HandleGetDocuments(r *api.Request) error {
	limit, err := api.ListLimit(r)
	if err != nil {
		return err
	}
	view, err := listProjection(r)
	if err != nil {
		return err
	}
	if st := r.Query("actionStatus"); st != "" {
		return s.listByActionStatus(r, st, limit, view)
	}
	if st := r.Query("syncStatus"); st != "" {
		// FormKiQ lists documents whose copy to its search service
		// failed. Quire's index is fed from storage and catches up on
		// its own, so no document is ever in these states.
		if !slices.Contains([]string{"FULLTEXT_METADATA_FAILED", "FULLTEXT_CONTENT_FAILED"}, strings.ToUpper(st)) {
			return api.Invalid("syncStatus", "invalid 'syncStatus' parameter")
		}
		return r.JSON(map[string]any{"documents": []any{}})
	}
	o := storage.ListOptions{Limit: limit, Next: r.Query("next"), Previous: r.Query("previous")}
	if r.QueryBool("softDeleted") || r.QueryBool("deleted") {
		o.SoftDeleted = true
		if o.Start, err = api.ParseDateParam(r, "start", false); err != nil {
			return err
		}
		if o.End, err = api.ParseDateParam(r, "end", true); err != nil {
			return err
		}
		switch strings.ToUpper(r.Query("sort")) {
		case "", "DESC":
		case "ASC":
			o.Ascending = true
		default:
			return api.Invalid("sort", "invalid 'sort' parameter")
		}
	} else if r.Query("start") != "" || r.Query("end") != "" {
		// FormKiQ's start and end select soft-deleted documents by the
		// date of their deletion: without softDeleted=true nothing matches.
		for i, name := range []string{"start", "end"} {
			if _, err := api.ParseDateParam(r, name, i == 1); err != nil {
				return err
			}
		}
		return r.JSON(map[string]any{"documents": []any{}})
	} else if r.Query("date") != "" {
		day, err := api.ParseDay(r.Query("date"), r.Query("tz"))
		if err != nil {
			return err
		}
		// List from the end of that day on, into older days.
		o.From = day.AddDate(0, 0, 1)
	}
	page, err := s.DB.ListDocuments(r.Site, o)
	if err != nil {
		return err
	}
	docs := make([]map[string]any, 0, len(page.Documents))
	for _, d := range page.Documents {
		if s.DocAllows(r, d.Path, storage.FolderRead) {
			m := view(d)
			if r.Query("projection") == "" {
				m = s.WithThumbnail(r, m, d)
			}
			docs = append(docs, m)
		}
	}
	out := map[string]any{"documents": docs}
	if page.Next != "" {
		out["next"] = page.Next
	}
	if page.Previous != "" {
		out["previous"] = page.Previous
	}
	return r.JSON(out)
}

var _ = http.StatusOK

// listProjection reads GET /documents' projection: DOCUMENT_ID_ONLY (the
// OpenAPI's one value) lists each document as its documentId alone; no
// value, the whole document; anything else is refused.
func listProjection(r *api.Request) (func(*storage.Document) map[string]any, error) {
	switch r.Query("projection") {
	case "":
		return api.DocumentJSON, nil
	case "DOCUMENT_ID_ONLY":
		return func(d *storage.Document) map[string]any { return map[string]any{"documentId": d.DocumentID} }, nil
	}
	return nil, api.Invalid("projection", "invalid 'projection' parameter: the only projection is DOCUMENT_ID_ONLY")
}

// listByActionStatus serves GET /documents?actionStatus=: documents that
// have an action in that status, by document id.
func (s *Handlers) listByActionStatus(r *api.Request, status string, limit int, view func(*storage.Document) map[string]any) error {
	status = strings.ToUpper(status)
	if !slices.Contains(storage.ListableActionStatuses, status) {
		return api.BadRequest("invalid actionStatus '" + r.Query("actionStatus") + "'")
	}
	ids, err := s.DB.DocsWithActionStatus(r.Site, status, r.Query("next"), limit+1)
	if err != nil {
		return err
	}
	out := map[string]any{}
	if len(ids) > limit {
		ids = ids[:limit]
		out["next"] = ids[limit-1]
	}
	docs := make([]map[string]any, 0, len(ids))
	for _, id := range ids {
		d, err := s.DB.GetDocument(r.Site, id)
		if err != nil {
			continue
		}
		if s.DocAllows(r, d.Path, storage.FolderRead) {
			docs = append(docs, view(d))
		}
	}
	out["documents"] = docs
	return r.JSON(out)
}
