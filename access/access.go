// Package access is Quire's one permission rule: who may use READ, WRITE
// or DELETE in a folder of a site. It holds folder permissions (roles a
// folder grants), folder shares (a folder given to a group or a user),
// action rights (the rights of whoever added a MOVE or DELETE action, or
// a write that runs long after its request) and the denial error, and the
// one function that decides over them (Rights.Allows).
//
// Two callers evaluate it, and nothing else does (the server's layering
// test, TestLayering_OneAccessRule, holds that):
//
//   - the request-side guard (server/internal/api/guard.go): the request
//     context loads the caller's Rights once per request (the site's folder
//     permissions and the shares naming the caller) and every check a
//     handler makes is an in-memory call on them;
//   - storage's appliers (storage/actionrights.go), which check an action's
//     adder or a late writer again inside the command's transaction,
//     against the folder permissions of that moment (CheckWriter,
//     CheckAction), so the check cannot go stale and Raft replays it
//     identically.
//
// Where the types live: storage persists folder permissions, shares and
// action rights and its appliers must call this rule, so access cannot
// import storage (nor server, nor anything that does). The types the rule
// reads are therefore plain data declared here, with the JSON tags their
// records and commands have always had; storage names them as aliases
// (storage.FolderRole, FolderPermissionSet, Share, ActionActor,
// AccessError), so a record, a command's JSON and every caller are byte
// for byte as before. access imports the standard library only.
package access

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Folder permission types (FormKiQ's READ, WRITE, DELETE).
const (
	Read   = "READ"
	Write  = "WRITE"
	Delete = "DELETE"
)

// Site permissions that lift folder permissions (they set them).
const (
	siteAdmin  = "ADMIN"
	siteGovern = "GOVERN"
)

// Role grants a role (a group of the caller's token) permissions on a
// folder and everything below it, unless a folder further down has its
// own permissions.
type Role struct {
	RoleName    string   `json:"roleName"`
	Permissions []string `json:"permissions"`
}

// Folders holds a site's folder permissions, by folder path ("" is the
// root), for access checks.
type Folders map[string][]Role

// Governing returns the permissions that govern the folder dir: its own,
// else those of its nearest ancestor that has some. ok is false when no
// folder on the way up has permissions (the site's permissions alone
// apply).
func (s Folders) Governing(dir string) (roles []Role, at string, ok bool) {
	if len(s) == 0 {
		return nil, "", false
	}
	for {
		if r, found := s[dir]; found {
			return r, dir, true
		}
		if dir == "" {
			return nil, "", false
		}
		dir = Dir(dir)
	}
}

// Allows reports whether a caller in groups may use permission on the
// folder dir under these folder permissions.
func (s Folders) Allows(dir string, groups []string, permission string) bool {
	roles, _, ok := s.Governing(dir)
	if !ok {
		return true
	}
	for _, r := range roles {
		for _, g := range groups {
			if g != r.RoleName {
				continue
			}
			for _, p := range r.Permissions {
				if p == permission {
					return true
				}
			}
		}
	}
	return false
}

// Dir is the folder of a document path or the parent of a folder path
// ("" for the root).
func Dir(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return ""
	}
	return p[:i]
}

// Share permission types.
const (
	SharePermissionGroup = "GROUP"
	SharePermissionUser  = "USER" // Quire's: shared with one user
	ShareTypeFolder      = "FOLDER"
)

// Share is one folder share (FormKiQ's /shares): a folder of a site
// shared with a group (or, Quire's, one user) with READ, WRITE and DELETE.
type Share struct {
	ShareKey       string    `json:"shareKey"`
	SiteID         string    `json:"siteId"`
	Type           string    `json:"type"`
	Path           string    `json:"path"`
	Group          string    `json:"group,omitempty"`
	Username       string    `json:"username,omitempty"`
	PermissionType string    `json:"permissionType"`
	Permissions    []string  `json:"permissions"`
	UserID         string    `json:"userId"`
	InsertedDate   time.Time `json:"insertedDate"`
}

// Grants reports whether the share gives perm (READ, WRITE, DELETE) in
// the folder dir: dir is the shared folder or below it.
func (s *Share) Grants(dir, perm string) bool {
	if dir != s.Path && !strings.HasPrefix(dir, s.Path+"/") {
		return false
	}
	return slices.Contains(s.Permissions, perm)
}

// SharedWith reports whether the share is for a caller with these
// username and groups.
func (s *Share) SharedWith(username string, groups []string) bool {
	if s.PermissionType == SharePermissionUser {
		return s.Username == username
	}
	return slices.Contains(groups, s.Group)
}

// Actor is the rights of whoever added an action that acts with them (or
// of a write that runs long after its request): the groups of the token
// or API key (folder permissions name groups) and the permissions on the
// action's site.
type Actor struct {
	Groups      []string `json:"groups,omitempty"`
	Permissions []string `json:"permissions,omitempty"`
}

// Has reports whether the actor holds the site permission perm.
func (a *Actor) Has(perm string) bool { return slices.Contains(a.Permissions, perm) }

// Error is a permission the caller (or an action's adder) lacks. The
// server answers it as FormKiQ answers access denials (401 with the
// message).
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// FolderDenied is the error for an operation a folder's permissions do
// not grant, in FormKiQ's words.
func FolderDenied(dir, perm string) *Error {
	if dir == "" {
		dir = "/"
	}
	return &Error{Msg: fmt.Sprintf("fkq access denied to folder (%s) (%s)", dir, perm)}
}
