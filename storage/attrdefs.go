package storage

// Attribute definitions: the data types and built-in keys, the
// /attributes payloads and appliers, and the lookups they share.

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Attribute data types (FormKiQ AttributeDataType) and types.
const (
	DataString      = "STRING"
	DataNumber      = "NUMBER"
	DataBoolean     = "BOOLEAN"
	DataDate        = "DATE"
	DataKeyOnly     = "KEY_ONLY"
	DataPublication = "PUBLICATION"
	DataWatermark   = "WATERMARK"
	DataEntity      = "ENTITY"

	AttrStandard   = "STANDARD"
	AttrGovernance = "GOVERNANCE"
	AttrOPA        = "OPA"
)

// Value types that only appear on read (FormKiQ AttributeValueType).
const (
	ValueClassification = "CLASSIFICATION"
	ValueRelationships  = "RELATIONSHIPS"
)

// System attribute keys: written through classificationId and relationship
// attributes, never by key.
const (
	KeyClassification = "Classification"
	KeyRelationships  = "Relationships"
)

// Reserved attribute keys that exist without a definition
// (SERVICE-SPEC.md §2.4). They cannot be created with POST /attributes.
const (
	KeySensitivity       = "Sensitivity"
	KeyLlmMaxToken       = "LlmMaxToken"
	KeyRetentionPolicy   = "RetentionPolicy"
	KeyDispositionPolicy = "DispositionPolicy"
)

// builtinAttributes are the definitions of the reserved keys.
var builtinAttributes = map[string]AttributeDef{
	KeyClassification:    {Key: KeyClassification, DataType: DataString, Type: AttrStandard},
	KeyRelationships:     {Key: KeyRelationships, DataType: DataString, Type: AttrStandard},
	KeySensitivity:       {Key: KeySensitivity, DataType: DataString, Type: AttrGovernance},
	KeyLlmMaxToken:       {Key: KeyLlmMaxToken, DataType: DataNumber, Type: AttrStandard},
	KeyRetentionPolicy:   {Key: KeyRetentionPolicy, DataType: DataEntity, Type: AttrGovernance},
	KeyDispositionPolicy: {Key: KeyDispositionPolicy, DataType: DataEntity, Type: AttrGovernance},
	// Computed by the store (retention.go, locks.go); never written by key.
	KeyRetentionEffectiveStartDate: {Key: KeyRetentionEffectiveStartDate, DataType: DataDate, Type: AttrGovernance},
	KeyRetentionEffectiveEndDate:   {Key: KeyRetentionEffectiveEndDate, DataType: DataDate, Type: AttrGovernance},
	KeyRetentionEffectiveStatus:    {Key: KeyRetentionEffectiveStatus, DataType: DataString, Type: AttrGovernance},
	KeyDispositionDate:             {Key: KeyDispositionDate, DataType: DataDate, Type: AttrGovernance},
	KeyCheckout:                    {Key: KeyCheckout, DataType: DataBoolean, Type: AttrStandard},
	KeyCheckoutForLegalHold:        {Key: KeyCheckoutForLegalHold, DataType: DataBoolean, Type: AttrGovernance},
	KeyLockedBy:                    {Key: KeyLockedBy, DataType: DataString, Type: AttrStandard},
	KeyLockedDate:                  {Key: KeyLockedDate, DataType: DataDate, Type: AttrStandard},
	KeyReminderPolicy:              {Key: KeyReminderPolicy, DataType: DataEntity, Type: AttrStandard},
	KeyReminderDueDate:             {Key: KeyReminderDueDate, DataType: DataDate, Type: AttrStandard},
	KeyAgreementStatus:             {Key: KeyAgreementStatus, DataType: DataString, Type: AttrStandard},
	KeyAgreementExpirationDate:     {Key: KeyAgreementExpirationDate, DataType: DataDate, Type: AttrStandard},
}

// IsReservedAttribute reports whether key is a reserved attribute name.
func IsReservedAttribute(key string) bool {
	_, ok := builtinAttributes[key]
	return ok
}

// reservedAttributeNames are FormKiQ's reserved attribute keys
// (AttributeKeyReserved, API-NAMES.md Appendix D) that Quire has no
// definition for: POST /attributes refuses them too, whatever their case.
// Appendix D names only some of the Agreement*, Company* and Contact*
// keys; those it names are here.
var reservedAttributeNames = []string{
	"Publication", "Classification", "Sensitivity", "MalwareScanResult", "Relationships", "ArtifactStatus",
	"Checkout", "CheckoutForLegalHold", "LockedBy", "LockedDate", "EsignatureDocusignEnvelopeId",
	"EsignatureDocusignStatus", "RetentionPolicy", "RetentionPeriodInDays", "DispositionDate",
	"DispositionPeriodInDays", "RetentionStartDateSourceType", "RetentionEffectiveStartDate",
	"RetentionEffectiveEndDate", "RetentionEffectiveStatus", "UserPrompt", "LlmSystemPrompt",
	"LlmSystemPromptDocumentId", "LlmSystemPromptArtifactId", "LlmResponsePresetEntityTypes",
	"LlmResponseFieldKeys", "LlmModelId", "LlmMaxTokens", "LlmAnalysisCategory",
	"AgreementName", "AgreementStatus", "AgreementLifecycleState", "AgreementType", "AgreementValue",
	"AgreementCurrency", "AgreementEffectiveDate", "AgreementExpirationDate",
	"CompanyName", "CompanyStatus", "CompanyLegalName", "CompanyType", "CompanyCountry", "CompanyRegion",
	"CompanyRegistrationNumber", "CompanyTaxIdentifier",
	"ContactName", "ContactStatus", "ContactEmail", "ContactCompany", "ContactTitle", "ContactPhone",
	"ContactRole", "ContactNotes",
	"RetentionMode", "ReminderPolicy", "ReminderDateSourceAttributeKey", "ReminderPeriod",
	"ReminderRepeatInterval", "ReminderNotificationType", "ReminderNotificationToCc",
	"ReminderNotificationToBcc", "ReminderNotificationSubject", "ReminderNotificationText", "ReminderDueDate",
}

// IsReservedAttributeName reports whether a new attribute definition may
// not take key: a reserved name (FormKiQ's or Quire's built-ins), matched
// without case as FormKiQ does.
func IsReservedAttributeName(key string) bool {
	if IsReservedAttribute(key) {
		return true
	}
	eq := func(k string) bool { return strings.EqualFold(k, key) }
	return slices.ContainsFunc(reservedAttributeNames, eq) || slices.ContainsFunc(slices.Collect(maps.Keys(builtinAttributes)), eq)
}

// DataTypes and AttributeTypes list the accepted enum values.
var (
	DataTypes      = []string{DataString, DataNumber, DataBoolean, DataDate, DataKeyOnly, DataPublication, DataWatermark, DataEntity}
	AttributeTypes = []string{AttrStandard, AttrOPA, AttrGovernance}
)

// AttributeDef is an attribute definition of a site (/attributes).
type AttributeDef struct {
	Key             string          `json:"key"`
	DataType        string          `json:"dataType"`
	Type            string          `json:"type"`
	ValidationRegex string          `json:"validationRegex,omitempty"`
	Watermark       json.RawMessage `json:"watermark,omitempty"`
	InsertedDate    time.Time       `json:"insertedDate"`
	UserID          string          `json:"userId,omitempty"`
}

// Attribute validation messages, as FormKiQ words them where known.
func msgAttrNotFound(k string) string { return fmt.Sprintf("attribute '%s' not found", k) }
func msgAttrExists(k string) string   { return fmt.Sprintf("attribute '%s' already exists", k) }
func msgAttrReserved(k string) string { return fmt.Sprintf("'%s' is a reserved attribute name", k) }
func msgAttrInUse(k string) string {
	return fmt.Sprintf("attribute '%s' is in use, cannot be deleted", k)
}
func msgMissingRequired(k string) string { return fmt.Sprintf("missing required attribute '%s'", k) }

const (
	msgOnlyString  = "attribute only support string value"
	msgOnlyNumber  = "attribute only support number value"
	msgOnlyBoolean = "attribute only support boolean value"
	msgOnlyDate    = "attribute only support date value"
	msgOnlyEntity  = "attribute only support entity value"
	msgKeyOnly     = "attribute does not support a value"
)

func attrDefNotFound(key string) error {
	return &NotFoundError{Msg: fmt.Sprintf("Attribute %s not found", key)}
}

// AddAttribute is the payload of OpAddAttribute.
type AddAttribute struct {
	Def AttributeDef `json:"def"`
}

// UpdateAttribute is the payload of OpUpdateAttribute. Nil fields stay; an
// empty ValidationRegex clears it (FormKiQ #500).
type UpdateAttribute struct {
	Key             string          `json:"key"`
	Type            *string         `json:"type,omitempty"`
	ValidationRegex *string         `json:"validationRegex,omitempty"`
	Watermark       json.RawMessage `json:"watermark,omitempty"`
}

// DeleteAttribute is the payload of OpDeleteAttribute.
type DeleteAttribute struct {
	Key string `json:"key"`
}

func applyAddAttribute(t *tx, c *Command) (any, error) {
	p, err := decode[AddAttribute](c)
	if err != nil {
		return nil, err
	}
	d := p.Def
	if IsReservedAttributeName(d.Key) {
		return nil, Invalid("key", msgAttrReserved(d.Key))
	}
	ok, err := t.exists(attrDefKey(c.Site, d.Key))
	if err != nil {
		return nil, err
	}
	if ok {
		return nil, Invalid("key", msgAttrExists(d.Key))
	}
	if d.DataType == "" {
		d.DataType = DataString
	}
	if d.Type == "" {
		d.Type = AttrStandard
	}
	if err := checkAttributeDefFields(c, &d); err != nil {
		return nil, err
	}
	d.InsertedDate, d.UserID = c.At, c.User
	if err := t.setJSON(attrDefKey(c.Site, d.Key), d); err != nil {
		return nil, err
	}
	return nil, ensureSite(t, c)
}

// checkAttributeDefFields bounds an attribute definition
// (RulesDefinitionFields): its key (the handler bounds it too) and its
// validationRegex, which every value written is matched against.
func checkAttributeDefFields(c *Command, d *AttributeDef) error {
	f := newDefFields(c)
	f.name("key", d.Key)
	f.value("validationRegex", d.ValidationRegex)
	return f.err()
}

func applyUpdateAttribute(t *tx, c *Command) (any, error) {
	p, err := decode[UpdateAttribute](c)
	if err != nil {
		return nil, err
	}
	var d AttributeDef
	if err := t.getJSON(attrDefKey(c.Site, p.Key), &d); err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, attrDefNotFound(p.Key)
		}
		return nil, err
	}
	if p.Type != nil {
		d.Type = *p.Type
	}
	if p.ValidationRegex != nil {
		d.ValidationRegex = *p.ValidationRegex
	}
	if len(p.Watermark) > 0 {
		if d.DataType != DataWatermark {
			return nil, Invalid("watermark", "'watermark' is only for 'WATERMARK' attributes")
		}
		d.Watermark = p.Watermark
	}
	if p.ValidationRegex != nil {
		if err := checkAttributeDefFields(c, &AttributeDef{Key: d.Key, ValidationRegex: *p.ValidationRegex}); err != nil {
			return nil, err
		}
	}
	return nil, t.setJSON(attrDefKey(c.Site, p.Key), d)
}

func applyDeleteAttribute(t *tx, c *Command) (any, error) {
	p, err := decode[DeleteAttribute](c)
	if err != nil {
		return nil, err
	}
	ok, err := t.exists(attrDefKey(c.Site, p.Key))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, attrDefNotFound(p.Key)
	}
	inUse, err := attributeInUse(t, c.Site, p.Key)
	if err != nil {
		return nil, err
	}
	if inUse {
		// Under the attribute's own key, as FormKiQ answers (issue 48).
		return nil, Invalid(p.Key, msgAttrInUse(p.Key))
	}
	return nil, t.del(attrDefKey(c.Site, p.Key))
}

// attributeInUse reports whether a document, the site schema or a
// classification uses key.
func attributeInUse(t *tx, site, key string) (bool, error) {
	if len(t.firstKey(attrIndexPrefix(site, key))) > 0 {
		return true, nil
	}
	var used bool
	err := eachSchema(t, site, func(s *Schema) bool {
		used = s.usesKey(key)
		return !used
	})
	if used || err != nil {
		return used, err
	}
	return anyMapping(t, site, func(m *Mapping) bool {
		return slices.ContainsFunc(m.Attributes, func(a MappingAttribute) bool { return a.AttributeKey == key })
	})
}

// lookupDef returns the definition of key in site, built-in ones included.
func lookupDef(t *tx, site, key string) (*AttributeDef, error) {
	if d, ok := builtinAttributes[key]; ok {
		return &d, nil
	}
	var d AttributeDef
	if err := t.getJSON(attrDefKey(site, key), &d); err != nil {
		return nil, err
	}
	return &d, nil
}
