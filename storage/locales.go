package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Site locales and their localized resource items (FormKiQ's
// /sites/{siteId}/locales; API.md "Sites and locales"), used for the
// localizedAllowedValues of attributes, schemas and classifications.

// Locale is one locale of a site.
type Locale struct {
	Locale       string    `json:"locale"`
	InsertedDate time.Time `json:"insertedDate"`
}

// Resource item types (FormKiQ's LocaleResourceType).
const (
	ResourceInterface      = "INTERFACE"
	ResourceSchema         = "SCHEMA"
	ResourceClassification = "CLASSIFICATION"
)

// ResourceItem is a localized value of a locale: an interface text, or
// the label of an allowed value of a schema or classification attribute.
type ResourceItem struct {
	ItemType         string `json:"itemType"`
	ItemKey          string `json:"itemKey"`
	LocalizedValue   string `json:"localizedValue"`
	InterfaceKey     string `json:"interfaceKey,omitempty"`
	AttributeKey     string `json:"attributeKey,omitempty"`
	AllowedValue     string `json:"allowedValue,omitempty"`
	ClassificationID string `json:"classificationId,omitempty"`
}

// Locale limits.
const (
	MaxLocales       = 100
	MaxResourceItems = 10000 // per locale
)

var localeRE = regexp.MustCompile(`^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8}){0,3}$`)

// ValidLocale reports whether s looks like an ISO 639 language with
// optional ISO 15924 script and ISO 3166 region (en, en-US, zh-Hant-TW).
func ValidLocale(s string) bool { return len(s) <= 35 && localeRE.MatchString(s) }

// ItemKeyOf derives an item's key from its fields (FormKiQ's form):
// INTERFACE: the interface key; SCHEMA: schema#<attributeKey>#<value>;
// CLASSIFICATION: classification#<id>#<attributeKey>#<value>.
func ItemKeyOf(it *ResourceItem) string {
	switch it.ItemType {
	case ResourceInterface:
		return it.InterfaceKey
	case ResourceSchema:
		return "schema#" + it.AttributeKey + "#" + it.AllowedValue
	case ResourceClassification:
		return "classification#" + it.ClassificationID + "#" + it.AttributeKey + "#" + it.AllowedValue
	}
	return ""
}

// CheckResourceItem validates an item's fields for its type.
func CheckResourceItem(it *ResourceItem) []ValidationItem {
	var errs []ValidationItem
	need := func(key, v string) {
		if v == "" {
			errs = append(errs, ValidationItem{Key: key, Msg: fmt.Sprintf("'%s' is required", key)})
		}
	}
	switch it.ItemType {
	case ResourceInterface:
		need("interfaceKey", it.InterfaceKey)
	case ResourceSchema:
		need("attributeKey", it.AttributeKey)
		need("allowedValue", it.AllowedValue)
	case ResourceClassification:
		need("classificationId", it.ClassificationID)
		need("attributeKey", it.AttributeKey)
		need("allowedValue", it.AllowedValue)
	case "":
		need("itemType", "")
	default:
		errs = append(errs, ValidationItem{Key: "itemType", Msg: "invalid 'itemType': INTERFACE, SCHEMA or CLASSIFICATION"})
	}
	need("localizedValue", it.LocalizedValue)
	for k, v := range map[string]string{"interfaceKey": it.InterfaceKey, "attributeKey": it.AttributeKey, "classificationId": it.ClassificationID} {
		errs = append(errs, CheckText(k, v, MaxKeyBytes)...)
	}
	errs = append(errs, CheckText("allowedValue", it.AllowedValue, MaxValueBytes)...)
	errs = append(errs, CheckText("localizedValue", it.LocalizedValue, MaxValueBytes)...)
	return errs
}

// AddLocale is the payload of OpAddLocale.
type AddLocale struct {
	Locale string `json:"locale"`
}

// DeleteLocale is the payload of OpDeleteLocale (its items go too).
type DeleteLocale struct {
	Locale string `json:"locale"`
}

// PutResourceItem is the payload of OpPutResourceItem: Create refuses an
// existing key, otherwise the item at ItemKey is replaced.
type PutResourceItem struct {
	Locale string       `json:"locale"`
	Item   ResourceItem `json:"item"`
	Create bool         `json:"create,omitempty"`
}

// DeleteResourceItem is the payload of OpDeleteResourceItem.
type DeleteResourceItem struct {
	Locale  string `json:"locale"`
	ItemKey string `json:"itemKey"`
}

// AddSite is the payload of OpAddSite (POST /sites).
type AddSite struct {
	SiteID string `json:"siteId"`
	Title  string `json:"title,omitempty"`
}

func localeNotFound(l string) error {
	return &NotFoundError{Msg: fmt.Sprintf("locale '%s' not found", l)}
}

func applyAddLocale(t *tx, c *Command) (any, error) {
	p, err := decode[AddLocale](c)
	if err != nil {
		return nil, err
	}
	if !ValidLocale(p.Locale) {
		return nil, Invalid("locale", "invalid 'locale': an ISO 639 language, optionally with a script and an ISO 3166 region (en, en-US)")
	}
	if ok, err := t.exists(localeKey(c.Site, p.Locale)); err != nil {
		return nil, err
	} else if ok {
		return nil, &ConflictError{Msg: fmt.Sprintf("locale '%s' already exists", p.Locale)}
	}
	if t.count(localePrefix(c.Site)) >= MaxLocales {
		return nil, Invalid("locale", fmt.Sprintf("a site has at most %d locales", MaxLocales))
	}
	if err := t.setJSON(localeKey(c.Site, p.Locale), Locale{Locale: p.Locale, InsertedDate: c.At}); err != nil {
		return nil, err
	}
	return nil, ensureSite(t, c)
}

func applyDeleteLocale(t *tx, c *Command) (any, error) {
	p, err := decode[DeleteLocale](c)
	if err != nil {
		return nil, err
	}
	if ok, err := t.exists(localeKey(c.Site, p.Locale)); err != nil {
		return nil, err
	} else if !ok {
		return nil, localeNotFound(p.Locale)
	}
	for _, k := range t.keys(resourcePrefix(c.Site, p.Locale)) {
		if err := t.del(k); err != nil {
			return nil, err
		}
	}
	return nil, t.del(localeKey(c.Site, p.Locale))
}

func applyPutResourceItem(t *tx, c *Command) (any, error) {
	p, err := decode[PutResourceItem](c)
	if err != nil {
		return nil, err
	}
	if ok, err := t.exists(localeKey(c.Site, p.Locale)); err != nil {
		return nil, err
	} else if !ok {
		return nil, localeNotFound(p.Locale)
	}
	it := p.Item
	if errs := CheckResourceItem(&it); len(errs) > 0 {
		return nil, &ValidationError{Items: errs}
	}
	if key := ItemKeyOf(&it); it.ItemKey != key {
		return nil, Invalid("itemKey", fmt.Sprintf("the item's key is '%s'", key))
	}
	ok, err := t.exists(resourceKey(c.Site, p.Locale, it.ItemKey))
	if err != nil {
		return nil, err
	}
	if p.Create && ok {
		return nil, &ConflictError{Msg: fmt.Sprintf("resource item '%s' already exists", it.ItemKey)}
	}
	if !ok && t.count(resourcePrefix(c.Site, p.Locale)) >= MaxResourceItems {
		return nil, Invalid("resourceItem", fmt.Sprintf("a locale has at most %d resource items", MaxResourceItems))
	}
	return it.ItemKey, t.setJSON(resourceKey(c.Site, p.Locale, it.ItemKey), it)
}

func applyDeleteResourceItem(t *tx, c *Command) (any, error) {
	p, err := decode[DeleteResourceItem](c)
	if err != nil {
		return nil, err
	}
	k := resourceKey(c.Site, p.Locale, p.ItemKey)
	if ok, err := t.exists(k); err != nil {
		return nil, err
	} else if !ok {
		return nil, &NotFoundError{Msg: fmt.Sprintf("resource item '%s' not found", p.ItemKey)}
	}
	return nil, t.del(k)
}

func applyAddSite(t *tx, c *Command) (any, error) {
	p, err := decode[AddSite](c)
	if err != nil {
		return nil, err
	}
	if !CheckSiteID(p.SiteID) || strings.ContainsAny(p.SiteID, " ") {
		return nil, Invalid("id", "invalid site 'id'")
	}
	if err := limitsErr(CheckText("title", p.Title, MaxValueBytes)); err != nil {
		return nil, err
	}
	if ok, err := t.exists(siteKey(p.SiteID)); err != nil {
		return nil, err
	} else if ok {
		return nil, &ConflictError{Msg: fmt.Sprintf("site '%s' already exists", p.SiteID)}
	}
	return nil, t.setJSON(siteKey(p.SiteID), Site{SiteID: p.SiteID, Title: p.Title, InsertedDate: c.At})
}

// Locales lists a site's locales after after.
func (d *DB) Locales(site, after string, limit int) ([]Locale, string, error) {
	return listPage(d, localePrefix(site), after, limit, func(l *Locale) string { return l.Locale })
}

// ResourceItems lists a locale's items by key after after.
func (d *DB) ResourceItems(site, locale, after string, limit int) ([]ResourceItem, string, error) {
	var out []ResourceItem
	var next string
	err := d.view(func(t *tx) error {
		if ok, err := t.exists(localeKey(site, locale)); err != nil {
			return err
		} else if !ok {
			return localeNotFound(locale)
		}
		var err error
		out, next, err = scanPage(t, resourcePrefix(site, locale), after, limit, func(it *ResourceItem) string { return it.ItemKey })
		return err
	})
	return out, next, err
}

// GetResourceItem returns one item.
func (d *DB) GetResourceItem(site, locale, key string) (*ResourceItem, error) {
	var it ResourceItem
	err := d.view(func(t *tx) error { return t.getJSON(resourceKey(site, locale, key), &it) })
	if errors.Is(err, ErrNotFound) {
		return nil, &NotFoundError{Msg: fmt.Sprintf("resource item '%s' not found", key)}
	}
	return &it, err
}

// LocalizedValues maps the allowed values of an attribute to their
// labels in locale: of the site schema (classification ""), or of a
// classification.
func (d *DB) LocalizedValues(site, locale, classification, attr string) (map[string]string, error) {
	out := map[string]string{}
	prefix := "schema#" + attr + "#"
	if classification != "" {
		prefix = "classification#" + classification + "#" + attr + "#"
	}
	err := d.view(func(t *tx) error {
		return t.each(append(resourcePrefix(site, locale), prefix...), func(_, v []byte) error {
			var it ResourceItem
			if err := json.Unmarshal(v, &it); err != nil {
				return err
			}
			out[it.AllowedValue] = it.LocalizedValue
			return nil
		})
	})
	return out, err
}

// SiteTitles returns the titles of sites made with POST /sites.
func (d *DB) SiteTitles() (map[string]string, error) {
	out := map[string]string{}
	err := d.view(func(t *tx) error {
		return t.each([]byte(pfxSite), func(_, v []byte) error {
			var s Site
			if json.Unmarshal(v, &s) == nil && s.Title != "" {
				out[s.SiteID] = s.Title
			}
			return nil
		})
	})
	return out, err
}
