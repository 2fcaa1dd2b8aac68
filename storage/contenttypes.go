package storage

import (
	"encoding/json"
	"fmt"
	"mime"
	"strings"
)

// A site's document.contentTypes (FormKiQ's DocumentConfigContentTypes:
// allowlist, denylist of MIME types) is enforced here, in the transaction
// that creates a document or commits its content, against the
// configuration as it is in that transaction (as maxDocuments is). They
// bound what callers bring: the outputs of a document's actions are not
// held to them.

// ContentTypeLists is a site's document.contentTypes.
type ContentTypeLists struct {
	Allowlist []string `json:"allowlist,omitempty"`
	Denylist  []string `json:"denylist,omitempty"`
}

// MaxContentTypeEntries bounds each list.
const MaxContentTypeEntries = 200

// Set reports whether either list has an entry.
func (l *ContentTypeLists) Set() bool {
	return l != nil && (len(l.Allowlist) > 0 || len(l.Denylist) > 0)
}

// ContentTypeLists reads the lists of the site configuration (nil: none).
func (c *SiteConfig) ContentTypeLists() *ContentTypeLists {
	if len(c.Document) == 0 {
		return nil
	}
	var d struct {
		ContentTypes *ContentTypeLists `json:"contentTypes"`
	}
	if json.Unmarshal(c.Document, &d) != nil || !d.ContentTypes.Set() {
		return nil
	}
	return d.ContentTypes
}

// NormalizeMediaType is the compared form of a content type: its media
// type without parameters, lower-cased ("" when it is not type/subtype).
func NormalizeMediaType(v string) string {
	mt, _, err := mime.ParseMediaType(strings.TrimSpace(v))
	if err != nil {
		return ""
	}
	typ, sub, ok := strings.Cut(mt, "/")
	if !ok || typ == "" || sub == "" || strings.Contains(sub, "/") {
		return ""
	}
	return mt
}

// CheckListEntry validates one list entry: type/subtype or type/*.
func CheckListEntry(v string) bool {
	return NormalizeMediaType(v) != "" && strings.TrimSpace(v) == strings.ToLower(strings.TrimSpace(v)) && !strings.Contains(v, ";")
}

// matchEntry reports whether the normalized media type mt matches a
// list entry (exact, or type/* for a whole type).
func matchEntry(entry, mt string) bool {
	entry = strings.ToLower(strings.TrimSpace(entry))
	if typ, ok := strings.CutSuffix(entry, "/*"); ok {
		return strings.HasPrefix(mt, typ+"/")
	}
	return entry == mt
}

// Allows answers whether content of type ct may be stored: not denied
// and, with an allow list, in it. A type that is not type/subtype is
// never allowed while a list is set.
func (l *ContentTypeLists) Allows(ct string) bool {
	if !l.Set() {
		return true
	}
	mt := NormalizeMediaType(ct)
	if mt == "" {
		return false
	}
	for _, e := range l.Denylist {
		if matchEntry(e, mt) {
			return false
		}
	}
	if len(l.Allowlist) == 0 {
		return true
	}
	for _, e := range l.Allowlist {
		if matchEntry(e, mt) {
			return true
		}
	}
	return false
}

// checkContentTypeAllowed refuses a document's content type the site's
// lists do not allow. ct is the declared (or detected) type; hasContent
// says content is stored with it now: content without a known type is
// refused while a list is set (it could be anything).
func checkContentTypeAllowed(t *tx, site, ct string, hasContent bool) error {
	if t.system {
		return nil // an action's outputs (OCR text, conversions): the lists bound what callers bring
	}
	c, err := siteConfigIn(t, site)
	if err != nil {
		return err
	}
	l := c.ContentTypeLists()
	if !l.Set() {
		return nil
	}
	if strings.TrimSpace(ct) == "" {
		if !hasContent {
			return nil // the content, and its type, come with the upload
		}
		return Invalid("contentType", "'contentType' is required: this site allows only listed content types (document.contentTypes)")
	}
	if !l.Allows(ct) {
		return Invalid("contentType", fmt.Sprintf("content type '%s' is not allowed on this site", ct))
	}
	return nil
}
