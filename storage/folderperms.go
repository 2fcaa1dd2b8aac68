package storage

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"quire/access"
)

// Folder permission types (the permission rule's, package access).
const (
	FolderRead   = access.Read
	FolderWrite  = access.Write
	FolderDelete = access.Delete
)

// FolderRole grants a role (a group of the caller's token) permissions on
// a folder and everything below it, unless a folder further down has its
// own permissions (access.Role).
type FolderRole = access.Role

// FolderPermissions is the record of a folder's role permissions.
type FolderPermissions struct {
	Path         string       `json:"path"`
	Roles        []FolderRole `json:"roles"`
	InsertedDate time.Time    `json:"insertedDate"`
	UserID       string       `json:"userId,omitempty"`
}

// SetFolderPermissions is the payload of OpSetFolderPermissions; no roles
// removes the folder's permissions (it inherits again).
type SetFolderPermissions struct {
	Path  string       `json:"path"`
	Roles []FolderRole `json:"roles"`
}

func folderPermKey(site, p string) []byte { return []byte(pfxFolderPerm + sk(site) + "/" + p) }

func applySetFolderPermissions(t *tx, c *Command) (any, error) {
	p, err := decode[SetFolderPermissions](c)
	if err != nil {
		return nil, err
	}
	parent, name := splitPath(p.Path)
	ok, err := t.exists(folderKey(c.Site, parent, true, name))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &NotFoundError{Msg: fmt.Sprintf("folder '%s' not found", p.Path)}
	}
	if len(p.Roles) == 0 {
		return nil, t.del(folderPermKey(c.Site, p.Path))
	}
	if err := checkFolderRoles(c, p.Roles); err != nil {
		return nil, err
	}
	return nil, t.setJSON(folderPermKey(c.Site, p.Path), FolderPermissions{Path: p.Path, Roles: p.Roles, InsertedDate: c.At, UserID: c.User})
}

// moveFolderPermissions carries the permissions of source and its
// subfolders to dest. With keep, source keeps its own as well: while a
// move is under way, the documents not yet moved stay governed by the
// source's permissions and those already moved by the copies, so no
// document is ever governed by anything else (say, the target's wider
// permissions).
func moveFolderPermissions(t *tx, site, source, dest string, keep bool) error {
	base := len(pfxFolderPerm) + len(sk(site)) + 1
	var moved []FolderPermissions
	var keys [][]byte
	err := t.each(folderPermKey(site, source), func(k, v []byte) error {
		p := string(k[base:])
		if p != source && !strings.HasPrefix(p, source+"/") {
			return nil
		}
		var fp FolderPermissions
		if err := json.Unmarshal(v, &fp); err != nil {
			return err
		}
		fp.Path = dest + strings.TrimPrefix(p, source)
		moved = append(moved, fp)
		keys = append(keys, append([]byte(nil), k...))
		return nil
	})
	if err != nil {
		return err
	}
	for i, k := range keys {
		if keep {
			if err := t.setJSON(folderPermKey(site, moved[i].Path), moved[i]); err != nil {
				return err
			}
			continue
		}
		if err := t.del(k); err != nil {
			return err
		}
		if err := t.setJSON(folderPermKey(site, moved[i].Path), moved[i]); err != nil {
			return err
		}
	}
	return nil
}

// FolderPermissionSet holds a site's folder permissions for access checks
// (access.Folders: Allows is the permission rule's).
type FolderPermissionSet = access.Folders

// FolderPermissions returns every folder permission record of site.
func (d *DB) FolderPermissions(site string) (FolderPermissionSet, error) {
	var out FolderPermissionSet
	err := d.view(func(t *tx) error {
		var err error
		out, err = loadFolderPermissions(t, site)
		return err
	})
	return out, err
}

func loadFolderPermissions(t *tx, site string) (FolderPermissionSet, error) {
	out := FolderPermissionSet{}
	err := t.each([]byte(pfxFolderPerm+sk(site)+"/"), func(_, v []byte) error {
		var fp FolderPermissions
		if err := json.Unmarshal(v, &fp); err != nil {
			return err
		}
		out[fp.Path] = fp.Roles
		return nil
	})
	return out, err
}

// checkFolderRoles bounds a folder's roles (RulesDefinitionFields): at
// most MaxFolderRoles, each roleName within MaxKeyBytes. Their permissions
// are READ, WRITE and DELETE each at most once (the handler's check).
func checkFolderRoles(c *Command, roles []FolderRole) error {
	f := newDefFields(c)
	if f.count("roles", len(roles), MaxFolderRoles) {
		for _, r := range roles {
			f.name("roleName", r.RoleName)
		}
	}
	return f.err()
}
