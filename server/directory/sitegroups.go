package directory

import (
	"fmt"

	"quire/auth"
	"quire/server/internal/api"
	"quire/storage"
)

// Site groups (FormKiQ's /sites/{siteId}/groups; API.md "Site groups"):
// an administrator gives a group permissions on a site; members of the
// group then hold them there (SiteGrants, at authentication).

// SiteGrants adds the stored site group permissions of the caller's
// groups to a signed-in user's principal. API keys (their permissions are
// the key's) and delegated requests (the token's) are left as they are.
func (s *Handlers) SiteGrants(p *auth.Principal) (*auth.Principal, error) {
	if p.APIKeySite != "" || p.Delegation != nil || p.Admin || len(p.Groups) == 0 {
		return p, nil
	}
	grants, err := s.DB.SiteGrants(p.Groups)
	if err != nil || len(grants) == 0 {
		return p, err
	}
	out := make(map[string][]auth.Permission, len(grants))
	for site, perms := range grants {
		for _, pm := range perms {
			out[site] = append(out[site], auth.Permission(pm))
		}
	}
	return p.WithSiteGrants(out), nil
}

// HandleGetSiteGroups serves GET /sites/{siteId}/groups (GOVERN):
// {"groupNames"} of the groups given permissions on the site.
func (s *Handlers) HandleGetSiteGroups(r *api.Request) error {
	gs, err := s.DB.SiteGroups(r.Site)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(gs))
	for _, g := range gs {
		names = append(names, g.GroupName)
	}
	return r.JSON(map[string]any{"groupNames": names})
}

// HandleGetSiteGroup serves GET /sites/{siteId}/groups/{groupName}
// (GOVERN): {"group":{"permissions"}} plus Quire's groupName, userId and
// insertedDate.
func (s *Handlers) HandleGetSiteGroup(r *api.Request) error {
	g, err := s.DB.GetSiteGroup(r.Site, api.PathParam(r, "groupName"))
	if err != nil {
		return err
	}
	return r.JSON(map[string]any{"group": map[string]any{"groupName": g.GroupName, "permissions": g.Permissions,
		"userId": g.UserID, "insertedDate": api.FormatDate(g.InsertedDate)}})
}

// HandleSetSiteGroupPermissions serves PUT
// /sites/{siteId}/groups/{groupName}/permissions (Admins)
// {permissions}.
func (s *Handlers) HandleSetSiteGroupPermissions(r *api.Request) error {
	var in struct {
		Permissions []string `json:"permissions"`
	}
	if err := r.ReadBody(&in, 16<<10); err != nil {
		return err
	}
	group := api.PathParam(r, "groupName")
	if _, err := s.Apply(r, storage.OpSetSiteGroup, storage.SetSiteGroup{Group: group, Permissions: in.Permissions}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf("Group '%s' permissions set on site '%s'", group, r.Site)})
}

// HandleDeleteSiteGroup serves DELETE /sites/{siteId}/groups/{groupName}
// (Admins).
func (s *Handlers) HandleDeleteSiteGroup(r *api.Request) error {
	group := api.PathParam(r, "groupName")
	if _, err := s.Apply(r, storage.OpDeleteSiteGroup, storage.DeleteSiteGroup{Group: group}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf("Group '%s' removed from site '%s'", group, r.Site)})
}
