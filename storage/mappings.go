package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// MappingAttribute says where IDP finds one attribute's value (FormKiQ
// MappingAttribute; which fields apply depends on SourceType).
type MappingAttribute struct {
	AttributeKey        string   `json:"attributeKey"`
	SourceType          string   `json:"sourceType"`
	DefaultValue        string   `json:"defaultValue,omitempty"`
	DefaultValues       []string `json:"defaultValues,omitempty"`
	LabelTexts          []string `json:"labelTexts,omitempty"`
	LabelMatchingType   string   `json:"labelMatchingType,omitempty"`
	ValidationRegex     string   `json:"validationRegex,omitempty"`
	MetadataField       string   `json:"metadataField,omitempty"`
	LlmPromptEntityName string   `json:"llmPromptEntityName,omitempty"`
}

// MappingCondition is one condition for a mapping classification.
type MappingCondition struct {
	SourceType          string `json:"sourceType"`
	MatchingType        string `json:"matchingType"`
	Text                string `json:"text,omitempty"`
	ResultKey           string `json:"resultKey,omitempty"`
	ResultValue         string `json:"resultValue,omitempty"`
	LlmPromptEntityName string `json:"llmPromptEntityName,omitempty"`
}

// MappingClassification classifies a document when its conditions hold.
type MappingClassification struct {
	ClassificationID string             `json:"classificationId"`
	Conditions       []MappingCondition `json:"conditions,omitempty"`
}

// Mapping drives the IDP action: which attributes to extract and how, and
// which classification to give a document.
type Mapping struct {
	MappingID       string                  `json:"mappingId"`
	Name            string                  `json:"name"`
	Description     string                  `json:"description,omitempty"`
	Attributes      []MappingAttribute      `json:"attributes,omitempty"`
	Classifications []MappingClassification `json:"classifications,omitempty"`
	InsertedDate    time.Time               `json:"insertedDate"`
	UserID          string                  `json:"userId,omitempty"`
}

// Mapping enums (FormKiQ 1.19.1).
var (
	MappingSourceTypes    = []string{"CONTENT", "CONTENT_KEY_VALUE", "METADATA", "MANUAL", "DATA_CLASSIFICATION", "METADATA_EXTRACTION_RESULT", "AI_PROMPT_RESULT", "MALWARE_SCAN"}
	MappingLabelMatching  = []string{"FUZZY", "EXACT", "BEGINS_WITH", "CONTAINS"}
	MappingMetadataFields = []string{"USERNAME", "PATH", "CONTENT_TYPE"}
	ConditionSourceTypes  = []string{"CONTENT", "DATA_CLASSIFICATION", "METADATA_EXTRACTION_RESULT", "AI_PROMPT_RESULT"}
	ConditionMatching     = []string{"EXACT", "BEGINS_WITH", "CONTAINS"}
)

// PutMapping is the payload of OpPutMapping.
type PutMapping struct {
	Mapping Mapping `json:"mapping"`
	Create  bool    `json:"create,omitempty"`
}

// DeleteMapping is the payload of OpDeleteMapping.
type DeleteMapping struct {
	MappingID string `json:"mappingId"`
}

func mappingNotFound(id string) error {
	return &NotFoundError{Msg: fmt.Sprintf("Mapping '%s' not found", id)}
}

// checkMapping validates a mapping against the site's attributes and
// classifications.
func checkMapping(t *tx, site string, m *Mapping) error {
	var items []ValidationItem
	fail := func(key, msg string) { items = append(items, ValidationItem{Key: key, Msg: msg}) }
	if m.Name == "" {
		fail("name", "'name' is required")
	}
	if len(m.Attributes) == 0 && len(m.Classifications) == 0 {
		fail("attributes", "'attributes' is required")
	}
	for i, a := range m.Attributes {
		k := fmt.Sprintf("attributes[%d]", i)
		if a.AttributeKey == "" {
			fail(k+".attributeKey", "'attributeKey' is required")
		} else if _, err := lookupDef(t, site, a.AttributeKey); errors.Is(err, ErrNotFound) {
			fail(k+".attributeKey", msgAttrNotFound(a.AttributeKey))
		} else if err != nil {
			return err
		}
		switch {
		case a.SourceType == "":
			fail(k+".sourceType", "'sourceType' is required")
		case !slices.Contains(MappingSourceTypes, a.SourceType):
			fail(k+".sourceType", "invalid 'sourceType'")
		}
		switch a.SourceType {
		case "CONTENT", "CONTENT_KEY_VALUE", "METADATA":
			if len(a.LabelTexts) == 0 {
				fail(k+".labelTexts", "'labelTexts' is required")
			}
			if !slices.Contains(MappingLabelMatching, a.LabelMatchingType) {
				fail(k+".labelMatchingType", "'labelMatchingType' is required")
			}
			if a.SourceType == "METADATA" && !slices.Contains(MappingMetadataFields, a.MetadataField) {
				fail(k+".metadataField", "'metadataField' is required")
			}
		case "METADATA_EXTRACTION_RESULT", "AI_PROMPT_RESULT":
			if a.LlmPromptEntityName == "" {
				fail(k+".llmPromptEntityName", "'llmPromptEntityName' is required")
			}
		case "MANUAL":
			if a.DefaultValue == "" && len(a.DefaultValues) == 0 {
				fail(k+".defaultValue", "'defaultValue' or 'defaultValues' is required")
			}
		}
	}
	for i, c := range m.Classifications {
		k := fmt.Sprintf("classifications[%d]", i)
		if ok, err := t.exists(classificationKey(site, c.ClassificationID)); err != nil {
			return err
		} else if !ok {
			fail(k+".classificationId", fmt.Sprintf("Classification '%s' not found", c.ClassificationID))
		}
		for j, cd := range c.Conditions {
			ck := fmt.Sprintf("%s.conditions[%d]", k, j)
			if !slices.Contains(ConditionSourceTypes, cd.SourceType) {
				fail(ck+".sourceType", "invalid 'sourceType'")
			}
			if !slices.Contains(ConditionMatching, cd.MatchingType) {
				fail(ck+".matchingType", "invalid 'matchingType'")
			}
			switch cd.SourceType {
			case "CONTENT":
				if cd.Text == "" {
					fail(ck+".text", "'text' is required")
				}
			case "DATA_CLASSIFICATION", "METADATA_EXTRACTION_RESULT", "AI_PROMPT_RESULT":
				if cd.ResultKey == "" || cd.ResultValue == "" {
					fail(ck+".resultKey", "'resultKey' and 'resultValue' are required")
				}
				if cd.SourceType != "DATA_CLASSIFICATION" && cd.LlmPromptEntityName == "" {
					fail(ck+".llmPromptEntityName", "'llmPromptEntityName' is required")
				}
			}
		}
	}
	if len(items) > 0 {
		return &ValidationError{Items: items}
	}
	return nil
}

// checkMappingFields bounds a mapping's fields (RulesDefinitionFields),
// with the keys of checkMapping: its description, at most
// MaxAttributesPerRequest attributes (what one document gets in a
// request) and MaxValuesPerKey classifications, conditions, label texts
// and default values; texts and values within MaxValueBytes, names
// within MaxKeyBytes.
func checkMappingFields(c *Command, m *Mapping) error {
	f := newDefFields(c)
	f.text("description", m.Description, MaxDescriptionBytes)
	ok := f.count("attributes", len(m.Attributes), MaxAttributesPerRequest)
	ok = f.count("classifications", len(m.Classifications), MaxValuesPerKey) && ok
	if !ok {
		return f.err()
	}
	for i, a := range m.Attributes {
		k := fmt.Sprintf("attributes[%d]", i)
		f.value(k+".defaultValue", a.DefaultValue)
		f.values(k+".defaultValues", a.DefaultValues, MaxValuesPerKey)
		f.values(k+".labelTexts", a.LabelTexts, MaxValuesPerKey)
		f.value(k+".validationRegex", a.ValidationRegex)
		f.name(k+".llmPromptEntityName", a.LlmPromptEntityName)
	}
	for i, cl := range m.Classifications {
		k := fmt.Sprintf("classifications[%d]", i)
		if !f.count(k+".conditions", len(cl.Conditions), MaxValuesPerKey) {
			continue
		}
		for j, cd := range cl.Conditions {
			ck := fmt.Sprintf("%s.conditions[%d]", k, j)
			f.value(ck+".text", cd.Text)
			f.name(ck+".resultKey", cd.ResultKey)
			f.value(ck+".resultValue", cd.ResultValue)
			f.name(ck+".llmPromptEntityName", cd.LlmPromptEntityName)
		}
	}
	return f.err()
}

func applyPutMapping(t *tx, c *Command) (any, error) {
	p, err := decode[PutMapping](c)
	if err != nil {
		return nil, err
	}
	m := p.Mapping
	if err := checkName("name", m.Name); err != nil {
		return nil, err
	}
	var old Mapping
	err = t.getJSON(mappingKey(c.Site, m.MappingID), &old)
	switch {
	case errors.Is(err, ErrNotFound) && !p.Create:
		return nil, mappingNotFound(m.MappingID)
	case err != nil && !errors.Is(err, ErrNotFound):
		return nil, err
	}
	if err := checkMapping(t, c.Site, &m); err != nil {
		return nil, err
	}
	if err := checkMappingFields(c, &m); err != nil {
		return nil, err
	}
	m.InsertedDate, m.UserID = c.At, c.User
	if !p.Create {
		m.InsertedDate, m.UserID = old.InsertedDate, old.UserID
	}
	if err := t.setJSON(mappingKey(c.Site, m.MappingID), m); err != nil {
		return nil, err
	}
	return nil, ensureSite(t, c)
}

func applyDeleteMapping(t *tx, c *Command) (any, error) {
	p, err := decode[DeleteMapping](c)
	if err != nil {
		return nil, err
	}
	ok, err := t.exists(mappingKey(c.Site, p.MappingID))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, mappingNotFound(p.MappingID)
	}
	return nil, t.del(mappingKey(c.Site, p.MappingID))
}

// classificationInMapping reports whether a mapping names classification id.
func classificationInMapping(t *tx, site, id string) (bool, error) {
	return anyMapping(t, site, func(m *Mapping) bool {
		return slices.ContainsFunc(m.Classifications, func(c MappingClassification) bool { return c.ClassificationID == id })
	})
}

// anyMapping reports whether one of site's mappings satisfies pred,
// stopping at the first that does.
func anyMapping(t *tx, site string, pred func(*Mapping) bool) (bool, error) {
	found := false
	err := t.each(mappingPrefix(site), func(_, v []byte) error {
		var m Mapping
		if err := json.Unmarshal(v, &m); err != nil {
			return err
		}
		if pred(&m) {
			found = true
			return errStop
		}
		return nil
	})
	if errors.Is(err, errStop) {
		err = nil
	}
	return found, err
}

// GetMapping returns one mapping.
func (d *DB) GetMapping(site, id string) (*Mapping, error) {
	var m Mapping
	err := d.view(func(t *tx) error { return t.getJSON(mappingKey(site, id), &m) })
	if errors.Is(err, ErrNotFound) {
		return nil, mappingNotFound(id)
	}
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// Mappings lists a site's mappings by id after after.
func (d *DB) Mappings(site, after string, limit int) ([]Mapping, string, error) {
	return listPage(d, mappingPrefix(site), after, limit, func(m *Mapping) string { return m.MappingID })
}
