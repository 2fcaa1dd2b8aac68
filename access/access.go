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

// Rights is what the rule knows of one caller in one site: the request
// context loads it once per request (server/internal/api/guard.go), an
// applier builds it from an Actor inside its transaction.
type Rights struct {
	// Exempt: folder permissions do not limit the caller (an admin or a
	// governor of the site, who set them; see Exempt).
	Exempt bool
	// Groups are the caller's groups (folder permissions name groups).
	Groups []string
	// Folders are the site's folder permissions.
	Folders Folders
	// Failed: the folder permissions could not be read; the rule refuses
	// (fails closed).
	Failed bool
	// Through is the share a request with shareKey acts through: it
	// bounds the request to its folder and permissions.
	Through *Share
	// Shares are the site's shares naming the caller: without shareKey
	// they add to what folder permissions grant.
	Shares []Share
}

// Exempt reports whether folder permissions do not limit a caller: site
// admins and governors are not limited (they set them), unless the
// request acts through a share (the share bounds it).
func Exempt(admin, governs bool, through *Share) bool {
	return through == nil && (admin || governs)
}

// Allows is the permission rule: whether the caller may use perm (READ,
// WRITE, DELETE) in the folder dir. Through a share, only inside its
// folder with its permissions; an exempt caller everywhere; otherwise as
// the nearest folder with permissions grants the caller's groups (none on
// the way up: the site's permissions alone decide), or as a share naming
// the caller grants.
func (r *Rights) Allows(dir, perm string) bool {
	switch {
	case r.Through != nil:
		return r.Through.Grants(dir, perm)
	case r.Exempt:
		return true
	case r.Failed:
		return false
	case r.Folders.Allows(dir, r.Groups, perm):
		return true
	}
	for i := range r.Shares {
		if r.Shares[i].Grants(dir, perm) {
			return true
		}
	}
	return false
}

// Check is Allows as an error: FolderDenied when the rule refuses.
func (r *Rights) Check(dir, perm string) error {
	if !r.Allows(dir, perm) {
		return FolderDenied(dir, perm)
	}
	return nil
}

// Restricted reports whether the rule may hide some folders of the site
// from the caller (when not, listings need no per-document check).
func (r *Rights) Restricted() bool {
	switch {
	case r.Through != nil:
		return true
	case r.Exempt:
		return false
	}
	return r.Failed || len(r.Folders) > 0
}

// Exempt reports whether the actor's site permissions lift folder
// permissions (ADMIN, GOVERN).
func (a *Actor) Exempt() bool { return a.Has(siteAdmin) || a.Has(siteGovern) }

// Rights are the actor's rights under the folder permissions set (an
// actor acts through no share and is named by none: its recorded groups
// and site permissions are all it carries).
func (a *Actor) Rights(set Folders) Rights {
	return Rights{Exempt: a.Exempt(), Groups: a.Groups, Folders: set}
}

// groupsDenied refuses an actor whose site permissions lack one.
func (a *Actor) groupsDenied(site string) *Error {
	return &Error{Msg: fmt.Sprintf("fkq access denied (groups: %s (%s))", site, strings.Join(a.Permissions, ","))}
}

// Need is one permission in one folder an action or a write needs.
type Need struct{ Dir, Perm string }

// CheckAction reports whether the actor who added an action (MOVE,
// DELETE) may do what it does: for each need, the site permission (or
// ADMIN) and the folder's, by the rule.
func CheckAction(site string, a *Actor, set Folders, needs ...Need) error {
	rights := a.Rights(set)
	for _, n := range needs {
		if !a.Has(n.Perm) && !a.Has(siteAdmin) {
			return a.groupsDenied(site)
		}
		if err := rights.Check(n.Dir, n.Perm); err != nil {
			return err
		}
	}
	return nil
}

// CheckWriter reports whether a late writer w (a write that runs long
// after its request) may write documents at each of paths: WRITE on the
// site and, by the rule, in each path's folder. w nil (the server's own
// writes) and exempt writers pass without reading the folder
// permissions; load reads them (inside the applier's transaction).
func CheckWriter(site string, w *Actor, load func() (Folders, error), paths ...string) error {
	if w == nil || w.Exempt() {
		return nil
	}
	if !w.Has(Write) {
		return w.groupsDenied(site)
	}
	set, err := load()
	if err != nil {
		return err
	}
	rights := w.Rights(set)
	for _, p := range paths {
		if err := rights.Check(Dir(p), Write); err != nil {
			return err
		}
	}
	return nil
}
