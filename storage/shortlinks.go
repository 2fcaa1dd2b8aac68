package storage

import (
	"errors"
	"fmt"
	"time"
)

// Shortlink is a managed short link (SERVICE-SPEC.md §4.5): /s/<slug>
// redirects to TargetURL, or, for a document link, to a fresh download URL
// of the document at the moment of the click. Slugs are unique per server.
type Shortlink struct {
	Slug string `json:"slug"`
	Site string `json:"siteId"`
	// TargetURL is an external http(s) URL; empty for a document link.
	TargetURL string `json:"targetUrl,omitempty"`
	// DocumentID names the document of a document link; DocInserted is its
	// insertedDate when the link was made, so a document re-created later
	// under the same id does not revive the link.
	DocumentID  string     `json:"documentId,omitempty"`
	DocInserted time.Time  `json:"docInserted,omitzero"`
	ExpiresAt   *time.Time `json:"expiresAt,omitempty"`
	UserID      string     `json:"userId,omitempty"`
	Inserted    time.Time  `json:"insertedDate"`
}

// Shortlink limits (API.md "Short links").
const (
	MinSlugBytes = 1
	MaxSlugBytes = 64
)

// ValidSlug reports whether s may name a short link: 1 to 64 of
// A-Z a-z 0-9 - _ (safe in a URL path without escaping).
func ValidSlug(s string) bool {
	if len(s) < MinSlugBytes || len(s) > MaxSlugBytes {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// AddShortlink is the payload of OpAddShortlink.
type AddShortlink struct {
	Link Shortlink `json:"link"`
}

// DeleteShortlink is the payload of OpDeleteShortlink.
type DeleteShortlink struct {
	Slug string `json:"slug"`
	// Checked says the caller's folder rights were checked on DocumentID,
	// the document the link targeted then (empty: an external link); a
	// link that targets another by the time the command applies is
	// refused (409), so a check cannot go stale between the handler and
	// the write. Commands logged before Checked existed delete as they did.
	Checked    bool   `json:"checked,omitempty"`
	DocumentID string `json:"documentId,omitempty"`
}

// errShortlinkNotFound says nothing about other slugs.
var errShortlinkNotFound = &NotFoundError{Msg: "Not found"}

func applyAddShortlink(t *tx, c *Command) (any, error) {
	p, err := decode[AddShortlink](c)
	if err != nil {
		return nil, err
	}
	l := p.Link
	if !ValidSlug(l.Slug) {
		return nil, Invalid("slug", "invalid 'slug': 1 to 64 letters, digits, '-' or '_'")
	}
	if len(l.TargetURL) > MaxURLBytes {
		return nil, Invalid("targetUrl", fmt.Sprintf("'targetUrl' must be at most %d bytes", MaxURLBytes))
	}
	if ok, err := t.exists(shortlinkKey(l.Slug)); err != nil {
		return nil, err
	} else if ok {
		return nil, &ConflictError{Msg: fmt.Sprintf("slug '%s' already exists", l.Slug)}
	}
	if l.DocumentID != "" {
		d, err := getDoc(t, c.Site, l.DocumentID)
		if err != nil {
			return nil, err
		}
		if d.DeletedDate != nil {
			return nil, docNotFound(l.DocumentID)
		}
		l.DocInserted = d.InsertedDate
	}
	l.Site, l.UserID, l.Inserted = c.Site, c.User, c.At
	return nil, t.setJSON(shortlinkKey(l.Slug), l)
}

func applyDeleteShortlink(t *tx, c *Command) (any, error) {
	p, err := decode[DeleteShortlink](c)
	if err != nil {
		return nil, err
	}
	var l Shortlink
	switch err := t.getJSON(shortlinkKey(p.Slug), &l); {
	case errors.Is(err, ErrNotFound):
		return nil, errShortlinkNotFound
	case err != nil:
		return nil, err
	}
	if l.Site != c.Site {
		return nil, errShortlinkNotFound
	}
	if p.Checked && l.DocumentID != p.DocumentID {
		return nil, &ConflictError{Msg: fmt.Sprintf("shortlink '%s' changed, try again", p.Slug)}
	}
	return nil, t.del(shortlinkKey(p.Slug))
}

// GetShortlink returns the link of slug in site, live or not (DELETE
// /shortlinks/{slug} checks the rights on its document first); another
// site's link is not found.
func (d *DB) GetShortlink(site, slug string) (*Shortlink, error) {
	if !ValidSlug(slug) {
		return nil, errShortlinkNotFound
	}
	var l Shortlink
	err := d.view(func(t *tx) error { return t.getJSON(shortlinkKey(slug), &l) })
	if errors.Is(err, ErrNotFound) || err == nil && l.Site != site {
		return nil, errShortlinkNotFound
	}
	if err != nil {
		return nil, err
	}
	return &l, nil
}

// ResolveShortlink returns the link of slug that is still live at time
// at: not expired, and for a document link the same document still there
// and not soft-deleted. Anything else is a plain not found.
func (d *DB) ResolveShortlink(slug string, at time.Time) (*Shortlink, error) {
	if !ValidSlug(slug) {
		return nil, errShortlinkNotFound
	}
	var l Shortlink
	err := d.view(func(t *tx) error {
		if err := t.getJSON(shortlinkKey(slug), &l); err != nil {
			return err
		}
		if l.ExpiresAt != nil && !at.Before(*l.ExpiresAt) {
			return ErrNotFound
		}
		if l.DocumentID == "" {
			return nil
		}
		doc, err := getDoc(t, l.Site, l.DocumentID)
		if err != nil {
			return err
		}
		if doc.DeletedDate != nil || !doc.InsertedDate.Equal(l.DocInserted) || !doc.HasContent {
			return ErrNotFound
		}
		return nil
	})
	if errors.Is(err, ErrNotFound) {
		return nil, errShortlinkNotFound
	}
	if err != nil {
		return nil, err
	}
	return &l, nil
}
