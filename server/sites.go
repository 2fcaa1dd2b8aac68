package server

import (
	"net/http"
	"sort"
	"strings"

	"quire/auth"
	"quire/storage"
)

// handleGetSites serves GET /sites: the caller, its roles and the sites it
// can use with their permissions.
func (s *Server) handleGetSites(r *reqCtx) error {
	p := r.p
	// Every Quire site is ACTIVE (sites cannot be deactivated), so the
	// status filter keeps all or none.
	status := strings.ToUpper(r.Query("status"))
	if status != "" && status != "ACTIVE" && status != "INACTIVE" {
		return invalid("status", "invalid 'status' parameter, use ACTIVE or INACTIVE")
	}
	ids := map[string]bool{}
	for site := range p.Sites {
		ids[site] = true
	}
	if p.Admin {
		ids["default"] = true
		stored, err := s.db.Sites()
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
	titles, err := s.db.SiteTitles()
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
			"roles":       nonNil(roles),
		}
		if t := titles[id]; t != "" {
			site["title"] = t
		}
		// The site's own branding (Quire): every member of the site may
		// see how it is presented, not only its governors.
		if c, err := s.db.SiteConfig(id); err != nil {
			return err
		} else if c.Branding != nil {
			site["branding"] = c.Branding
		}
		sites = append(sites, site)
	}
	claims := p.Claims
	if claims == nil {
		claims = map[string]any{}
	}
	return r.JSON(map[string]any{
		"username":   p.Username,
		"roles":      nonNil(p.Groups),
		"userClaims": claims,
		"sites":      sites,
	})
}

var apiKeyPermissions = map[string]bool{"READ": true, "WRITE": true, "DELETE": true, "GOVERN": true}

// handleAddAPIKey serves POST /sites/{siteId}/apiKeys.
func (s *Server) handleAddAPIKey(r *reqCtx) error {
	var b struct {
		Name        string   `json:"name"`
		Groups      []string `json:"groups"`
		Permissions []string `json:"permissions"`
	}
	if err := r.readBody(&b, 64<<10); err != nil {
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
	if err := checkErrors(errs); err != nil {
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
	if _, err := s.apply(r, storage.OpAddAPIKey, storage.AddAPIKey{Key: rec, OwnGroups: true}); err != nil {
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

// handleGetAPIKeys serves GET /sites/{siteId}/apiKeys.
func (s *Server) handleGetAPIKeys(r *reqCtx) error {
	keys, err := s.db.ListAPIKeys(r.site)
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
			"insertedDate": formatDate(k.InsertedDate),
			"permissions":  k.Permissions,
			"groups":       nonNil(k.Groups),
		})
	}
	return r.JSON(map[string]any{"apiKeys": out})
}

// handleDeleteAPIKey serves DELETE /sites/{siteId}/apiKeys/{apiKey}; the
// key may be given in full or masked as listed.
func (s *Server) handleDeleteAPIKey(r *reqCtx) error {
	k := pathParam(r, "apiKey")
	p := storage.DeleteAPIKey{Masked: k}
	if !strings.Contains(k, "*") {
		p = storage.DeleteAPIKey{Hash: auth.HashAPIKey(k)}
	}
	if _, err := s.apply(r, storage.OpDeleteAPIKey, p); err != nil {
		return err
	}
	return r.JSON(messageBody{"ApiKey deleted"})
}
