package storage

import (
	"encoding/json"
	"fmt"
	"strings"

	"quire/access"
)

// Quire accepts MOVE and DELETE actions on documents (FormKiQ keeps them
// for workflows). Such an action changes the document long after the
// request that added it, so it must not do more than its adder could have
// done by hand: it records the adder's rights (ActionActor) and they are
// checked when the action is added and again when it runs, against the
// folder permissions of that moment.

// ActionActor is the rights of whoever added an action that acts with
// them: the groups of the token or API key (folder permissions name
// groups) and the permissions on the action's site (access.Actor).
type ActionActor = access.Actor

// ActsAsAdder reports whether actions of typ act with their adder's
// rights and so record them.
func ActsAsAdder(typ string) bool { return typ == "MOVE" || typ == "DELETE" }

// AccessError is a permission the caller (or an action's adder) lacks
// (access.Error). The server answers it as FormKiQ answers access denials
// (401 with the message).
type AccessError = access.Error

// FolderDenied is the error for an operation a folder's permissions do
// not grant, in FormKiQ's words.
func FolderDenied(dir, perm string) *AccessError { return access.FolderDenied(dir, perm) }

// MoveActionPath is where a MOVE action puts a document at docPath (its
// path parameter is the destination folder, ending in "/"); a document
// without a path is named by its id.
func MoveActionPath(param, docPath, docID string) string {
	dest := strings.TrimLeft(param, "/")
	if docPath == "" {
		return dest + docID
	}
	_, name := splitPath(docPath)
	return dest + name
}

// CheckActionRights reports whether the adder recorded in a may do what
// the action does to the document docID at docPath, under the site's
// folder permissions set: a DELETE needs DELETE on the site and in the
// document's folder; a MOVE needs WRITE on the site, in the document's
// folder and in the destination folder. Actions of other types pass. An
// action that needs rights but recorded none (added before they were
// recorded) is refused: nothing says its adder may do it.
func CheckActionRights(site string, a *Action, docID, docPath string, set FolderPermissionSet) error {
	if !ActsAsAdder(a.Type) {
		return nil
	}
	actor := a.Actor
	if actor == nil {
		return &AccessError{Msg: fmt.Sprintf("%s action has no recorded rights of the user who added it; add it again", a.Type)}
	}
	dir, _ := splitPath(docPath)
	if a.Type == "MOVE" {
		var params struct {
			Path string `json:"path"`
		}
		_ = json.Unmarshal(a.Parameters, &params) // validated when added
		dest, _ := splitPath(MoveActionPath(params.Path, docPath, docID))
		return access.CheckAction(site, actor, set, access.Need{Dir: dir, Perm: FolderWrite}, access.Need{Dir: dest, Perm: FolderWrite})
	}
	return access.CheckAction(site, actor, set, access.Need{Dir: dir, Perm: FolderDelete})
}

// A write that runs long after the request's own checks (document
// generation runs external programs first) carries the caller's rights as
// Writer; the applier checks WRITE in the folders it writes to, in the
// same transaction as the write, against the folder permissions and the
// document's path of that moment, so the check cannot go stale. Writer nil
// (the server's own writes, commands before it existed) checks nothing.

// checkWriter reports whether w may write documents at each of paths
// (access.CheckWriter), reading the folder permissions in t.
func checkWriter(t *tx, site string, w *ActionActor, paths ...string) error {
	return access.CheckWriter(site, w, func() (FolderPermissionSet, error) { return loadFolderPermissions(t, site) }, paths...)
}

// writerCheck is checkWriter for the many documents of one command: the
// site's folder permissions are read from t once, at the first check.
func writerCheck(t *tx, site string, w *ActionActor) func(paths ...string) error {
	var set FolderPermissionSet
	loaded := false
	load := func() (FolderPermissionSet, error) {
		if !loaded {
			var err error
			if set, err = loadFolderPermissions(t, site); err != nil {
				return nil, err
			}
			loaded = true
		}
		return set, nil
	}
	return func(paths ...string) error { return access.CheckWriter(site, w, load, paths...) }
}

// writerPath is the path whose folder governs writes to d: its own, or
// for an artifact its document's.
func writerPath(t *tx, site string, d *Document) (string, error) {
	if d.ArtifactOf == "" {
		return d.Path, nil
	}
	parent, err := getDoc(t, site, d.ArtifactOf)
	if err != nil {
		return "", err
	}
	return parent.Path, nil
}
