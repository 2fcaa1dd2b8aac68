package storage

import "errors"

// UpdateSite is the payload of OpUpdateSite (PATCH /sites/{siteId}): the
// site is c.Site; a nil Title leaves the title as it is.
type UpdateSite struct {
	Title *string `json:"title,omitempty"`
}

// applyUpdateSite changes a site's title. Sites come into being when
// first written to, so a site without a record gets one.
func applyUpdateSite(t *tx, c *Command) (any, error) {
	p, err := decode[UpdateSite](c)
	if err != nil {
		return nil, err
	}
	if !CheckSiteID(c.Site) {
		return nil, Invalid("siteId", "invalid 'siteId'")
	}
	site := Site{SiteID: c.Site, InsertedDate: c.At}
	if err := t.getJSON(siteKey(c.Site), &site); err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	if p.Title != nil {
		if err := limitsErr(CheckText("title", *p.Title, MaxValueBytes)); err != nil {
			return nil, err
		}
		site.Title = *p.Title
	}
	return nil, t.setJSON(siteKey(c.Site), site)
}
