package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"quire/access"
)

// Folder shares (FormKiQ's /shares): a folder of a site shared with a
// group (or, Quire's, one user) with READ, WRITE and DELETE. Share records
// are server-wide under their key, so GET /shares lists a caller's shares
// of every site; each site indexes its own.

// Share permission types (the permission rule's, package access).
const (
	SharePermissionGroup = access.SharePermissionGroup
	SharePermissionUser  = access.SharePermissionUser // Quire's: shared with one user
	ShareTypeFolder      = access.ShareTypeFolder
	// MaxSharesPerSite bounds a site's shares.
	MaxSharesPerSite = 1000
)

// Share is one folder share (access.Share: Grants and SharedWith are the
// permission rule's).
type Share = access.Share

func shareKeyOf(key string) []byte         { return []byte(pfxShare + key) }
func siteShareKey(site, key string) []byte { return []byte(pfxSiteShare + sk(site) + "/" + key) }
func siteSharePrefix(site string) []byte   { return []byte(pfxSiteShare + sk(site) + "/") }

// AddShare is the payload of OpAddShare: c.Site's folder Share.Path
// shared; the handler picks ShareKey.
type AddShare struct {
	Share Share `json:"share"`
}

func errShareNotFound(key string) error {
	return &NotFoundError{Msg: fmt.Sprintf("share '%s' not found", key)}
}

func applyAddShare(t *tx, c *Command) (any, error) {
	p, err := decode[AddShare](c)
	if err != nil {
		return nil, err
	}
	sh := p.Share
	if sh.ShareKey == "" || len(sh.ShareKey) > 64 || strings.ContainsAny(sh.ShareKey, "/\x00") {
		return nil, Invalid("shareKey", "invalid 'shareKey'")
	}
	if sh.Path == "" {
		return nil, Invalid("indexKey", "a site's root folder cannot be shared: share a folder")
	}
	parent, name := splitPath(sh.Path)
	if ok, err := t.exists(folderKey(c.Site, parent, true, name)); err != nil {
		return nil, err
	} else if !ok {
		return nil, &NotFoundError{Msg: fmt.Sprintf("folder '%s' not found", sh.Path)}
	}
	switch {
	case (sh.Group == "") == (sh.Username == ""):
		return nil, Invalid("group", "give 'group' or 'username' (one of them)")
	case sh.Group != "":
		if err := limitsErr(CheckText("group", sh.Group, 256)); err != nil {
			return nil, err
		}
		sh.PermissionType = SharePermissionGroup
	default:
		if err := limitsErr(CheckText("username", sh.Username, 256)); err != nil {
			return nil, err
		}
		sh.PermissionType = SharePermissionUser
	}
	var perms []string
	for _, pm := range sh.Permissions {
		switch pm {
		case FolderRead, FolderWrite, FolderDelete:
			if !slices.Contains(perms, pm) {
				perms = append(perms, pm)
			}
		default:
			return nil, Invalid("permissions", fmt.Sprintf("invalid permission '%s': use READ, WRITE or DELETE", pm))
		}
	}
	if len(perms) == 0 {
		return nil, Invalid("permissions", "'permissions' is required")
	}
	slices.Sort(perms)
	if ok, err := t.exists(shareKeyOf(sh.ShareKey)); err != nil {
		return nil, err
	} else if ok {
		return nil, &ConflictError{Msg: fmt.Sprintf("share '%s' already exists", sh.ShareKey)}
	}
	if n := t.count(siteSharePrefix(c.Site)); n >= MaxSharesPerSite {
		return nil, Invalid("share", fmt.Sprintf("a site holds at most %d shares", MaxSharesPerSite))
	}
	sh.SiteID, sh.Type, sh.Permissions, sh.UserID, sh.InsertedDate = c.Site, ShareTypeFolder, perms, c.User, c.At
	if err := t.set(siteShareKey(c.Site, sh.ShareKey), nil); err != nil {
		return nil, err
	}
	return &sh, t.setJSON(shareKeyOf(sh.ShareKey), sh)
}

// DeleteShare is the payload of OpDeleteShare.
type DeleteShare struct {
	ShareKey string `json:"shareKey"`
}

func applyDeleteShare(t *tx, c *Command) (any, error) {
	p, err := decode[DeleteShare](c)
	if err != nil {
		return nil, err
	}
	var sh Share
	if err := t.getJSON(shareKeyOf(p.ShareKey), &sh); errors.Is(err, ErrNotFound) || err == nil && sh.SiteID != c.Site {
		return nil, errShareNotFound(p.ShareKey)
	} else if err != nil {
		return nil, err
	}
	if err := t.del(siteShareKey(c.Site, p.ShareKey)); err != nil {
		return nil, err
	}
	return nil, t.del(shareKeyOf(p.ShareKey))
}

// GetShare reads a share by its key.
func (d *DB) GetShare(key string) (*Share, error) {
	if key == "" || len(key) > 64 || strings.ContainsAny(key, "/\x00") {
		return nil, errShareNotFound(key)
	}
	var sh Share
	err := d.view(func(t *tx) error { return t.getJSON(shareKeyOf(key), &sh) })
	if errors.Is(err, ErrNotFound) {
		return nil, errShareNotFound(key)
	}
	return &sh, err
}

// Shares lists the shares keep accepts by key after after, at most
// limit, and the key to continue from when more remain.
func (d *DB) Shares(keep func(*Share) bool, after string, limit int) ([]Share, string, error) {
	var out []Share
	var next string
	err := d.view(func(t *tx) error {
		err := t.each([]byte(pfxShare), func(_, v []byte) error {
			var sh Share
			if err := json.Unmarshal(v, &sh); err != nil {
				return err
			}
			if after != "" && sh.ShareKey <= after || !keep(&sh) {
				return nil
			}
			if len(out) == limit {
				next = out[len(out)-1].ShareKey
				return errStop
			}
			out = append(out, sh)
			return nil
		})
		if errors.Is(err, errStop) {
			return nil
		}
		return err
	})
	return out, next, err
}

// SiteShares returns every share of site.
func (d *DB) SiteShares(site string) ([]Share, error) {
	var out []Share
	err := d.view(func(t *tx) error {
		for _, k := range t.keys(siteSharePrefix(site)) {
			var sh Share
			key := string(k[len(siteSharePrefix(site)):])
			if err := t.getJSON(shareKeyOf(key), &sh); err != nil {
				if errors.Is(err, ErrNotFound) {
					continue
				}
				return err
			}
			out = append(out, sh)
		}
		return nil
	})
	return out, err
}
