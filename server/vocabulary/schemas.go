package vocabulary

import (
	"fmt"
	"net/http"

	"quire/server/internal/api"
	"quire/storage"
)

type schemaIn struct {
	Name       *string                   `json:"name"`
	Attributes *storage.SchemaAttributes `json:"attributes"`
}

func (in *schemaIn) schema() storage.Schema {
	s := storage.Schema{Name: api.Deref(in.Name)}
	if in.Attributes != nil {
		s.Attributes = *in.Attributes
	}
	return s
}

func schemaAttributesJSON(a *storage.SchemaAttributes) map[string]any {
	allow := true
	if a.AllowAdditionalAttributes != nil {
		allow = *a.AllowAdditionalAttributes
	}
	m := map[string]any{
		"required":                  api.NonNil(a.Required),
		"optional":                  api.NonNil(a.Optional),
		"allowAdditionalAttributes": allow,
	}
	if len(a.CompositeKeys) > 0 {
		m["compositeKeys"] = a.CompositeKeys
	}
	return m
}

// HandleGetSitesSchema serves GET /sites/{siteId}/schema/document.
func (s *Handlers) HandleGetSitesSchema(r *api.Request) error {
	sc, err := s.DB.SiteSchema(r.Site)
	if err != nil {
		return err
	}
	attrs, err := s.localizedSchema(r, &sc.Attributes, "")
	if err != nil {
		return err
	}
	return r.JSON(map[string]any{"name": sc.Name, "attributes": attrs})
}

// localizedAttr is a schema attribute with the labels of its allowed
// values in the request's locale.
type localizedAttr struct {
	storage.SchemaAttribute
	LocalizedAllowedValues map[string]string `json:"localizedAllowedValues,omitempty"`
}

// localizedSchema is schemaAttributesJSON, with localizedAllowedValues on
// attributes that have allowed values when the request names a ?locale=
// (the SCHEMA or, for a classification, CLASSIFICATION resource items).
func (s *Handlers) localizedSchema(r *api.Request, a *storage.SchemaAttributes, classification string) (map[string]any, error) {
	m := schemaAttributesJSON(a)
	l := r.Query("locale")
	if l == "" {
		return m, nil
	}
	if !storage.ValidLocale(l) {
		return nil, api.Invalid("locale", "invalid 'locale'")
	}
	for _, part := range []struct {
		key   string
		attrs []storage.SchemaAttribute
	}{{"required", a.Required}, {"optional", a.Optional}} {
		out := make([]localizedAttr, len(part.attrs))
		for i, at := range part.attrs {
			out[i].SchemaAttribute = at
			if len(at.AllowedValues) == 0 {
				continue
			}
			lv, err := s.DB.LocalizedValues(r.Site, l, classification, at.AttributeKey)
			if err != nil {
				return nil, err
			}
			if len(lv) > 0 {
				out[i].LocalizedAllowedValues = lv
			}
		}
		m[part.key] = out
	}
	return m, nil
}

// HandleSetSitesSchema serves PUT /sites/{siteId}/schema/document.
func (s *Handlers) HandleSetSitesSchema(r *api.Request) error {
	var in schemaIn
	if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	if _, err := s.Apply(r, storage.OpSetSchema, storage.SetSchema{Schema: in.schema()}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "Sites Schema set"})
}

// HandleGetSitesSchemaAllowedValues serves GET
// /sites/{siteId}/schema/document/attributes/{key}/allowedValues.
func (s *Handlers) HandleGetSitesSchemaAllowedValues(r *api.Request) error {
	vals, err := s.DB.AllowedValues(r.Site, api.PathParam(r, "key"), "", false)
	if err != nil {
		return err
	}
	out := map[string]any{"allowedValues": vals}
	if err := s.localized(r, out, "", api.PathParam(r, "key")); err != nil {
		return err
	}
	return r.JSON(out)
}

// HandleGetClassificationAllowedValues serves GET
// /sites/{siteId}/classifications/{classificationId}/attributes/{key}/allowedValues.
func (s *Handlers) HandleGetClassificationAllowedValues(r *api.Request) error {
	vals, err := s.DB.AllowedValues(r.Site, api.PathParam(r, "key"), api.PathParam(r, "classificationId"), false)
	if err != nil {
		return err
	}
	out := map[string]any{"allowedValues": vals}
	if err := s.localized(r, out, api.PathParam(r, "classificationId"), api.PathParam(r, "key")); err != nil {
		return err
	}
	return r.JSON(out)
}

func (s *Handlers) readClassification(r *api.Request) (storage.Schema, error) {
	var b struct {
		Classification *schemaIn `json:"classification"`
	}
	if err := r.ReadBody(&b, s.Deps.MaxBodyBytes); err != nil {
		return storage.Schema{}, err
	}
	if b.Classification == nil {
		return storage.Schema{}, api.Invalid("classification", "'classification' is required")
	}
	return b.Classification.schema(), nil
}

// HandleAddClassification serves POST /sites/{siteId}/classifications.
func (s *Handlers) HandleAddClassification(r *api.Request) error {
	sc, err := s.readClassification(r)
	if err != nil {
		return err
	}
	id := r.NewID()
	p := storage.SetClassification{Create: true, Classification: storage.Classification{ClassificationID: id, Schema: sc}}
	if _, err := s.Apply(r, storage.OpSetClassification, p); err != nil {
		return err
	}
	return r.Status(http.StatusOK).JSON(map[string]any{"classificationId": id})
}

// HandleSetClassification serves PUT /sites/{siteId}/classifications/{classificationId}.
func (s *Handlers) HandleSetClassification(r *api.Request) error {
	sc, err := s.readClassification(r)
	if err != nil {
		return err
	}
	id := api.PathParam(r, "classificationId")
	p := storage.SetClassification{Classification: storage.Classification{ClassificationID: id, Schema: sc}}
	if _, err := s.Apply(r, storage.OpSetClassification, p); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "Set Classification"})
}

// HandleGetClassification serves GET /sites/{siteId}/classifications/{classificationId}.
func (s *Handlers) HandleGetClassification(r *api.Request) error {
	c, err := s.DB.GetClassification(r.Site, api.PathParam(r, "classificationId"))
	if err != nil {
		return err
	}
	attrs, err := s.localizedSchema(r, &c.Schema.Attributes, c.ClassificationID)
	if err != nil {
		return err
	}
	return r.JSON(map[string]any{"classification": map[string]any{
		"classificationId": c.ClassificationID,
		"name":             c.Schema.Name,
		"userId":           c.UserID,
		"insertedDate":     api.FormatDate(c.InsertedDate),
		"attributes":       attrs,
	}})
}

// HandleGetClassifications serves GET /sites/{siteId}/classifications.
func (s *Handlers) HandleGetClassifications(r *api.Request) error {
	return api.KeyPage(r, "cl", "classifications", func(after string, limit int) ([]storage.Classification, string, error) {
		return s.DB.Classifications(r.Site, after, limit)
	}, func(c *storage.Classification) map[string]any {
		return map[string]any{
			"classificationId": c.ClassificationID,
			"name":             c.Schema.Name,
			"userId":           c.UserID,
			"insertedDate":     api.FormatDate(c.InsertedDate),
		}
	})
}

// HandleDeleteClassification serves DELETE /sites/{siteId}/classifications/{classificationId}.
func (s *Handlers) HandleDeleteClassification(r *api.Request) error {
	id := api.PathParam(r, "classificationId")
	if _, err := s.Apply(r, storage.OpDeleteClassification, storage.DeleteClassification{ClassificationID: id}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf("Classification '%s' deleted", id)})
}
