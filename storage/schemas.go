package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// SchemaAttribute is a required or optional attribute of a schema.
type SchemaAttribute struct {
	AttributeKey        string   `json:"attributeKey"`
	DefaultValue        string   `json:"defaultValue,omitempty"`
	DefaultValues       []string `json:"defaultValues,omitempty"`
	AllowedValues       []string `json:"allowedValues,omitempty"`
	MinNumberOfValues   *float64 `json:"minNumberOfValues,omitempty"`
	MaxNumberOfValues   *float64 `json:"maxNumberOfValues,omitempty"`
	DefaultEntityTypeID string   `json:"defaultEntityTypeId,omitempty"`
	DefaultEntityID     string   `json:"defaultEntityId,omitempty"`
}

// CompositeKey is a list of attribute keys searched together.
type CompositeKey struct {
	AttributeKeys []string `json:"attributeKeys"`
}

// SchemaAttributes is the attribute part of a site or classification
// schema (FormKiQ SetSchemaAttributes).
type SchemaAttributes struct {
	CompositeKeys             []CompositeKey    `json:"compositeKeys,omitempty"`
	Required                  []SchemaAttribute `json:"required,omitempty"`
	Optional                  []SchemaAttribute `json:"optional,omitempty"`
	AllowAdditionalAttributes *bool             `json:"allowAdditionalAttributes,omitempty"`
}

// Schema is a site schema, or the schema of a classification.
type Schema struct {
	Name       string           `json:"name,omitempty"`
	Attributes SchemaAttributes `json:"attributes"`
}

// listsKey reports whether key is a required or optional attribute.
func (s *Schema) listsKey(key string) bool {
	for _, l := range [][]SchemaAttribute{s.Attributes.Required, s.Attributes.Optional} {
		for _, r := range l {
			if r.AttributeKey == key {
				return true
			}
		}
	}
	return false
}

func (s *Schema) usesKey(key string) bool {
	for _, r := range s.Attributes.Required {
		if r.AttributeKey == key {
			return true
		}
	}
	for _, r := range s.Attributes.Optional {
		if r.AttributeKey == key {
			return true
		}
	}
	for _, ck := range s.Attributes.CompositeKeys {
		if slices.Contains(ck.AttributeKeys, key) {
			return true
		}
	}
	return false
}

// Classification is a named schema that applies to the documents that
// carry its classificationId.
type Classification struct {
	ClassificationID string    `json:"classificationId"`
	Schema           Schema    `json:"schema"`
	InsertedDate     time.Time `json:"insertedDate"`
	UserID           string    `json:"userId,omitempty"`
}

// eachSchema calls fn with the site schema and every classification schema
// until fn returns false.
func eachSchema(t *tx, site string, fn func(*Schema) bool) error {
	var s Schema
	err := t.getJSON(schemaKey(site), &s)
	switch {
	case err == nil:
		if !fn(&s) {
			return nil
		}
	case !errors.Is(err, ErrNotFound):
		return err
	}
	err = t.each(classificationPrefix(site), func(_, v []byte) error {
		var c Classification
		if err := json.Unmarshal(v, &c); err != nil {
			return err
		}
		if !fn(&c.Schema) {
			return errStop
		}
		return nil
	})
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

// checkSchemaDefinition validates a schema against the site's attribute
// definitions; the error keys follow FormKiQ's.
func checkSchemaDefinition(t *tx, site string, s *Schema) error {
	var items []ValidationItem
	fail := func(key, msg string) { items = append(items, ValidationItem{Key: key, Msg: msg}) }
	if s.Name == "" && s != nil {
		fail("name", "'name' is required")
	}
	at := &s.Attributes
	if len(at.Required) == 0 && len(at.Optional) == 0 && len(at.CompositeKeys) == 0 {
		fail("attributes", "'attributes' is required")
	}
	seen := map[string]bool{}
	check := func(list []SchemaAttribute) error {
		for _, a := range list {
			if a.AttributeKey == "" {
				fail("attributeKey", "'attributeKey' is required")
				continue
			}
			if seen[a.AttributeKey] {
				fail(a.AttributeKey, fmt.Sprintf("attribute '%s' is listed more than once", a.AttributeKey))
				continue
			}
			seen[a.AttributeKey] = true
			def, err := lookupDef(t, site, a.AttributeKey)
			if errors.Is(err, ErrNotFound) {
				fail(a.AttributeKey, msgAttrNotFound(a.AttributeKey))
				continue
			}
			if err != nil {
				return err
			}
			if a.MinNumberOfValues != nil && a.MaxNumberOfValues != nil && *a.MinNumberOfValues > *a.MaxNumberOfValues {
				fail(a.AttributeKey, "'minNumberOfValues' cannot be greater than 'maxNumberOfValues'")
			}
			if (a.DefaultEntityTypeID != "") != (a.DefaultEntityID != "") {
				fail(a.AttributeKey, "'defaultEntityTypeId' and 'defaultEntityId' must be set together")
			}
			if def.DataType == DataEntity && a.DefaultEntityID != "" {
				_, msg, err := resolveEntity(t, site, EntityRefInput{EntityTypeID: a.DefaultEntityTypeID, EntityID: a.DefaultEntityID})
				if err != nil {
					return err
				}
				if msg != "" {
					fail(a.AttributeKey, msg)
				}
			}
			if def.DataType == DataKeyOnly && (a.DefaultValue != "" || len(a.DefaultValues) > 0 || len(a.AllowedValues) > 0) {
				fail(a.AttributeKey, "KEY_ONLY attribute cannot have default or allowed values")
			}
			for _, v := range append(collect(nil, a.DefaultValues), a.DefaultValue) {
				if v != "" && len(a.AllowedValues) > 0 && !slices.Contains(a.AllowedValues, v) {
					fail(a.AttributeKey, fmt.Sprintf("default value '%s' is not an allowed value", v))
				}
			}
		}
		return nil
	}
	if err := check(at.Required); err != nil {
		return err
	}
	if err := check(at.Optional); err != nil {
		return err
	}
	for _, ck := range at.CompositeKeys {
		if len(ck.AttributeKeys) < 2 {
			fail("compositeKeys", "compositeKeys must have at least 2 attribute keys")
			continue
		}
		for _, k := range ck.AttributeKeys {
			def, err := lookupDef(t, site, k)
			if errors.Is(err, ErrNotFound) {
				fail(k, msgAttrNotFound(k))
				continue
			}
			if err != nil {
				return err
			}
			if def.DataType != DataString && def.DataType != DataDate && def.DataType != DataNumber {
				fail(k, fmt.Sprintf("composite key attribute '%s' must be STRING, NUMBER or DATE", k))
			}
		}
	}
	if len(items) > 0 {
		return &ValidationError{Items: items}
	}
	return nil
}

// checkSchemaFields bounds the fields of a schema (RulesDefinitionFields):
// its name, at most MaxAttributesPerRequest required and optional
// attributes and composite keys (a document gets no more attributes in a
// request), each attribute's defaults and allowed values. The attribute
// keys are bounded already: each names an existing definition.
func checkSchemaFields(c *Command, s *Schema) error {
	f := newDefFields(c)
	f.name("name", s.Name)
	at := &s.Attributes
	f.count("required", len(at.Required), MaxAttributesPerRequest)
	f.count("optional", len(at.Optional), MaxAttributesPerRequest)
	f.count("compositeKeys", len(at.CompositeKeys), MaxAttributesPerRequest)
	if f.err() != nil {
		return f.err()
	}
	for _, ck := range at.CompositeKeys {
		f.count("attributeKeys", len(ck.AttributeKeys), MaxAttributesPerRequest)
	}
	for _, l := range [][]SchemaAttribute{at.Required, at.Optional} {
		for _, a := range l {
			f.value("defaultValue", a.DefaultValue)
			f.values("defaultValues", a.DefaultValues, MaxValuesPerKey)
			f.values("allowedValues", a.AllowedValues, MaxAllowedValues)
		}
	}
	return f.err()
}

// SetSchema is the payload of OpSetSchema.
type SetSchema struct {
	Schema Schema `json:"schema"`
}

// SetClassification is the payload of OpSetClassification (create or
// replace).
type SetClassification struct {
	Classification Classification `json:"classification"`
	// Create refuses an existing id; otherwise the id must exist.
	Create bool `json:"create,omitempty"`
}

// DeleteClassification is the payload of OpDeleteClassification.
type DeleteClassification struct {
	ClassificationID string `json:"classificationId"`
}

func applySetSchema(t *tx, c *Command) (any, error) {
	p, err := decode[SetSchema](c)
	if err != nil {
		return nil, err
	}
	if err := checkSchemaDefinition(t, c.Site, &p.Schema); err != nil {
		return nil, err
	}
	if err := checkSchemaFields(c, &p.Schema); err != nil {
		return nil, err
	}
	if err := t.setJSON(schemaKey(c.Site), p.Schema); err != nil {
		return nil, err
	}
	return nil, ensureSite(t, c)
}

func classificationNotFound(id string) error {
	return &NotFoundError{Msg: fmt.Sprintf("Classification '%s' not found", id)}
}

func applySetClassification(t *tx, c *Command) (any, error) {
	p, err := decode[SetClassification](c)
	if err != nil {
		return nil, err
	}
	cl := p.Classification
	if err := checkName("name", cl.Schema.Name); err != nil {
		return nil, err
	}
	k := classificationKey(c.Site, cl.ClassificationID)
	var old Classification
	err = t.getJSON(k, &old)
	switch {
	case err == nil && p.Create:
		return nil, &ConflictError{Msg: fmt.Sprintf("Classification '%s' already exists", cl.ClassificationID)}
	case errors.Is(err, ErrNotFound) && !p.Create:
		return nil, classificationNotFound(cl.ClassificationID)
	case err != nil && !errors.Is(err, ErrNotFound):
		return nil, err
	}
	if err := checkSchemaDefinition(t, c.Site, &cl.Schema); err != nil {
		return nil, err
	}
	if err := checkSchemaFields(c, &cl.Schema); err != nil {
		return nil, err
	}
	// Names are unique within a site.
	dup := false
	if err := t.each(classificationPrefix(c.Site), func(_, v []byte) error {
		var o Classification
		if err := json.Unmarshal(v, &o); err != nil {
			return err
		}
		if o.ClassificationID != cl.ClassificationID && o.Schema.Name == cl.Schema.Name {
			dup = true
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if dup {
		return nil, Invalid("name", fmt.Sprintf("Classification '%s' already exists", cl.Schema.Name))
	}
	if p.Create {
		cl.InsertedDate, cl.UserID = c.At, c.User
	} else {
		cl.InsertedDate, cl.UserID = old.InsertedDate, old.UserID
	}
	if err := t.setJSON(k, cl); err != nil {
		return nil, err
	}
	return nil, ensureSite(t, c)
}

func applyDeleteClassification(t *tx, c *Command) (any, error) {
	p, err := decode[DeleteClassification](c)
	if err != nil {
		return nil, err
	}
	k := classificationKey(c.Site, p.ClassificationID)
	ok, err := t.exists(k)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, classificationNotFound(p.ClassificationID)
	}
	inMapping, err := classificationInMapping(t, c.Site, p.ClassificationID)
	if err != nil {
		return nil, err
	}
	if inMapping || len(t.firstKey(attrIndexValuePrefix(c.Site, KeyClassification, p.ClassificationID))) > 0 {
		return nil, Invalid("classificationId", fmt.Sprintf("Classification '%s' is in use, cannot be deleted", p.ClassificationID))
	}
	return nil, t.del(k)
}

// SiteSchema returns the site schema.
func (d *DB) SiteSchema(site string) (*Schema, error) {
	var s Schema
	err := d.view(func(t *tx) error { return t.getJSON(schemaKey(site), &s) })
	if errors.Is(err, ErrNotFound) {
		return nil, &NotFoundError{Msg: "Sites Schema not found"}
	}
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// GetClassification returns one classification.
func (d *DB) GetClassification(site, id string) (*Classification, error) {
	var c Classification
	err := d.view(func(t *tx) error { return t.getJSON(classificationKey(site, id), &c) })
	if errors.Is(err, ErrNotFound) {
		return nil, classificationNotFound(id)
	}
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// Classifications lists a site's classifications by id after after.
func (d *DB) Classifications(site, after string, limit int) ([]Classification, string, error) {
	return listPage(d, classificationPrefix(site), after, limit, func(c *Classification) string { return c.ClassificationID })
}

// AllowedValues returns the allowed values of key across the site schema
// and, when classification is not empty, that classification only; with
// all set, across every classification too.
func (d *DB) AllowedValues(site, key, classification string, all bool) ([]string, error) {
	var out []string
	add := func(s *Schema) {
		for _, l := range [][]SchemaAttribute{s.Attributes.Required, s.Attributes.Optional} {
			for _, a := range l {
				if a.AttributeKey == key {
					out = unionStrings(out, a.AllowedValues)
				}
			}
		}
	}
	err := d.view(func(t *tx) error {
		switch {
		case classification != "":
			var c Classification
			if err := t.getJSON(classificationKey(site, classification), &c); err != nil {
				if errors.Is(err, ErrNotFound) {
					return classificationNotFound(classification)
				}
				return err
			}
			add(&c.Schema)
			return nil
		case all:
			return eachSchema(t, site, func(s *Schema) bool { add(s); return true })
		default:
			var s Schema
			err := t.getJSON(schemaKey(site), &s)
			if errors.Is(err, ErrNotFound) {
				return nil
			}
			if err == nil {
				add(&s)
			}
			return err
		}
	})
	if out == nil {
		out = []string{}
	}
	return out, err
}
