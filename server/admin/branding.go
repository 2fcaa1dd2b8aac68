package admin

import (
	"net/http"
	"slices"

	"github.com/gofiber/fiber/v2"

	"quire/server/internal/api"
	"quire/storage"
)

// errNoLogo answers a logo request with no such logo: none is set, or
// ?v= names another version than the current one.
var errNoLogo = api.ErrStatus(http.StatusNotFound, "Logo not found")

// maxLogoVersion bounds ?v= (a hash is 22 characters).
const maxLogoVersion = 64

// HandleGetLogo serves GET /branding/logo (no token, issue 47): the
// global branding's inline logo as its own file, so neither the
// configuration nor the sign-in page carries its bytes. With ?v= equal
// to the logo's hash (branding.logoUrl) it is immutable for a year;
// without v it is revalidated each time; another v is 404, so a cached
// URL never names other bytes than it first did.
func (s *Handlers) HandleGetLogo(c *fiber.Ctx) error {
	sc, err := s.DB.SystemConfig()
	if err != nil {
		return err
	}
	return serveLogo(c, sc.Branding, false)
}

// HandleGetSiteLogo serves GET /sites/{siteId}/branding/logo?v=<hash>
// (no token: an <img> sends none). A site's logo is shown to its members
// only, so the URL's hash is the credential: without the current v the
// answer is 404, whether or not the site or its logo exist.
func (s *Handlers) HandleGetSiteLogo(c *fiber.Ctx) error {
	site := api.UnescapedParam(c, "siteId")
	if !storage.CheckSiteID(site) || c.Query("v") == "" {
		return errNoLogo
	}
	// Only a site that exists is looked up: the configuration cache keeps
	// every site it is asked about, and this route has no caller to trust.
	sites, err := s.DB.Sites()
	if err != nil {
		return err
	}
	if !slices.Contains(sites, site) {
		return errNoLogo
	}
	cfg, err := s.DB.SiteConfig(site)
	if err != nil {
		return err
	}
	return serveLogo(c, cfg.Branding, true)
}

func serveLogo(c *fiber.Ctx, b *storage.Branding, needV bool) error {
	v := c.Query("v")
	if len(v) > maxLogoVersion {
		return api.Invalid("v", "invalid 'v'")
	}
	l, ok := api.BrandingLogo(b)
	if !ok || (v != "" && v != l.Hash) || (needV && v == "") {
		return errNoLogo
	}
	etag := `"` + l.Hash + `"`
	c.Set(fiber.HeaderETag, etag)
	if v != "" {
		c.Set(fiber.HeaderCacheControl, "public, max-age=31536000, immutable")
	} else {
		c.Set(fiber.HeaderCacheControl, "public, no-cache")
	}
	// The logo is stored bytes like a document's (an SVG could hold
	// script): the stored-bytes headers, shown inline where passive.
	api.ServeStored(c, api.StoredFile{ContentType: l.ContentType, Name: "logo", Inline: true})
	if c.Get(fiber.HeaderIfNoneMatch) == etag {
		return c.SendStatus(http.StatusNotModified)
	}
	return c.Send(l.Data)
}
