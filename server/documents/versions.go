package documents

import (
	"fmt"

	"quire/server/content"
	"quire/server/internal/api"
	"quire/storage"
)

// versionJSON is one entry of the version listing: FormKiQ's
// DocumentVersion fields and the versioned fields of the state.
func versionJSON(v *storage.Version, artifactOf string) map[string]any {
	m := map[string]any{
		"versionKey":       v.VersionKey,
		"documentId":       v.DocumentID,
		"path":             v.Path,
		"userId":           v.UserID,
		"insertedDate":     api.FormatDate(v.InsertedDate),
		"lastModifiedDate": api.FormatDate(v.LastModifiedDate),
	}
	if artifactOf != "" {
		m["documentId"], m["artifactId"] = artifactOf, v.DocumentID
	}
	opt := func(k, s string) {
		if s != "" {
			m[k] = s
		}
	}
	opt("deepLinkPath", v.DeepLinkPath)
	opt("contentType", v.ContentType)
	opt("checksum", v.Checksum)
	opt("checksumType", v.ChecksumType)
	opt("width", v.Width)
	opt("height", v.Height)
	opt("artifactCategory", v.ArtifactCategory)
	if v.HasContent {
		m["contentLength"] = v.ContentLength
	}
	if len(v.Metadata) > 0 {
		m["metadata"] = v.Metadata
	}
	return m
}

// HandleGetDocumentVersions serves GET /documents/{documentId}/versions.
func (s *Handlers) HandleGetDocumentVersions(r *api.Request) error {
	limit, err := api.ListLimit(r)
	if err != nil {
		return err
	}
	page, err := s.DB.ListVersions(r.Site, r.DocID(), r.Query("next"), limit)
	if err != nil {
		return err
	}
	artifactOf := ""
	if r.ArtifactID != "" {
		artifactOf = r.PathDocID()
	}
	docs := make([]map[string]any, 0, len(page.Versions))
	for i := range page.Versions {
		docs = append(docs, versionJSON(&page.Versions[i], artifactOf))
	}
	out := map[string]any{"documents": docs}
	if page.Next != "" {
		out["next"] = page.Next
	}
	return r.JSON(out)
}

// HandleSetDocumentVersion serves PUT /documents/{documentId}/versions
// {"versionKey"}.
func (s *Handlers) HandleSetDocumentVersion(r *api.Request) error {
	var in struct {
		VersionKey *string `json:"versionKey"`
	}
	if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	k := ""
	if in.VersionKey != nil {
		k = *in.VersionKey
	}
	if err := content.CheckVersionKey(k); err != nil {
		return err
	}
	if _, err := s.Apply(r, storage.OpSetVersion, storage.VersionRef{DocumentID: r.DocID(), VersionKey: k, DefaultActions: true}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf("Document '%s' set to version '%s'", r.DocID(), k)})
}

// HandleDeleteDocumentVersion serves DELETE
// /documents/{documentId}/versions/{versionKey}.
func (s *Handlers) HandleDeleteDocumentVersion(r *api.Request) error {
	k := api.UnescapedParam(r.Ctx, "versionKey")
	if err := content.CheckVersionKey(k); err != nil {
		return err
	}
	if _, err := s.Apply(r, storage.OpDeleteVersion, storage.VersionRef{DocumentID: r.DocID(), VersionKey: k}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf("Version '%s' of document '%s' deleted", k, r.DocID())})
}

// pruneVersions drops every version of doc (a document or an artifact, in
// the trash or not), oldest first, in commands each small enough for one
// transaction: the batch halves while a command is too big. It serves a
// purge too large for one transaction (deleteDocument); an interrupted
// prune leaves the document with fewer versions, and purging again
// finishes it.
func (s *Handlers) pruneVersions(r *api.Request, doc string) error {
	n := 100
	for range 2*storage.MaxVersions + 10 {
		d, err := s.DB.GetDocumentAny(r.Site, doc)
		if api.IsNotFound(err) || (err == nil && d.VersionCount == 0) {
			return nil
		}
		if err != nil {
			return err
		}
		_, err = s.Apply(r, storage.OpPruneVersions, storage.PruneVersions{DocumentID: doc, Max: n})
		switch {
		case storage.IsTooBig(err) && n > 1:
			n /= 2
		case api.IsNotFound(err):
			return nil
		case err != nil:
			return err
		}
	}
	return nil
}
