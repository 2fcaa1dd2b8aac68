package search

import (
	"strings"

	"quire/server/internal/api"
	"quire/storage"
)

var folderPermNames = map[string]bool{storage.FolderRead: true, storage.FolderWrite: true, storage.FolderDelete: true}

// HandleGetFolderPermissions serves GET /folders/{indexKey}/permissions:
// the roles set on that folder itself.
func (s *Handlers) HandleGetFolderPermissions(r *api.Request) error {
	p, err := s.folderOfIndexKey(r, api.PathParam(r, "indexKey"))
	if err != nil {
		return err
	}
	set, err := s.DB.FolderPermissions(r.Site)
	if err != nil {
		return err
	}
	roles := set[p]
	if roles == nil {
		roles = []storage.FolderRole{}
	}
	return r.JSON(map[string]any{"roles": roles})
}

// HandleSetFolderPermissions serves PUT /folders/permissions (ADMIN or
// GOVERN): the roles of a folder; an empty list removes them.
func (s *Handlers) HandleSetFolderPermissions(r *api.Request) error {
	var b struct {
		Path  *string `json:"path"`
		Roles []struct {
			RoleName    *string  `json:"roleName"`
			Permissions []string `json:"permissions"`
		} `json:"roles"`
	}
	if err := r.ReadBody(&b, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	p, err := CheckFolderPath(api.Deref(b.Path))
	if err != nil {
		return err
	}
	var roles []storage.FolderRole
	var errs []storage.ValidationItem
	for _, role := range b.Roles {
		name := strings.TrimSpace(api.Deref(role.RoleName))
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
		roles = append(roles, storage.FolderRole{RoleName: name, Permissions: api.NonNilStrings(perms)})
	}
	if err := api.CheckErrors(errs); err != nil {
		return err
	}
	if _, err := s.Apply(r, storage.OpSetFolderPermissions, storage.SetFolderPermissions{Path: p, Roles: roles}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "Folder permissions set"})
}
