package server

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"quire/auth"
	"quire/storage"
)

// Versions (SERVICE-SPEC.md §2.8, §4.3; storage/versions.go): GET
// /documents/{id}/versions lists a document's states newest first, the
// current one first; PUT .../versions {"versionKey"} sets the document back
// to one; DELETE .../versions/{versionKey} deletes an earlier one. With
// artifactId they act on the artifact (artifactRoutes). versionKey on the
// routes of versionKeyRoutes reads an earlier state's content; every other
// route refuses it (middleware.go, API.md).

// versionKeyRoutes are the routes that take the versionKey query
// parameter, by method and registered path.
var versionKeyRoutes = map[string]bool{
	"GET /documents/:documentId/content": true,
	"GET /documents/:documentId/url":     true,
}

const msgVersionKeyRoute = "'versionKey' is not supported on this route"

// checkVersionKey refuses a versionKey that no listing can have returned.
func checkVersionKey(k string) error {
	if k == "" {
		return invalid("versionKey", "'versionKey' is required")
	}
	if !storage.ValidVersionKey(k) {
		return invalid("versionKey", fmt.Sprintf("invalid versionKey '%s'", k))
	}
	return nil
}

// versionJSON is one entry of the version listing: FormKiQ's
// DocumentVersion fields and the versioned fields of the state.
func versionJSON(v *storage.Version, artifactOf string) map[string]any {
	m := map[string]any{
		"versionKey":       v.VersionKey,
		"documentId":       v.DocumentID,
		"path":             v.Path,
		"userId":           v.UserID,
		"insertedDate":     formatDate(v.InsertedDate),
		"lastModifiedDate": formatDate(v.LastModifiedDate),
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

// handleGetDocumentVersions serves GET /documents/{documentId}/versions.
func (s *Server) handleGetDocumentVersions(r *reqCtx) error {
	limit, err := listLimit(r)
	if err != nil {
		return err
	}
	page, err := s.db.ListVersions(r.site, r.docID(), r.Query("next"), limit)
	if err != nil {
		return err
	}
	artifactOf := ""
	if r.art != "" {
		artifactOf = r.pathDocID()
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

// handleSetDocumentVersion serves PUT /documents/{documentId}/versions
// {"versionKey"}.
func (s *Server) handleSetDocumentVersion(r *reqCtx) error {
	var in struct {
		VersionKey *string `json:"versionKey"`
	}
	if err := r.readBody(&in, s.deps.MaxBodyBytes); err != nil {
		return err
	}
	k := ""
	if in.VersionKey != nil {
		k = *in.VersionKey
	}
	if err := checkVersionKey(k); err != nil {
		return err
	}
	if _, err := s.apply(r, storage.OpSetVersion, storage.VersionRef{DocumentID: r.docID(), VersionKey: k}); err != nil {
		return err
	}
	return r.JSON(messageBody{fmt.Sprintf("Document '%s' set to version '%s'", r.docID(), k)})
}

// handleDeleteDocumentVersion serves DELETE
// /documents/{documentId}/versions/{versionKey}.
func (s *Server) handleDeleteDocumentVersion(r *reqCtx) error {
	k := unescapedParam(r.Ctx, "versionKey")
	if err := checkVersionKey(k); err != nil {
		return err
	}
	if _, err := s.apply(r, storage.OpDeleteVersion, storage.VersionRef{DocumentID: r.docID(), VersionKey: k}); err != nil {
		return err
	}
	return r.JSON(messageBody{fmt.Sprintf("Version '%s' of document '%s' deleted", k, r.docID())})
}

// requestedVersion is the version the versionKey query parameter names, nil
// without one. It is a version of r.docID(): the artifact the request names,
// else the document itself (never its promoted artifact).
func (s *Server) requestedVersion(r *reqCtx) (*storage.Version, error) {
	k := r.Query("versionKey")
	if k == "" {
		return nil, nil
	}
	if err := checkVersionKey(k); err != nil {
		return nil, err
	}
	return s.db.GetVersion(r.site, r.docID(), k)
}

// versionContent answers GET /content for version v: like the current
// content, inline text or a signed contentUrl.
func (s *Server) versionContent(r *reqCtx, v *storage.Version) error {
	bypass, err := watermarkBypass(r)
	if err != nil {
		return err
	}
	if v.DeepLinkPath != "" && !v.HasContent {
		return r.JSON(map[string]any{"contentUrl": v.DeepLinkPath, "contentType": v.ContentType})
	}
	if !v.HasContent {
		return &storage.NotFoundError{Msg: fmt.Sprintf("Document %s not found.", v.DocumentID)}
	}
	if err := s.checkStampable(r.site, v.DocumentID, v.ContentType, bypass); err != nil {
		return err
	}
	if isTextType(v.ContentType) && v.ContentLength < maxInlineResponse {
		rd, err := s.db.OpenManifest(v.ContentSHA256)
		if err != nil {
			return err
		}
		defer rd.Close()
		b, err := storage.ReadAllSmall(rd, maxInlineResponse)
		if err != nil {
			return err
		}
		return r.JSON(map[string]any{"content": string(b), "contentType": v.ContentType, "isBase64": false})
	}
	return r.JSON(map[string]any{"contentUrl": s.versionDownloadURL(s.linkBase(r.Ctx), r.site, v, false, bypass, 0), "contentType": v.ContentType})
}

// versionURL answers GET /url for version v.
func (s *Server) versionURL(r *reqCtx, v *storage.Version) error {
	if r.Query("format") != "" {
		return invalid("format", "'format' is not supported with 'versionKey'")
	}
	dur, err := urlDuration(r)
	if err != nil {
		return err
	}
	bypass, err := watermarkBypass(r)
	if err != nil {
		return err
	}
	resp := urlResponse{DocumentID: v.DocumentID}
	if r.art != "" {
		resp.DocumentID, resp.ArtifactID = r.pathDocID(), v.DocumentID
	}
	switch {
	case v.DeepLinkPath != "" && !v.HasContent:
		resp.URL = v.DeepLinkPath
	case !v.HasContent:
		return &storage.NotFoundError{Msg: fmt.Sprintf("Document %s not found.", v.DocumentID)}
	default:
		if err := s.checkStampable(r.site, v.DocumentID, v.ContentType, bypass); err != nil {
			return err
		}
		resp.URL = s.versionDownloadURL(s.linkBase(r.Ctx), r.site, v, r.QueryBool("inline"), bypass, dur)
	}
	return r.JSON(resp)
}

// versionDownloadURL is downloadURL for an earlier version: versionKey is
// in the query and signed as one more field, so neither a document's URL
// nor another version's can be turned into it.
func (s *Server) versionDownloadURL(base, site string, v *storage.Version, inline, bypass bool, d time.Duration) string {
	if d <= 0 {
		d = defaultURLDuration
	}
	exp := strconv.FormatInt(s.now().Add(d).Unix(), 10)
	in := strconv.FormatBool(inline)
	fields := []string{http.MethodGet, site, v.DocumentID, exp, in, v.VersionKey}
	q := url.Values{"expires": {exp}, "inline": {in}, "versionKey": {v.VersionKey}}
	if bypass {
		fields = append(fields, bypassField)
		q.Set("bypassWatermark", "true")
	}
	q.Set("signature", auth.SignURL(s.deps.Auth.URLKey(), fields...))
	return fmt.Sprintf("%s/downloads/%s/%s?%s", base, url.PathEscape(site), v.DocumentID, q.Encode())
}

// openVersionDownload opens the content of version k of doc for a signed
// download, as a document record carrying that version's name, type and
// content id.
func (s *Server) openVersionDownload(site, doc, k string) (*storage.ContentReader, *storage.Document, error) {
	v, err := s.db.GetVersion(site, doc, k)
	if err != nil {
		return nil, nil, err
	}
	d := &storage.Document{DocumentID: doc, Path: v.Path, ContentType: v.ContentType, ContentSHA256: v.ContentSHA256}
	if !v.HasContent {
		return nil, d, storage.ErrNotFound
	}
	rd, err := s.db.OpenManifest(v.ContentSHA256)
	return rd, d, err
}

// pruneVersions drops every version of doc (a document or an artifact, in
// the trash or not), oldest first, in commands each small enough for one
// transaction: the batch halves while a command is too big. It serves a
// purge too large for one transaction (deleteDocument); an interrupted
// prune leaves the document with fewer versions, and purging again
// finishes it.
func (s *Server) pruneVersions(r *reqCtx, doc string) error {
	n := 100
	for range 2*storage.MaxVersions + 10 {
		d, err := s.db.GetDocumentAny(r.site, doc)
		if isNotFound(err) || (err == nil && d.VersionCount == 0) {
			return nil
		}
		if err != nil {
			return err
		}
		_, err = s.apply(r, storage.OpPruneVersions, storage.PruneVersions{DocumentID: doc, Max: n})
		switch {
		case storage.IsTooBig(err) && n > 1:
			n /= 2
		case isNotFound(err):
			return nil
		case err != nil:
			return err
		}
	}
	return nil
}
