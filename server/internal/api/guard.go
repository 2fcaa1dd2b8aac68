package api

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"quire/access"
	"quire/auth"
	"quire/storage"
)

// Artifacts (SERVICE-SPEC.md §1; storage/artifacts.go): POST /documents
// with "artifacts": true adds one to an existing document, artifactId on
// the routes whose row takes it (server/routes.go) acts on one, GET
// /documents/{id}/artifacts lists them and PUT
// .../artifacts/promoteArtifact makes one the content the document serves.

// msgArtifactRoute refuses artifactId on a route that does not take it:
// ignored, it would act on the document itself.
const msgArtifactRoute = "'artifactId' is not supported on this route"

// resolveDocument runs before every handler. On a route with {documentId}
// it reads that document once: an artifact's own id is not a document id
// (404), the document's folder must grant what the route needs (folder
// permissions; documents in the trash are checked too, a soft delete does
// not lift them), and artifactId, where the route takes it, must name an
// artifact of the live document (404 otherwise), which the handler then
// acts on (r.docID()).
func (s *Env) resolveDocument(r *Request, perm auth.Permission) error {
	art := r.Query("artifactId")
	if art != "" && !s.Flags(r.Ctx).ArtifactID {
		return Invalid("artifactId", msgArtifactRoute)
	}
	id := r.Params("documentId")
	if id == "" {
		return nil
	}
	d, err := s.DB.GetDocumentAny(r.Site, id)
	switch {
	case err != nil && art == "":
		return nil // the handler answers
	case IsNotFound(err):
		return &storage.NotFoundError{Msg: fmt.Sprintf("Document %s not found.", id)}
	case err != nil:
		return err // never act on the document instead of its artifact
	}
	if d.ArtifactOf != "" {
		return &storage.NotFoundError{Msg: fmt.Sprintf("Document %s not found.", id)}
	}
	if !FolderExempt(r) {
		if err := s.RequireDocPath(r, d.Path, routeFolderPermission(perm, r.Method())); err != nil {
			return err
		}
	}
	if art == "" {
		return nil
	}
	a, err := s.DB.GetArtifact(r.Site, d.DocumentID, art)
	if err != nil {
		return err
	}
	r.ArtifactID = a.DocumentID
	return nil
}

// Folder permissions (FormKiQ's /folders/{indexKey}/permissions and
// /folders/permissions): a folder's record grants roles (groups of the
// caller) READ, WRITE and DELETE on it and everything below it, unless a
// subfolder has a record of its own (the nearest one wins, FormKiQ #518,
// #404). Folders without any record on their way up are governed by the
// site permissions alone. Admins and the site's governors are not limited
// by folder permissions (they set them).

// FolderExempt reports whether folder permissions do not limit the caller:
// admins and the site's governors (they set them).
// A request through a share (shareKey) is never exempt: the share bounds it.
func FolderExempt(r *Request) bool {
	return access.Exempt(r.Principal.Admin, r.Principal.Can(r.Site, auth.PermGovern), r.share)
}

// Rights are the caller's rights in the request's site, loaded on the
// first check and kept for the request (the one permission rule, package
// access, decides over them): the site's folder permissions and the
// site's shares naming the caller (these only when folder permissions
// exist: without any, nothing is left for a share to add). Every folder
// check of the request side goes through here.
func (s *Env) Rights(r *Request) *access.Rights {
	if r.rights != nil && r.rightsSite == r.Site {
		return r.rights
	}
	rt := &access.Rights{Exempt: FolderExempt(r), Groups: r.Principal.Groups, Through: r.share}
	if !rt.Exempt {
		set, err := s.DB.FolderPermissions(r.Site)
		if err != nil {
			s.Log.Error("folder permissions", "site", r.Site, "err", err)
			set, rt.Failed = nil, true // fail closed
		}
		rt.Folders = set
		if len(set) > 0 && rt.Through == nil {
			rt.Shares = s.sharesNaming(r)
		}
	}
	r.rights, r.rightsSite = rt, r.Site
	return rt
}

// FolderAllows reports whether the caller may use perm in the folder dir
// (Rights: through a share, only inside its folder with its permissions;
// otherwise by the folder permissions, or a share of the site naming the
// caller).
func (s *Env) FolderAllows(r *Request, dir, perm string) bool {
	return s.Rights(r).Allows(dir, perm)
}

// FolderRestricted reports whether folder permissions may hide documents
// of the site from the caller.
func (s *Env) FolderRestricted(r *Request) bool {
	return s.Rights(r).Restricted()
}

// FolderSet returns the site's folder permissions, read once per request
// (Rights).
func (s *Env) FolderSet(r *Request) (storage.FolderPermissionSet, error) {
	rt := s.Rights(r)
	if rt.Failed {
		return nil, errors.New("folder permissions unavailable")
	}
	return rt.Folders, nil
}

// ActorOf is the caller's rights as an action records them.
func (s *Env) ActorOf(r *Request) *storage.ActionActor {
	perms := r.Principal.Permissions(r.Site)
	a := &storage.ActionActor{Groups: slices.Clone(r.Principal.Groups), Permissions: make([]string, len(perms))}
	for i, pm := range perms {
		a.Permissions[i] = string(pm)
	}
	return a
}

// StampActionRights records the caller's rights on the actions that act
// with them (MOVE, DELETE): storage checks them when it adds the actions,
// in the same transaction, and the pipeline again when they run.
func (s *Env) StampActionRights(r *Request, acts []storage.Action) {
	for i := range acts {
		if storage.ActsAsAdder(acts[i].Type) {
			acts[i].Actor = s.ActorOf(r)
		}
	}
}

// DocAllows reports whether the caller may use perm on a document at path.
func (s *Env) DocAllows(r *Request, path, perm string) bool {
	dir, _ := SplitDocPath(path)
	return s.FolderAllows(r, dir, perm)
}

// FolderDenied is the error for an operation a folder's permissions do
// not grant.
func FolderDenied(dir, perm string) error {
	return &auth.Error{Status: http.StatusUnauthorized, Msg: storage.FolderDenied(dir, perm).Msg}
}

// RequireDocPath checks perm for a document path a request writes.
func (s *Env) RequireDocPath(r *Request, path, perm string) error {
	dir, _ := SplitDocPath(path)
	if !s.FolderAllows(r, dir, perm) {
		return FolderDenied(dir, perm)
	}
	return nil
}

// RequireWritePaths checks WRITE on the folders new documents go to, and
// records the rights their MOVE and DELETE actions need.
func (s *Env) RequireWritePaths(r *Request, docs []storage.NewDocument) error {
	for _, d := range docs {
		if err := s.RequireDocPath(r, d.Document.Path, storage.FolderWrite); err != nil {
			return err
		}
		s.StampActionRights(r, d.Actions)
	}
	return nil
}

// WritableIDs keeps the documents among ids whose folder lets the caller
// write: a bulk change by match (PATCH /documents/tags) skips the others
// rather than reaching into folders the caller could not change one by one.
func (s *Env) WritableIDs(r *Request, ids []string) ([]string, error) {
	if FolderExempt(r) {
		return ids, nil
	}
	docs, err := s.DB.GetDocuments(r.Site, ids)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(docs))
	for _, d := range docs {
		if s.DocAllows(r, d.Path, storage.FolderWrite) {
			out = append(out, d.DocumentID)
		}
	}
	return out, nil
}

// routeFolderPermission is the folder permission a route on a document
// needs: the one matching the site permission the route table gives it
// (GET /documents/{id}/upload replaces content, so it needs WRITE though it
// is a GET), else the one its method implies.
func routeFolderPermission(perm auth.Permission, method string) string {
	switch perm {
	case auth.PermRead:
		return storage.FolderRead
	case auth.PermWrite:
		return storage.FolderWrite
	case auth.PermDelete:
		return storage.FolderDelete
	}
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return storage.FolderRead
	case http.MethodDelete:
		return storage.FolderDelete
	}
	return storage.FolderWrite
}

// RequireDocOf checks perm on the folder of the document id a request
// body names (an artifact: its document's folder). An unknown id passes:
// the handler answers it as it would for anyone.
func (s *Env) RequireDocOf(r *Request, id, perm string) error {
	if FolderExempt(r) || id == "" {
		return nil
	}
	d, err := s.DB.GetDocumentAny(r.Site, id)
	if err != nil {
		return nil
	}
	if d.ArtifactOf != "" {
		if d, err = s.DB.GetDocumentAny(r.Site, d.ArtifactOf); err != nil {
			return nil
		}
	}
	return s.RequireDocPath(r, d.Path, perm)
}

// Folder shares (FormKiQ's GET /shares, POST /shares/folders/{indexKey},
// DELETE /shares/{shareKey}; API.md "Folder shares"). A share gives a
// group (or one user) READ, WRITE and DELETE inside a folder of a site:
//
//   - with shareKey on a route whose row takes it (server/routes.go),
//     the request acts through the share: on its site (a recipient needs
//     no role there), with the share's permissions, inside its folder
//     only;
//   - without shareKey, a caller of the site whose groups a share names
//     gets its permissions in the folder where folder permissions would
//     refuse them (within what the caller's site role allows).

// sharePerm is the share permission a route's site permission needs.
var sharePerm = map[auth.Permission]string{auth.PermRead: storage.FolderRead, auth.PermWrite: storage.FolderWrite, auth.PermDelete: storage.FolderDelete}

// errShareDenied refuses a shareKey the caller may not use.
func errShareDenied(key string) error {
	return ErrStatus(http.StatusUnauthorized, fmt.Sprintf("fkq access denied (share '%s')", key))
}

// useShare makes a request with shareKey act through the share: the
// route must take shareKey, the caller must be the share's group member
// (or user), a siteId given must be the share's, and the route's
// permission must be one the share gives. It replaces the site role
// check of wrap.
func (s *Env) useShare(r *Request, key string, perm auth.Permission) error {
	if !s.Flags(r.Ctx).ShareKey {
		return Invalid("shareKey", "'shareKey' is not supported on this route")
	}
	sh, err := s.DB.GetShare(key)
	if IsNotFound(err) {
		return errShareDenied(key)
	}
	if err != nil {
		return err
	}
	// A credential bound to a site (an API key, a delegation) never
	// acts on another site's share, whatever its groups or username.
	if b := r.Principal.BoundSite(); !sh.SharedWith(r.Principal.Username, r.Principal.Groups) || b != "" && b != sh.SiteID {
		return errShareDenied(key)
	}
	if site := r.Query("siteId"); site != "" && site != sh.SiteID {
		return Invalid("siteId", "'siteId' is not the share's site")
	}
	need, ok := sharePerm[perm]
	if !ok || !sh.Grants(sh.Path, need) {
		return ErrStatus(http.StatusUnauthorized, fmt.Sprintf("fkq access denied (share '%s' does not give %s)", key, strings.ToUpper(string(perm))))
	}
	r.Site, r.share = sh.SiteID, sh
	return nil
}

// sharesNaming returns the site's shares naming the caller (without
// shareKey: shares add to folder permissions); none for a credential
// bound to another site, and none when they cannot be read (fail closed).
func (s *Env) sharesNaming(r *Request) []storage.Share {
	if b := r.Principal.BoundSite(); b != "" && b != r.Site {
		return nil
	}
	all, err := s.DB.SiteShares(r.Site)
	if err != nil {
		return nil
	}
	var out []storage.Share
	for i := range all {
		if all[i].SharedWith(r.Principal.Username, r.Principal.Groups) {
			out = append(out, all[i])
		}
	}
	return out
}

// ShareListed reports whether GET /shares lists sh to the caller: a
// share of the caller's bound site (if any) made to them, or any share
// for an admin.
func ShareListed(r *Request, sh *storage.Share) bool {
	if b := r.Principal.BoundSite(); b != "" && sh.SiteID != b {
		return false
	}
	return r.Principal.Admin || sh.SharedWith(r.Principal.Username, r.Principal.Groups)
}

// Versions (SERVICE-SPEC.md §2.8, §4.3; storage/versions.go): GET
// /documents/{id}/versions lists a document's states newest first, the
// current one first; PUT .../versions {"versionKey"} sets the document back
// to one; DELETE .../versions/{versionKey} deletes an earlier one. With
// artifactId they act on the artifact (their rows take artifactId). versionKey on the
// routes whose rows take it reads an earlier state's content; every other
// route refuses it (middleware.go, API.md).

const msgVersionKeyRoute = "'versionKey' is not supported on this route"
