package admin

import (
	"fmt"
	"net/http"
	"sort"
	"strings"

	"quire/auth"
	"quire/server/internal/api"
	"quire/storage"
)

// HandleGetSites serves GET /sites: the caller, its roles and the sites it
// can use with their permissions.
func (s *Handlers) HandleGetSites(r *api.Request) error {
	p := r.Principal
	// Every Quire site is ACTIVE (sites cannot be deactivated), so the
	// status filter keeps all or none.
	status := strings.ToUpper(r.Query("status"))
	if status != "" && status != "ACTIVE" && status != "INACTIVE" {
		return api.Invalid("status", "invalid 'status' parameter, use ACTIVE or INACTIVE")
	}
	ids := map[string]bool{}
	for site := range p.Sites {
		ids[site] = true
	}
	if p.Admin {
		ids["default"] = true
		stored, err := s.DB.Sites()
		if err != nil {
			return err
		}
		for _, id := range stored {
			ids[id] = true
		}
	}
	var sorted []string
	for id := range ids {
		if status != "INACTIVE" {
			sorted = append(sorted, id)
		}
	}
	sort.Strings(sorted)
	titles, err := s.DB.SiteTitles()
	if err != nil {
		return err
	}
	sites := make([]map[string]any, 0, len(sorted))
	for _, id := range sorted {
		perms := p.Permissions(id)
		permission := "READ_ONLY"
		for _, pm := range perms {
			if pm == auth.PermWrite {
				permission = "READ_WRITE"
			}
		}
		var roles []string
		for _, g := range p.Groups {
			if g == id || strings.HasPrefix(g, id+"_") || g == "Admins" {
				roles = append(roles, g)
			}
		}
		site := map[string]any{
			"siteId":      id,
			"status":      "ACTIVE",
			"permission":  permission,
			"permissions": perms,
			"roles":       api.NonNil(roles),
		}
		if t := titles[id]; t != "" {
			site["title"] = t
		}
		// The site's own branding (Quire): every member of the site may
		// see how it is presented, not only its governors.
		c, err := s.DB.SiteConfig(id)
		if err != nil {
			return err
		}
		if c.Branding != nil {
			site["branding"] = api.BrandingJSON(id, c.Branding)
		}
		// The languages the site's scans are read in (Quire, issue 46):
		// a member sees what "recognize text" will use, not only its
		// governors (the rest of processing stays in the configuration).
		langs, _ := c.OCRLanguages()
		if s.Deps.Pipeline != nil {
			if have, err := s.Deps.Pipeline.SiteOCRLanguages(r.Ctx.UserContext(), c); err == nil {
				langs = have
			}
		}
		site["processing"] = map[string]any{"languages": langs}
		sites = append(sites, site)
	}
	claims := p.Claims
	if claims == nil {
		claims = map[string]any{}
	}
	return api.CompressedJSON(r.Ctx, map[string]any{
		"username":   p.Username,
		"roles":      api.NonNil(p.Groups),
		"userClaims": claims,
		"sites":      sites,
	})
}

var apiKeyPermissions = map[string]bool{"READ": true, "WRITE": true, "DELETE": true, "GOVERN": true}

// HandleAddAPIKey serves POST /sites/{siteId}/apiKeys.
func (s *Handlers) HandleAddAPIKey(r *api.Request) error {
	var b struct {
		Name        string   `json:"name"`
		Groups      []string `json:"groups"`
		Permissions []string `json:"permissions"`
	}
	if err := r.ReadBody(&b, 64<<10); err != nil {
		return err
	}
	var errs []storage.ValidationItem
	if strings.TrimSpace(b.Name) == "" {
		errs = append(errs, storage.ValidationItem{Key: "name", Msg: "'name' is required"})
	}
	perms := b.Permissions
	if len(perms) == 0 {
		perms = []string{"READ", "WRITE", "DELETE"}
	}
	for i, pm := range perms {
		perms[i] = strings.ToUpper(pm)
		if !apiKeyPermissions[perms[i]] {
			errs = append(errs, storage.ValidationItem{Key: "permissions", Msg: "invalid permission '" + pm + "'"})
		}
	}
	if err := api.CheckErrors(errs); err != nil {
		return err
	}
	sort.Strings(perms)
	key, err := auth.NewAPIKey()
	if err != nil {
		return err
	}
	rec := storage.APIKey{
		Hash:        auth.HashAPIKey(key),
		Masked:      maskAPIKey(key),
		Name:        b.Name,
		Permissions: perms,
		Groups:      b.Groups,
	}
	if _, err := s.Apply(r, storage.OpAddAPIKey, storage.AddAPIKey{Key: rec, OwnGroups: true}); err != nil {
		return err
	}
	return r.Status(http.StatusOK).JSON(map[string]any{"apiKey": key})
}

// maskAPIKey is the form of a key shown in listings.
func maskAPIKey(k string) string {
	if len(k) < 12 {
		return strings.Repeat("*", len(k))
	}
	return k[:4] + strings.Repeat("*", len(k)-8) + k[len(k)-4:]
}

// HandleGetAPIKeys serves GET /sites/{siteId}/apiKeys.
func (s *Handlers) HandleGetAPIKeys(r *api.Request) error {
	keys, err := s.DB.ListAPIKeys(r.Site)
	if err != nil {
		return err
	}
	out := make([]map[string]any, 0, len(keys))
	for _, k := range keys {
		out = append(out, map[string]any{
			"name":         k.Name,
			"apiKey":       k.Masked,
			"userId":       k.UserID,
			"siteId":       k.SiteID,
			"insertedDate": api.FormatDate(k.InsertedDate),
			"permissions":  k.Permissions,
			"groups":       api.NonNil(k.Groups),
		})
	}
	return r.JSON(map[string]any{"apiKeys": out})
}

// HandleDeleteAPIKey serves DELETE /sites/{siteId}/apiKeys/{apiKey}; the
// key may be given in full or masked as listed.
func (s *Handlers) HandleDeleteAPIKey(r *api.Request) error {
	k := api.PathParam(r, "apiKey")
	p := storage.DeleteAPIKey{Masked: k}
	if !strings.Contains(k, "*") {
		p = storage.DeleteAPIKey{Hash: auth.HashAPIKey(k)}
	}
	if _, err := s.Apply(r, storage.OpDeleteAPIKey, p); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "ApiKey deleted"})
}

// HandleAddSite serves POST /sites (Admins) {site:{id, title, status}}.
// Quire's sites are always ACTIVE: INACTIVE is refused, not ignored.
func (s *Handlers) HandleAddSite(r *api.Request) error {
	var in struct {
		Site *struct {
			ID     string `json:"id"`
			Title  string `json:"title"`
			Status string `json:"status"`
		} `json:"site"`
	}
	if err := r.ReadBody(&in, 64<<10); err != nil {
		return err
	}
	if in.Site == nil || strings.TrimSpace(in.Site.ID) == "" {
		return api.Invalid("id", "'id' is required")
	}
	switch strings.ToUpper(in.Site.Status) {
	case "", "ACTIVE":
	case "INACTIVE":
		return api.Invalid("status", "sites cannot be INACTIVE on this server")
	default:
		return api.Invalid("status", "invalid 'status': ACTIVE")
	}
	if _, err := s.Apply(r, storage.OpAddSite, storage.AddSite{SiteID: in.Site.ID, Title: in.Site.Title}); err != nil {
		return err
	}
	return r.Status(http.StatusCreated).JSON(api.MessageBody{Message: fmt.Sprintf("Site '%s' created", in.Site.ID)})
}

// HandleUpdateSite serves PATCH /sites/{siteId} (Admins)
// {site:{title, status}}: the title changes; Quire's sites are always
// ACTIVE, so status INACTIVE is refused, not ignored.
func (s *Handlers) HandleUpdateSite(r *api.Request) error {
	site := api.SiteParam(r.Ctx)
	if !storage.CheckSiteID(site) || strings.ContainsAny(site, " ") {
		return api.Invalid("siteId", "invalid 'siteId'")
	}
	var in struct {
		Site *struct {
			Title  *string `json:"title"`
			Status string  `json:"status"`
		} `json:"site"`
	}
	if err := r.ReadBody(&in, 64<<10); err != nil {
		return err
	}
	if in.Site == nil {
		return api.Invalid("site", "'site' is required")
	}
	switch in.Site.Status {
	case "", "ACTIVE":
	case "INACTIVE":
		return api.Invalid("status", "sites cannot be INACTIVE on this server")
	default:
		return api.Invalid("status", "invalid 'status': ACTIVE")
	}
	r.Site = site
	if _, err := s.Apply(r, storage.OpUpdateSite, storage.UpdateSite{Title: in.Site.Title}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf("Site '%s' updated", site)})
}
