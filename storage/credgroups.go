package storage

import (
	"encoding/json"
	"fmt"
)

// Credentials bound to a site (issue 43, finding 2): an API key and an
// intake profile's identity belong to the site that issued them, and so
// must their groups. checkOwnGroups refuses, when the credential is
// made, a group that grants something outside the site: Admins, the role
// groups of another site ("<site>", "<site>_read", "<site>_govern" of a
// site that exists, or of default) and a group another site's folder
// share names. The server checks the site again where a grant is used
// (a share made later of a group a key already carries gives that key
// nothing: server/shares.go), so this check is the early, clear answer,
// not the only one.

// groupAdmins is auth's Admins group (storage imports no Quire package).
const groupAdmins = "Admins"

// checkOwnGroups reports the first group of groups a credential of site
// must not carry, as a validation error on key.
func checkOwnGroups(t *tx, site, key string, groups []string) error {
	if len(groups) == 0 {
		return nil
	}
	others := map[string]bool{"default": site != "default"}
	err := t.each([]byte(pfxSite), func(_, v []byte) error {
		var s Site
		if err := json.Unmarshal(v, &s); err != nil {
			return err
		}
		if s.SiteID != site {
			others[s.SiteID] = true
		}
		return nil
	})
	if err != nil {
		return err
	}
	shared := map[string]bool{}
	err = t.each([]byte(pfxShare), func(_, v []byte) error {
		var sh Share
		if err := json.Unmarshal(v, &sh); err != nil {
			return err
		}
		if sh.SiteID != site && sh.Group != "" {
			shared[sh.Group] = true
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, g := range groups {
		if err := limitsErr(CheckText(key, g, 256)); err != nil {
			return err
		}
		foreign := g == groupAdmins || shared[g]
		for _, suffix := range []string{"", "_read", "_govern"} {
			if len(g) > len(suffix) && g[len(g)-len(suffix):] == suffix && others[g[:len(g)-len(suffix)]] {
				foreign = true
			}
		}
		if foreign {
			return Invalid(key, fmt.Sprintf("group '%s' gives rights outside site '%s': a credential of a site carries only that site's groups", g, site))
		}
	}
	return nil
}
