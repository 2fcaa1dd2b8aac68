package documents

import (
	"fmt"
	"net/http"

	"quire/server/internal/api"
	"quire/storage"
)

// addArtifact serves POST /documents with "artifacts": true: a new
// artifact of the document documentId. Without content or deepLinkPath
// the response carries an uploadUrl for the artifact's content.
func (s *Handlers) addArtifact(r *api.Request, in *documentIn) error {
	if in.DocumentID == nil {
		return api.Invalid("documentId", "'documentId' is required when 'artifacts' is true")
	}
	parent := *in.DocumentID
	if !api.IsUUIDv4(parent) {
		return api.Invalid("documentId", fmt.Sprintf("invalid documentId '%s'", parent))
	}
	// An artifact is written into its document: WRITE in the document's
	// folder (issue 29).
	if err := s.RequireDocOf(r, parent, storage.FolderWrite); err != nil {
		return err
	}
	var errs []storage.ValidationItem
	if len(in.Documents) > 0 {
		errs = append(errs, storage.ValidationItem{Key: "documents", Msg: "an artifact cannot have child documents"})
	}
	if len(in.Actions) > 0 {
		errs = append(errs, storage.ValidationItem{Key: "actions", Msg: "actions cannot be added to an artifact"})
	}
	artID := r.NewID()
	p, perrs := s.prepareDocument(r, in, artID, "")
	errs = append(errs, perrs...)
	if err := api.CheckErrors(errs); err != nil {
		return err
	}
	if err := api.CheckErrors(storage.CheckNewDocuments([]storage.NewDocument{p.nd})); err != nil {
		return err
	}
	if err := s.checkInlineSize(r, p); err != nil {
		return err
	}
	if err := s.attachInline(r, p); err != nil {
		return err
	}
	if _, err := s.Apply(r, storage.OpAddArtifact, storage.AddArtifact{DocumentID: parent, Artifact: p.nd}); err != nil {
		return err
	}
	resp := map[string]any{"documentId": parent, "artifactId": artID, "siteId": r.Site}
	if !p.hasBody && p.nd.Document.DeepLinkPath == "" {
		resp["uploadUrl"], resp["headers"] = s.UploadURL(r.Site, artID, api.UploadOpts{Base: s.LinkBase(r.Ctx)})
	}
	return r.Status(http.StatusCreated).JSON(resp)
}

// HandleGetDocumentArtifacts serves GET /documents/{documentId}/artifacts:
// FormKiQ's documents-list shape, oldest first, paged with next.
// artifactCategory filters (Quire's addition, API.md).
func (s *Handlers) HandleGetDocumentArtifacts(r *api.Request) error {
	limit, err := api.ListLimit(r)
	if err != nil {
		return err
	}
	page, err := s.DB.ListArtifacts(r.Site, r.PathDocID(), r.Query("artifactCategory"), r.Query("next"), limit)
	if err != nil {
		return err
	}
	docs := make([]map[string]any, 0, len(page.Artifacts))
	for _, a := range page.Artifacts {
		docs = append(docs, api.DocumentJSON(a))
	}
	out := map[string]any{"documents": docs}
	if page.Next != "" {
		out["next"] = page.Next
	}
	return r.JSONRevalidated(out) // polled by the console's OCR panel

}

// HandlePromoteArtifact serves PUT
// /documents/{documentId}/artifacts/promoteArtifact {"artifactId"}; a body
// without artifactId clears the promotion.
func (s *Handlers) HandlePromoteArtifact(r *api.Request) error {
	var in struct {
		ArtifactID *string `json:"artifactId"`
	}
	if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	ref := storage.ArtifactRef{DocumentID: r.PathDocID()}
	if in.ArtifactID != nil {
		ref.ArtifactID = *in.ArtifactID
	}
	if _, err := s.Apply(r, storage.OpPromoteArtifact, ref); err != nil {
		return err
	}
	if ref.ArtifactID == "" {
		return r.JSON(api.MessageBody{Message: fmt.Sprintf("Promoted artifact cleared on document '%s'", ref.DocumentID)})
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf("Artifact '%s' promoted on document '%s'", ref.ArtifactID, ref.DocumentID)})
}

// deleteArtifact serves DELETE /documents/{id} and .../purge with
// artifactId: the artifact goes at once (artifacts are not soft deleted);
// msg names the artifact.
func (s *Handlers) deleteArtifact(r *api.Request, msg string) error {
	if _, err := s.Apply(r, storage.OpDeleteArtifact, storage.ArtifactRef{DocumentID: r.PathDocID(), ArtifactID: r.ArtifactID}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf(msg, r.ArtifactID)})
}

// deleteDocument hard-deletes a document with its artifacts and children
// in one command. When that is more than one transaction can hold (many
// artifacts with many tags or attributes each, many versions of large
// content), the versions go first (pruneVersions), then the artifacts,
// one command each, and then the document: an interrupted delete leaves
// the document with fewer artifacts, never an artifact without its
// document, and deleting again finishes it.
func (s *Handlers) deleteDocument(r *api.Request, id string) error {
	err := s.ApplyRef(r, storage.OpDeleteDocument, id)
	if !storage.IsTooBig(err) {
		return err
	}
	if err := s.pruneVersions(r, id); err != nil { // versions.go
		return err
	}
	for {
		ids, err := s.DB.ArtifactIDs(r.Site, id, 100)
		if err != nil {
			return err
		}
		done := 0
		for _, a := range ids {
			if err := s.pruneVersions(r, a); err != nil {
				return err
			}
			_, err := s.Apply(r, storage.OpDeleteArtifact, storage.ArtifactRef{DocumentID: id, ArtifactID: a})
			switch {
			case err == nil:
				done++
			case !api.IsNotFound(err):
				return err
			}
		}
		if done == 0 {
			break // none left, or only index entries the delete below removes
		}
	}
	return s.ApplyRef(r, storage.OpDeleteDocument, id)
}
