package vocabulary

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"quire/server/internal/api"
	"quire/storage"
)

// The site locales (API.md "Sites and locales"; POST /sites is admin's).

// HandleGetLocales serves GET /sites/{siteId}/locales.
func (s *Handlers) HandleGetLocales(r *api.Request) error {
	return api.KeyPage(r, "lc", "locales", func(after string, limit int) ([]storage.Locale, string, error) {
		return s.DB.Locales(r.Site, after, limit)
	}, func(l *storage.Locale) map[string]any { return map[string]any{"locale": l.Locale} })
}

// HandleAddLocale serves POST /sites/{siteId}/locales {locale}.
func (s *Handlers) HandleAddLocale(r *api.Request) error {
	var in struct {
		Locale string `json:"locale"`
	}
	if err := r.ReadBody(&in, 16<<10); err != nil {
		return err
	}
	if in.Locale == "" {
		return api.Invalid("locale", "'locale' is required")
	}
	if _, err := s.Apply(r, storage.OpAddLocale, storage.AddLocale{Locale: in.Locale}); err != nil {
		return err
	}
	return r.Status(http.StatusCreated).JSON(api.MessageBody{Message: fmt.Sprintf("Locale '%s' saved", in.Locale)})
}

// HandleDeleteLocale serves DELETE /sites/{siteId}/locales/{locale}.
func (s *Handlers) HandleDeleteLocale(r *api.Request) error {
	l := api.PathParam(r, "locale")
	if _, err := s.Apply(r, storage.OpDeleteLocale, storage.DeleteLocale{Locale: l}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf("Locale '%s' deleted", l)})
}

func readResourceItem(r *api.Request, limit int) (storage.ResourceItem, error) {
	var in struct {
		ResourceItem *storage.ResourceItem `json:"resourceItem"`
	}
	if err := r.ReadBody(&in, limit); err != nil {
		return storage.ResourceItem{}, err
	}
	if in.ResourceItem == nil {
		return storage.ResourceItem{}, api.Invalid("resourceItem", "'resourceItem' is required")
	}
	it := *in.ResourceItem
	it.ItemType = strings.ToUpper(it.ItemType)
	if err := api.CheckErrors(storage.CheckResourceItem(&it)); err != nil {
		return it, err
	}
	it.ItemKey = storage.ItemKeyOf(&it)
	return it, nil
}

// HandleGetResourceItems serves GET /sites/{siteId}/locales/{locale}/resourceItems.
func (s *Handlers) HandleGetResourceItems(r *api.Request) error {
	l := api.PathParam(r, "locale")
	return api.KeyPage(r, "lr", "resourceItems", func(after string, limit int) ([]storage.ResourceItem, string, error) {
		return s.DB.ResourceItems(r.Site, l, after, limit)
	}, func(it *storage.ResourceItem) map[string]any { return resourceItemJSON(it) })
}

func resourceItemJSON(it *storage.ResourceItem) map[string]any {
	m := map[string]any{"itemType": it.ItemType, "itemKey": it.ItemKey, "localizedValue": it.LocalizedValue}
	for k, v := range map[string]string{"interfaceKey": it.InterfaceKey, "attributeKey": it.AttributeKey,
		"allowedValue": it.AllowedValue, "classificationId": it.ClassificationID} {
		if v != "" {
			m[k] = v
		}
	}
	return m
}

// HandleAddResourceItem serves POST .../resourceItems {resourceItem}.
func (s *Handlers) HandleAddResourceItem(r *api.Request) error {
	it, err := readResourceItem(r, 64<<10)
	if err != nil {
		return err
	}
	if _, err := s.Apply(r, storage.OpPutResourceItem, storage.PutResourceItem{Locale: api.PathParam(r, "locale"), Item: it, Create: true}); err != nil {
		return err
	}
	// 200, as the OpenAPI's AddLocaleResourceItem answers.
	return r.JSON(map[string]any{"itemKey": it.ItemKey})
}

// itemKeyParam is the {itemKey} path parameter, URL-decoded (keys hold
// '#').
func itemKeyParam(r *api.Request) string {
	k := r.Params("itemKey")
	if u, err := url.PathUnescape(k); err == nil {
		k = u
	}
	return strings.Clone(k)
}

// HandleGetResourceItem serves GET .../resourceItems/{itemKey}.
func (s *Handlers) HandleGetResourceItem(r *api.Request) error {
	it, err := s.DB.GetResourceItem(r.Site, api.PathParam(r, "locale"), itemKeyParam(r))
	if err != nil {
		return err
	}
	return r.JSON(map[string]any{"resourceItem": resourceItemJSON(it)})
}

// HandleSetResourceItem serves PUT .../resourceItems/{itemKey}: the body's
// fields must give the same key.
func (s *Handlers) HandleSetResourceItem(r *api.Request) error {
	it, err := readResourceItem(r, 64<<10)
	if err != nil {
		return err
	}
	if key := itemKeyParam(r); key != it.ItemKey {
		return api.Invalid("itemKey", fmt.Sprintf("the resource item's fields give the key '%s', not '%s'", it.ItemKey, key))
	}
	if _, err := s.Apply(r, storage.OpPutResourceItem, storage.PutResourceItem{Locale: api.PathParam(r, "locale"), Item: it}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "Resource item set"})
}

// HandleDeleteResourceItem serves DELETE .../resourceItems/{itemKey}.
func (s *Handlers) HandleDeleteResourceItem(r *api.Request) error {
	key := itemKeyParam(r)
	if _, err := s.Apply(r, storage.OpDeleteResourceItem, storage.DeleteResourceItem{Locale: api.PathParam(r, "locale"), ItemKey: key}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf("Resource item '%s' deleted", key)})
}

// localized adds localizedAllowedValues to an allowedValues answer when
// the request names a locale.
func (s *Handlers) localized(r *api.Request, out map[string]any, classification, attr string) error {
	l := r.Query("locale")
	if l == "" {
		return nil
	}
	if !storage.ValidLocale(l) {
		return api.Invalid("locale", "invalid 'locale'")
	}
	m, err := s.DB.LocalizedValues(r.Site, l, classification, attr)
	if err != nil {
		return err
	}
	out["localizedAllowedValues"] = m
	return nil
}
