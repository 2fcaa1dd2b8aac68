package storage

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// A site's maxDocuments and maxContentLengthBytes are enforced here, in the
// transaction that creates documents or commits content, so that no two
// concurrent requests can both squeeze under a limit.

// MsgMaxDocuments is FormKiQ's answer when a site is at its maxDocuments.
const MsgMaxDocuments = "Max Number of Documents reached"

// ParseSiteLimit reads a limit of the site configuration (FormKiQ keeps
// them as strings): "" is no limit; anything but a positive integer is
// invalid.
func ParseSiteLimit(v string) (int64, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, true
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil && n > 0
}

// ContentLimit is the site's maxContentLengthBytes (0: none).
func (c *SiteConfig) ContentLimit() int64 {
	n, _ := ParseSiteLimit(c.MaxContentLengthBytes)
	return n
}

// DocumentLimit is the site's maxDocuments (0: none).
func (c *SiteConfig) DocumentLimit() int64 {
	n, _ := ParseSiteLimit(c.MaxDocuments)
	return n
}

// ContentTooLarge is the validation error for content over a site's
// maxContentLengthBytes.
func ContentTooLarge(limit int64) *ValidationError {
	return Invalid("contentLength", fmt.Sprintf("'contentLength' cannot exceed %d bytes", limit))
}

// siteConfigIn reads a site's configuration inside t. Every transaction
// that creates or purges documents reads it: when a limit is set or
// removed concurrently, Badger's conflict check makes it retry with the
// new configuration.
func siteConfigIn(t *tx, site string) (*SiteConfig, error) {
	var c SiteConfig
	if err := t.getJSON(siteConfigKey(site), &c); err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	return &c, nil
}

// checkContentSize refuses content larger than the site's limit.
func checkContentSize(t *tx, site string, size int64) error {
	c, err := siteConfigIn(t, site)
	if err != nil {
		return err
	}
	if l := c.ContentLimit(); l > 0 && size > l {
		return ContentTooLarge(l)
	}
	return nil
}

// countDocuments changes the site's document count by delta and, when
// delta adds documents, refuses to go over maxDocuments. Every document
// record counts: children, and soft-deleted documents until they are
// purged (they still hold their content and can be restored).
//
// The count is only kept while the site has a limit (as FormKiQ does), so
// that sites without one do not serialize every create on a shared key.
// When a limit is set, the first transaction that needs the count takes
// it by walking the site's document keys; it must run before the
// transaction writes documents (the walk sees pending writes). Setting
// or removing the limit deletes the count, so it is always taken anew
// under the configuration that is then in force.
func countDocuments(t *tx, site string, delta int64) error {
	c, err := siteConfigIn(t, site)
	if err != nil {
		return err
	}
	limit := c.DocumentLimit()
	if limit == 0 {
		return nil
	}
	var n int64
	raw, err := t.getRaw(docCountKey(site))
	switch {
	case errors.Is(err, ErrNotFound):
		n = int64(t.count(docPrefix(site)))
	case err != nil:
		return err
	default:
		if n, err = strconv.ParseInt(string(raw), 10, 64); err != nil {
			return fmt.Errorf("document count of site %q: %w", site, err)
		}
	}
	if delta > 0 && n+delta > limit {
		return &ValidationError{Items: []ValidationItem{{Msg: MsgMaxDocuments}}}
	}
	return t.set(docCountKey(site), []byte(strconv.FormatInt(max(n+delta, 0), 10)))
}
