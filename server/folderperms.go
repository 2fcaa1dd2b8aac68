package server

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"quire/auth"
	"quire/storage"
)

// Folder permissions (FormKiQ's /folders/{indexKey}/permissions and
// /folders/permissions): a folder's record grants roles (groups of the
// caller) READ, WRITE and DELETE on it and everything below it, unless a
// subfolder has a record of its own (the nearest one wins, FormKiQ #518,
// #404). Folders without any record on their way up are governed by the
// site permissions alone. Admins and the site's governors are not limited
// by folder permissions (they set them).

// folderExempt reports whether folder permissions do not limit the caller:
// admins and the site's governors (they set them).
// A request through a share (shareKey) is never exempt: the share bounds it.
func folderExempt(r *reqCtx) bool {
	return r.share == nil && (r.p.Admin || r.p.Can(r.site, auth.PermGovern))
}

// folderAllows reports whether the caller may use perm in the folder dir:
// through a share (shareKey), only inside its folder with its
// permissions; otherwise by the folder permissions, or a share of the
// site naming the caller (shares.go).
func (s *Server) folderAllows(r *reqCtx, dir, perm string) bool {
	if r.share != nil {
		return r.share.Grants(dir, perm)
	}
	if folderExempt(r) {
		return true
	}
	set, err := s.folderSet(r)
	if err != nil {
		return false // fail closed
	}
	return set.Allows(dir, r.p.Groups, perm) || s.shareAllows(r, dir, perm)
}

// folderRestricted reports whether folder permissions may hide documents
// of the site from the caller.
func (s *Server) folderRestricted(r *reqCtx) bool {
	if r.share != nil {
		return true
	}
	if folderExempt(r) {
		return false
	}
	set, err := s.folderSet(r)
	return err != nil || len(set) > 0
}

// folderSet returns the site's folder permissions, read once per request.
func (s *Server) folderSet(r *reqCtx) (storage.FolderPermissionSet, error) {
	if !r.fpLoaded {
		set, err := s.db.FolderPermissions(r.site)
		if err != nil {
			s.log.Error("folder permissions", "site", r.site, "err", err)
			set = nil
			r.fpErr = true
		}
		r.fperms, r.fpLoaded = set, true
	}
	if r.fpErr {
		return nil, errors.New("folder permissions unavailable")
	}
	return r.fperms, nil
}

// actorOf is the caller's rights as an action records them.
func (s *Server) actorOf(r *reqCtx) *storage.ActionActor {
	perms := r.p.Permissions(r.site)
	a := &storage.ActionActor{Groups: slices.Clone(r.p.Groups), Permissions: make([]string, len(perms))}
	for i, pm := range perms {
		a.Permissions[i] = string(pm)
	}
	return a
}

// stampActionRights records the caller's rights on the actions that act
// with them (MOVE, DELETE): storage checks them when it adds the actions,
// in the same transaction, and the pipeline again when they run.
func (s *Server) stampActionRights(r *reqCtx, acts []storage.Action) {
	for i := range acts {
		if storage.ActsAsAdder(acts[i].Type) {
			acts[i].Actor = s.actorOf(r)
		}
	}
}

// docAllows reports whether the caller may use perm on a document at path.
func (s *Server) docAllows(r *reqCtx, path, perm string) bool {
	dir, _ := splitDocPath(path)
	return s.folderAllows(r, dir, perm)
}

// folderDenied is the error for an operation a folder's permissions do
// not grant.
func folderDenied(dir, perm string) error {
	return &auth.Error{Status: http.StatusUnauthorized, Msg: storage.FolderDenied(dir, perm).Msg}
}

// requireDocPath checks perm for a document path a request writes.
func (s *Server) requireDocPath(r *reqCtx, path, perm string) error {
	if !s.docAllows(r, path, perm) {
		dir, _ := splitDocPath(path)
		return folderDenied(dir, perm)
	}
	return nil
}

// requireWritePaths checks WRITE on the folders new documents go to, and
// records the rights their MOVE and DELETE actions need.
func (s *Server) requireWritePaths(r *reqCtx, docs []storage.NewDocument) error {
	for _, d := range docs {
		if err := s.requireDocPath(r, d.Document.Path, storage.FolderWrite); err != nil {
			return err
		}
		s.stampActionRights(r, d.Actions)
	}
	return nil
}

// writableIDs keeps the documents among ids whose folder lets the caller
// write: a bulk change by match (PATCH /documents/tags) skips the others
// rather than reaching into folders the caller could not change one by one.
func (s *Server) writableIDs(r *reqCtx, ids []string) ([]string, error) {
	if folderExempt(r) {
		return ids, nil
	}
	docs, err := s.db.GetDocuments(r.site, ids)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(docs))
	for _, d := range docs {
		if s.docAllows(r, d.Path, storage.FolderWrite) {
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

var folderPermNames = map[string]bool{storage.FolderRead: true, storage.FolderWrite: true, storage.FolderDelete: true}

// handleGetFolderPermissions serves GET /folders/{indexKey}/permissions:
// the roles set on that folder itself.
func (s *Server) handleGetFolderPermissions(r *reqCtx) error {
	p, err := s.folderOfIndexKey(r, pathParam(r, "indexKey"))
	if err != nil {
		return err
	}
	set, err := s.db.FolderPermissions(r.site)
	if err != nil {
		return err
	}
	roles := set[p]
	if roles == nil {
		roles = []storage.FolderRole{}
	}
	return r.JSON(map[string]any{"roles": roles})
}

// handleSetFolderPermissions serves PUT /folders/permissions (ADMIN or
// GOVERN): the roles of a folder; an empty list removes them.
func (s *Server) handleSetFolderPermissions(r *reqCtx) error {
	var b struct {
		Path  *string `json:"path"`
		Roles []struct {
			RoleName    *string  `json:"roleName"`
			Permissions []string `json:"permissions"`
		} `json:"roles"`
	}
	if err := r.readBody(&b, s.deps.MaxBodyBytes); err != nil {
		return err
	}
	p, err := checkFolderPath(deref(b.Path))
	if err != nil {
		return err
	}
	var roles []storage.FolderRole
	var errs []storage.ValidationItem
	for _, role := range b.Roles {
		name := strings.TrimSpace(deref(role.RoleName))
		if name == "" {
			errs = append(errs, storage.ValidationItem{Key: "roleName", Msg: "'roleName' is required"})
			continue
		}
		seen := map[string]bool{}
		var perms []string
		for _, pm := range role.Permissions {
			if !folderPermNames[pm] {
				errs = append(errs, storage.ValidationItem{Key: "permissions", Msg: "invalid permission '" + pm + "'"})
				continue
			}
			if !seen[pm] {
				seen[pm] = true
				perms = append(perms, pm)
			}
		}
		roles = append(roles, storage.FolderRole{RoleName: name, Permissions: nonNilStrings(perms)})
	}
	if err := checkErrors(errs); err != nil {
		return err
	}
	if _, err := s.apply(r, storage.OpSetFolderPermissions, storage.SetFolderPermissions{Path: p, Roles: roles}); err != nil {
		return err
	}
	return r.JSON(messageBody{"Folder permissions set"})
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
