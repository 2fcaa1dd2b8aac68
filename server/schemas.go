package server

import (
	"fmt"
	"net/http"

	"quire/storage"
)

type schemaIn struct {
	Name       *string                   `json:"name"`
	Attributes *storage.SchemaAttributes `json:"attributes"`
}

func (in *schemaIn) schema() storage.Schema {
	s := storage.Schema{Name: deref(in.Name)}
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
		"required":                  nonNil(a.Required),
		"optional":                  nonNil(a.Optional),
		"allowAdditionalAttributes": allow,
	}
	if len(a.CompositeKeys) > 0 {
		m["compositeKeys"] = a.CompositeKeys
	}
	return m
}

// handleGetSitesSchema serves GET /sites/{siteId}/schema/document.
func (s *Server) handleGetSitesSchema(r *reqCtx) error {
	sc, err := s.db.SiteSchema(r.site)
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
func (s *Server) localizedSchema(r *reqCtx, a *storage.SchemaAttributes, classification string) (map[string]any, error) {
	m := schemaAttributesJSON(a)
	l := r.Query("locale")
	if l == "" {
		return m, nil
	}
	if !storage.ValidLocale(l) {
		return nil, invalid("locale", "invalid 'locale'")
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
			lv, err := s.db.LocalizedValues(r.site, l, classification, at.AttributeKey)
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

// handleSetSitesSchema serves PUT /sites/{siteId}/schema/document.
func (s *Server) handleSetSitesSchema(r *reqCtx) error {
	var in schemaIn
	if err := r.readBody(&in, s.deps.MaxBodyBytes); err != nil {
		return err
	}
	if _, err := s.apply(r, storage.OpSetSchema, storage.SetSchema{Schema: in.schema()}); err != nil {
		return err
	}
	return r.JSON(messageBody{"Sites Schema set"})
}

// handleGetSitesSchemaAllowedValues serves GET
// /sites/{siteId}/schema/document/attributes/{key}/allowedValues.
func (s *Server) handleGetSitesSchemaAllowedValues(r *reqCtx) error {
	vals, err := s.db.AllowedValues(r.site, pathParam(r, "key"), "", false)
	if err != nil {
		return err
	}
	out := map[string]any{"allowedValues": vals}
	if err := s.localized(r, out, "", pathParam(r, "key")); err != nil {
		return err
	}
	return r.JSON(out)
}

// handleGetClassificationAllowedValues serves GET
// /sites/{siteId}/classifications/{classificationId}/attributes/{key}/allowedValues.
func (s *Server) handleGetClassificationAllowedValues(r *reqCtx) error {
	vals, err := s.db.AllowedValues(r.site, pathParam(r, "key"), pathParam(r, "classificationId"), false)
	if err != nil {
		return err
	}
	out := map[string]any{"allowedValues": vals}
	if err := s.localized(r, out, pathParam(r, "classificationId"), pathParam(r, "key")); err != nil {
		return err
	}
	return r.JSON(out)
}

func (s *Server) readClassification(r *reqCtx) (storage.Schema, error) {
	var b struct {
		Classification *schemaIn `json:"classification"`
	}
	if err := r.readBody(&b, s.deps.MaxBodyBytes); err != nil {
		return storage.Schema{}, err
	}
	if b.Classification == nil {
		return storage.Schema{}, invalid("classification", "'classification' is required")
	}
	return b.Classification.schema(), nil
}

// handleAddClassification serves POST /sites/{siteId}/classifications.
func (s *Server) handleAddClassification(r *reqCtx) error {
	sc, err := s.readClassification(r)
	if err != nil {
		return err
	}
	id := r.newID()
	p := storage.SetClassification{Create: true, Classification: storage.Classification{ClassificationID: id, Schema: sc}}
	if _, err := s.apply(r, storage.OpSetClassification, p); err != nil {
		return err
	}
	return r.Status(http.StatusOK).JSON(map[string]any{"classificationId": id})
}

// handleSetClassification serves PUT /sites/{siteId}/classifications/{classificationId}.
func (s *Server) handleSetClassification(r *reqCtx) error {
	sc, err := s.readClassification(r)
	if err != nil {
		return err
	}
	id := pathParam(r, "classificationId")
	p := storage.SetClassification{Classification: storage.Classification{ClassificationID: id, Schema: sc}}
	if _, err := s.apply(r, storage.OpSetClassification, p); err != nil {
		return err
	}
	return r.JSON(messageBody{"Set Classification"})
}

// handleGetClassification serves GET /sites/{siteId}/classifications/{classificationId}.
func (s *Server) handleGetClassification(r *reqCtx) error {
	c, err := s.db.GetClassification(r.site, pathParam(r, "classificationId"))
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
		"insertedDate":     formatDate(c.InsertedDate),
		"attributes":       attrs,
	}})
}

// handleGetClassifications serves GET /sites/{siteId}/classifications.
func (s *Server) handleGetClassifications(r *reqCtx) error {
	return keyPage(r, "cl", "classifications", func(after string, limit int) ([]storage.Classification, string, error) {
		return s.db.Classifications(r.site, after, limit)
	}, func(c *storage.Classification) map[string]any {
		return map[string]any{
			"classificationId": c.ClassificationID,
			"name":             c.Schema.Name,
			"userId":           c.UserID,
			"insertedDate":     formatDate(c.InsertedDate),
		}
	})
}

// handleDeleteClassification serves DELETE /sites/{siteId}/classifications/{classificationId}.
func (s *Server) handleDeleteClassification(r *reqCtx) error {
	id := pathParam(r, "classificationId")
	if _, err := s.apply(r, storage.OpDeleteClassification, storage.DeleteClassification{ClassificationID: id}); err != nil {
		return err
	}
	return r.JSON(messageBody{fmt.Sprintf("Classification '%s' deleted", id)})
}
