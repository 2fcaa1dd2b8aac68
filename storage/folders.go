package storage

import (
	"fmt"
)

// FolderRef is the payload of OpAddFolder and OpDeleteFolder.
type FolderRef struct {
	Path string `json:"path"`
}

func applyAddFolder(t *tx, c *Command) (any, error) {
	p, err := decode[FolderRef](c)
	if err != nil {
		return nil, err
	}
	if err := limitsErr(CheckPath("path", p.Path)); err != nil {
		return nil, err
	}
	parent, name := splitPath(p.Path)
	ok, err := t.exists(folderKey(c.Site, parent, true, name))
	if err != nil {
		return nil, err
	}
	if ok {
		return nil, &ConflictError{Msg: fmt.Sprintf("folder '%s' already exists", p.Path)}
	}
	if err := ensureFolders(t, c, p.Path); err != nil {
		return nil, err
	}
	return nil, ensureSite(t, c)
}

// MsgFolderNotEmpty is FormKiQ's 400 {"message"} for deleting a folder
// that still holds a document or a folder.
const MsgFolderNotEmpty = "folder is not empty"

func applyDeleteFolder(t *tx, c *Command) (any, error) {
	p, err := decode[FolderRef](c)
	if err != nil {
		return nil, err
	}
	parent, name := splitPath(p.Path)
	k := folderKey(c.Site, parent, true, name)
	ok, err := t.exists(k)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &NotFoundError{Msg: fmt.Sprintf("folder '%s' not found", p.Path)}
	}
	if len(t.firstKey(folderPrefix(c.Site, p.Path))) > 0 {
		return nil, &RequestError{Msg: MsgFolderNotEmpty}
	}
	if err := t.del(folderPermKey(c.Site, p.Path)); err != nil {
		return nil, err
	}
	return nil, t.del(k)
}
