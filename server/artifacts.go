package server

import (
	"fmt"
	"net/http"

	"quire/storage"
)

// addArtifact serves POST /documents with "artifacts": true: a new
// artifact of the document documentId. Without content or deepLinkPath
// the response carries an uploadUrl for the artifact's content.
func (s *Server) addArtifact(r *reqCtx, in *documentIn) error {
	if in.DocumentID == nil {
		return invalid("documentId", "'documentId' is required when 'artifacts' is true")
	}
	parent := *in.DocumentID
	if !isUUIDv4(parent) {
		return invalid("documentId", fmt.Sprintf("invalid documentId '%s'", parent))
	}
	// An artifact is written into its document: WRITE in the document's
	// folder (issue 29).
	if err := s.requireDocOf(r, parent, storage.FolderWrite); err != nil {
		return err
	}
	var errs []storage.ValidationItem
	if len(in.Documents) > 0 {
		errs = append(errs, storage.ValidationItem{Key: "documents", Msg: "an artifact cannot have child documents"})
	}
	if len(in.Actions) > 0 {
		errs = append(errs, storage.ValidationItem{Key: "actions", Msg: "actions cannot be added to an artifact"})
	}
	artID := r.newID()
	p, perrs := s.prepareDocument(r, in, artID, "")
	errs = append(errs, perrs...)
	if err := checkErrors(errs); err != nil {
		return err
	}
	if err := checkErrors(storage.CheckNewDocuments([]storage.NewDocument{p.nd})); err != nil {
		return err
	}
	if err := s.checkInlineSize(r, p); err != nil {
		return err
	}
	if err := s.attachInline(r, p); err != nil {
		return err
	}
	if _, err := s.apply(r, storage.OpAddArtifact, storage.AddArtifact{DocumentID: parent, Artifact: p.nd}); err != nil {
		return err
	}
	resp := map[string]any{"documentId": parent, "artifactId": artID, "siteId": r.site}
	if !p.hasBody && p.nd.Document.DeepLinkPath == "" {
		resp["uploadUrl"], resp["headers"] = s.uploadURL(r.site, artID, uploadOpts{base: s.linkBase(r.Ctx)})
	}
	return r.Status(http.StatusCreated).JSON(resp)
}

// handleGetDocumentArtifacts serves GET /documents/{documentId}/artifacts:
// FormKiQ's documents-list shape, oldest first, paged with next.
// artifactCategory filters (Quire's addition, API.md).
func (s *Server) handleGetDocumentArtifacts(r *reqCtx) error {
	limit, err := listLimit(r)
	if err != nil {
		return err
	}
	page, err := s.db.ListArtifacts(r.site, r.pathDocID(), r.Query("artifactCategory"), r.Query("next"), limit)
	if err != nil {
		return err
	}
	docs := make([]map[string]any, 0, len(page.Artifacts))
	for _, a := range page.Artifacts {
		docs = append(docs, documentJSON(a))
	}
	out := map[string]any{"documents": docs}
	if page.Next != "" {
		out["next"] = page.Next
	}
	return r.JSON(out)
}

// handlePromoteArtifact serves PUT
// /documents/{documentId}/artifacts/promoteArtifact {"artifactId"}; a body
// without artifactId clears the promotion.
func (s *Server) handlePromoteArtifact(r *reqCtx) error {
	var in struct {
		ArtifactID *string `json:"artifactId"`
	}
	if err := r.readBody(&in, s.deps.MaxBodyBytes); err != nil {
		return err
	}
	ref := storage.ArtifactRef{DocumentID: r.pathDocID()}
	if in.ArtifactID != nil {
		ref.ArtifactID = *in.ArtifactID
	}
	if _, err := s.apply(r, storage.OpPromoteArtifact, ref); err != nil {
		return err
	}
	if ref.ArtifactID == "" {
		return r.JSON(messageBody{fmt.Sprintf("Promoted artifact cleared on document '%s'", ref.DocumentID)})
	}
	return r.JSON(messageBody{fmt.Sprintf("Artifact '%s' promoted on document '%s'", ref.ArtifactID, ref.DocumentID)})
}

// deleteArtifact serves DELETE /documents/{id} and .../purge with
// artifactId: the artifact goes at once (artifacts are not soft deleted);
// msg names the artifact.
func (s *Server) deleteArtifact(r *reqCtx, msg string) error {
	if _, err := s.apply(r, storage.OpDeleteArtifact, storage.ArtifactRef{DocumentID: r.pathDocID(), ArtifactID: r.art}); err != nil {
		return err
	}
	return r.JSON(messageBody{fmt.Sprintf(msg, r.art)})
}

// deleteDocument hard-deletes a document with its artifacts and children
// in one command. When that is more than one transaction can hold (many
// artifacts with many tags or attributes each, many versions of large
// content), the versions go first (pruneVersions), then the artifacts,
// one command each, and then the document: an interrupted delete leaves
// the document with fewer artifacts, never an artifact without its
// document, and deleting again finishes it.
func (s *Server) deleteDocument(r *reqCtx, id string) error {
	err := s.applyRef(r, storage.OpDeleteDocument, id)
	if !storage.IsTooBig(err) {
		return err
	}
	if err := s.pruneVersions(r, id); err != nil { // versions.go
		return err
	}
	for {
		ids, err := s.db.ArtifactIDs(r.site, id, 100)
		if err != nil {
			return err
		}
		done := 0
		for _, a := range ids {
			if err := s.pruneVersions(r, a); err != nil {
				return err
			}
			_, err := s.apply(r, storage.OpDeleteArtifact, storage.ArtifactRef{DocumentID: id, ArtifactID: a})
			switch {
			case err == nil:
				done++
			case !isNotFound(err):
				return err
			}
		}
		if done == 0 {
			break // none left, or only index entries the delete below removes
		}
	}
	return s.applyRef(r, storage.OpDeleteDocument, id)
}
