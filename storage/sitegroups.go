package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Site groups (FormKiQ's /sites/{siteId}/groups): a group given
// permissions on a site (ADMIN, DELETE, READ, WRITE, GOVERN) by an
// administrator. Authentication adds them to the permissions of the
// group's members, next to those that follow from group names
// (<site>, <site>_read, <site>_govern).

// SiteGroupPermissions are the permissions a site group may hold.
var SiteGroupPermissions = []string{"ADMIN", "DELETE", "GOVERN", "READ", "WRITE"}

// MaxSiteGroups bounds a site's stored groups.
const MaxSiteGroups = 1000

// SiteGroup is one group's permissions on a site.
type SiteGroup struct {
	SiteID       string    `json:"siteId"`
	GroupName    string    `json:"groupName"`
	Permissions  []string  `json:"permissions"`
	InsertedDate time.Time `json:"insertedDate"`
	UserID       string    `json:"userId"`
}

func siteGroupKey(site, group string) []byte {
	return []byte(pfxSiteGroup + sk(site) + "/" + group)
}
func siteGroupPrefix(site string) []byte { return []byte(pfxSiteGroup + sk(site) + "/") }
func groupSiteKey(group, site string) []byte {
	return []byte(pfxGroupSite + group + "\x00" + sk(site))
}
func groupSitePrefix(group string) []byte { return []byte(pfxGroupSite + group + "\x00") }

// SetSiteGroup is the payload of OpSetSiteGroup: c.Site's group Group
// gets Permissions (replacing what it had); DeleteSiteGroup removes it.
type SetSiteGroup struct {
	Group       string   `json:"group"`
	Permissions []string `json:"permissions"`
}

func applySetSiteGroup(t *tx, c *Command) (any, error) {
	p, err := decode[SetSiteGroup](c)
	if err != nil {
		return nil, err
	}
	if err := CheckGroupName(p.Group); err != nil {
		return nil, Invalid("groupName", "invalid 'groupName'")
	}
	var perms []string
	for _, pm := range p.Permissions {
		if !slices.Contains(SiteGroupPermissions, pm) {
			return nil, Invalid("permissions", fmt.Sprintf("invalid permission '%s': use ADMIN, DELETE, READ, WRITE or GOVERN", pm))
		}
		if !slices.Contains(perms, pm) {
			perms = append(perms, pm)
		}
	}
	if len(perms) == 0 {
		return nil, Invalid("permissions", "'permissions' is required (DELETE /sites/{siteId}/groups/{groupName} removes a group)")
	}
	slices.Sort(perms)
	k := siteGroupKey(c.Site, p.Group)
	if ok, err := t.exists(k); err != nil {
		return nil, err
	} else if !ok && t.count(siteGroupPrefix(c.Site)) >= MaxSiteGroups {
		return nil, Invalid("groupName", fmt.Sprintf("a site holds at most %d groups", MaxSiteGroups))
	}
	g := SiteGroup{SiteID: c.Site, GroupName: p.Group, Permissions: perms, InsertedDate: c.At, UserID: c.User}
	if err := t.setJSON(groupSiteKey(p.Group, c.Site), g); err != nil {
		return nil, err
	}
	return nil, t.setJSON(k, g)
}

// DeleteSiteGroup is the payload of OpDeleteSiteGroup.
type DeleteSiteGroup struct {
	Group string `json:"group"`
}

func applyDeleteSiteGroup(t *tx, c *Command) (any, error) {
	p, err := decode[DeleteSiteGroup](c)
	if err != nil {
		return nil, err
	}
	k := siteGroupKey(c.Site, p.Group)
	if ok, err := t.exists(k); err != nil {
		return nil, err
	} else if !ok {
		return nil, &NotFoundError{Msg: fmt.Sprintf("group '%s' not found", p.Group)}
	}
	if err := t.del(groupSiteKey(p.Group, c.Site)); err != nil {
		return nil, err
	}
	return nil, t.del(k)
}

// SiteGroups lists a site's stored groups by name.
func (d *DB) SiteGroups(site string) ([]SiteGroup, error) {
	var out []SiteGroup
	err := d.view(func(t *tx) error {
		return t.each(siteGroupPrefix(site), func(_, v []byte) error {
			var g SiteGroup
			if err := json.Unmarshal(v, &g); err != nil {
				return err
			}
			out = append(out, g)
			return nil
		})
	})
	return out, err
}

// GetSiteGroup reads one stored group of a site.
func (d *DB) GetSiteGroup(site, group string) (*SiteGroup, error) {
	var g SiteGroup
	err := d.view(func(t *tx) error { return t.getJSON(siteGroupKey(site, group), &g) })
	if errors.Is(err, ErrNotFound) {
		return nil, &NotFoundError{Msg: fmt.Sprintf("group '%s' not found", group)}
	}
	return &g, err
}

// SiteGrants returns, by site, the permissions stored site groups give
// members of groups.
func (d *DB) SiteGrants(groups []string) (map[string][]string, error) {
	out := map[string][]string{}
	err := d.view(func(t *tx) error {
		for _, g := range groups {
			if g == "" || strings.ContainsAny(g, "\x00") {
				continue
			}
			err := t.each(groupSitePrefix(g), func(_, v []byte) error {
				var sg SiteGroup
				if err := json.Unmarshal(v, &sg); err != nil {
					return err
				}
				out[sg.SiteID] = append(out[sg.SiteID], sg.Permissions...)
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}
