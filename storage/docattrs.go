package storage

// Document attributes: what a client sends, what is stored, and the
// set that merges, validates and saves them in one transaction.

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// AttributeInput is one attribute as a client sends it: exactly one of
// FormKiQ's AddDocumentAttribute variants.
type AttributeInput struct {
	Key                 string           `json:"key,omitempty"`
	StringValue         *string          `json:"stringValue,omitempty"`
	StringValues        []string         `json:"stringValues,omitempty"`
	NumberValue         *float64         `json:"numberValue,omitempty"`
	NumberValues        []float64        `json:"numberValues,omitempty"`
	BooleanValue        *bool            `json:"booleanValue,omitempty"`
	DateValue           *string          `json:"dateValue,omitempty"`
	DateValues          []string         `json:"dateValues,omitempty"`
	ClassificationID    string           `json:"classificationId,omitempty"`
	DocumentID          string           `json:"documentId,omitempty"`
	Relationship        string           `json:"relationship,omitempty"`
	InverseRelationship string           `json:"inverseRelationship,omitempty"`
	EntityTypeID        string           `json:"entityTypeId,omitempty"`
	EntityID            string           `json:"entityId,omitempty"`
	Namespace           string           `json:"namespace,omitempty"`
	Entities            []EntityRefInput `json:"entities,omitempty"`
}

// EntityRefInput is one entity reference of an ENTITY attribute.
type EntityRefInput struct {
	EntityTypeID string `json:"entityTypeId"`
	EntityID     string `json:"entityId"`
	Namespace    string `json:"namespace,omitempty"`
}

// Relationship types (FormKiQ DocumentRelationshipType).
var RelationshipTypes = []string{"PRIMARY", "ATTACHMENT", "APPENDIX", "SUPPLEMENT", "ASSOCIATED", "RENDITION"}

// defaultInverse is the relationship recorded on the other document when
// the client names none.
var defaultInverse = map[string]string{
	"PRIMARY": "ATTACHMENT", "ATTACHMENT": "PRIMARY", "APPENDIX": "PRIMARY",
	"SUPPLEMENT": "PRIMARY", "RENDITION": "PRIMARY", "ASSOCIATED": "ASSOCIATED",
}

// hasStandardValue reports whether in carries a value field.
func (in *AttributeInput) hasStandardValue() bool {
	return in.StringValue != nil || in.StringValues != nil || in.NumberValue != nil || in.NumberValues != nil ||
		in.BooleanValue != nil || in.DateValue != nil || in.DateValues != nil
}

// DocAttribute is a document attribute as stored: one key with its
// values, typed by its definition.
type DocAttribute struct {
	Key          string      `json:"key"`
	ValueType    string      `json:"valueType"`
	Strings      []string    `json:"strings,omitempty"` // STRING, DATE (normalized), CLASSIFICATION, RELATIONSHIPS ("TYPE#documentId")
	Numbers      []float64   `json:"numbers,omitempty"`
	Boolean      *bool       `json:"boolean,omitempty"`
	Entities     []EntityRef `json:"entities,omitempty"`
	InsertedDate time.Time   `json:"insertedDate"`
	UserID       string      `json:"userId,omitempty"`
}

// EntityRef is a resolved entity reference.
type EntityRef struct {
	EntityTypeID string `json:"entityTypeId"`
	EntityID     string `json:"entityId"`
	Namespace    string `json:"namespace"`
}

// docAttrSet is a document's attributes being changed in a transaction.
type docAttrSet struct {
	t       *tx
	c       *Command
	doc     string
	cur     map[string]*DocAttribute // after the change
	old     map[string]*DocAttribute // as stored before
	errs    []ValidationItem
	created bool // the document is being created (defaults apply)
	purging bool // the document is being removed (its retention record goes too)
	locking bool // OpSetDocumentLock: the lock attributes may change (locks.go)
	// reminders are a purge's notification keys of the document, gathered
	// before its first delete (purge.go).
	reminders [][]byte
}

func loadDocAttrs(t *tx, c *Command, doc string, created bool) (*docAttrSet, error) {
	s := &docAttrSet{t: t, c: c, doc: doc, cur: map[string]*DocAttribute{}, old: map[string]*DocAttribute{}, created: created}
	if created {
		return s, nil
	}
	err := t.each(docAttrPrefix(c.Site, doc), func(_, v []byte) error {
		var a, b DocAttribute
		if err := json.Unmarshal(v, &a); err != nil {
			return err
		}
		b = a
		s.cur[a.Key], s.old[a.Key] = &a, &b
		return nil
	})
	return s, err
}

func (s *docAttrSet) fail(key, msg string) {
	s.errs = append(s.errs, ValidationItem{Key: key, Msg: msg})
}

// Attribute write modes.
const (
	AttrAdd     = "add"     // POST: add keys, add values to existing keys
	AttrSet     = "set"     // PATCH document, PUT one key: replace the given keys
	AttrReplace = "replace" // PUT all: the given attributes replace all others
)

// apply merges ins into the set with mode. Errors are collected.
func (s *docAttrSet) apply(ins []AttributeInput, mode string) error {
	if mode == AttrReplace {
		for k := range s.cur {
			if k != KeyRelationships {
				delete(s.cur, k)
			}
		}
	}
	for i := range ins {
		in := &ins[i]
		a, err := s.resolve(in)
		if err != nil {
			return err
		}
		if a == nil {
			continue
		}
		if a.Key == KeyRelationships {
			if err := s.relate(in, a); err != nil {
				return err
			}
			continue
		}
		if prev, ok := s.cur[a.Key]; ok && mode == AttrAdd && a.ValueType == prev.ValueType {
			a.Strings = unionStrings(prev.Strings, a.Strings)
			a.Numbers = unionNumbers(prev.Numbers, a.Numbers)
			a.Entities = unionEntities(prev.Entities, a.Entities)
			if a.Boolean == nil {
				a.Boolean = prev.Boolean
			}
		}
		s.cur[a.Key] = a
	}
	return nil
}

// resolve checks one input against its definition and returns the stored
// form, or nil after recording a validation error.
func (s *docAttrSet) resolve(in *AttributeInput) (*DocAttribute, error) {
	a := &DocAttribute{Key: in.Key, InsertedDate: s.c.At, UserID: s.c.User}
	switch {
	case in.ClassificationID != "":
		ok, err := s.t.exists(classificationKey(s.c.Site, in.ClassificationID))
		if err != nil {
			return nil, err
		}
		if !ok {
			s.fail("classificationId", fmt.Sprintf("Classification '%s' not found", in.ClassificationID))
			return nil, nil
		}
		a.Key, a.ValueType, a.Strings = KeyClassification, ValueClassification, []string{in.ClassificationID}
		return a, nil
	case in.DocumentID != "" || in.Relationship != "":
		if in.DocumentID == "" {
			s.fail("documentId", "'documentId' is required")
			return nil, nil
		}
		if !slices.Contains(RelationshipTypes, in.Relationship) {
			s.fail("relationship", "invalid 'relationship'")
			return nil, nil
		}
		if in.InverseRelationship != "" && !slices.Contains(RelationshipTypes, in.InverseRelationship) {
			s.fail("inverseRelationship", "invalid 'inverseRelationship'")
			return nil, nil
		}
		a.Key, a.ValueType = KeyRelationships, ValueRelationships
		return a, nil
	}
	if in.Key == "" {
		s.fail("", "'key' is missing from attribute")
		return nil, nil
	}
	if in.Key == KeyClassification || in.Key == KeyRelationships || isRetentionComputed(in.Key) || isLockKey(in.Key) || in.Key == KeyReminderDueDate {
		s.fail(in.Key, msgAttrReserved(in.Key))
		return nil, nil
	}
	def, err := lookupDef(s.t, s.c.Site, in.Key)
	if errors.Is(err, ErrNotFound) {
		s.fail(in.Key, msgAttrNotFound(in.Key))
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	a.ValueType = def.DataType
	isEntity := in.EntityTypeID != "" || in.EntityID != "" || in.Entities != nil
	switch def.DataType {
	case DataKeyOnly, DataWatermark: // a watermark's text is its definition's
		if in.hasStandardValue() || isEntity {
			s.fail(in.Key, msgKeyOnly)
			return nil, nil
		}
	case DataString, DataPublication:
		if in.NumberValue != nil || in.NumberValues != nil || in.BooleanValue != nil || isEntity || (in.StringValue == nil && in.StringValues == nil && (in.DateValue != nil || in.DateValues != nil)) {
			s.fail(in.Key, msgOnlyString)
			return nil, nil
		}
		a.Strings = collect(in.StringValue, in.StringValues)
		if in.DateValue != nil || in.DateValues != nil {
			a.Strings = append(a.Strings, collect(in.DateValue, in.DateValues)...)
		}
		if len(a.Strings) == 0 && def.DataType == DataString {
			s.fail(in.Key, msgOnlyString)
			return nil, nil
		}
	case DataNumber:
		if in.StringValue != nil || in.StringValues != nil || in.BooleanValue != nil || in.DateValue != nil || in.DateValues != nil || isEntity {
			s.fail(in.Key, msgOnlyNumber)
			return nil, nil
		}
		if in.NumberValue != nil {
			a.Numbers = append(a.Numbers, *in.NumberValue)
		}
		a.Numbers = append(a.Numbers, in.NumberValues...)
		if len(a.Numbers) == 0 {
			s.fail(in.Key, msgOnlyNumber)
			return nil, nil
		}
	case DataBoolean:
		if in.BooleanValue == nil || in.StringValue != nil || in.StringValues != nil || in.NumberValue != nil || in.NumberValues != nil || in.DateValue != nil || in.DateValues != nil || isEntity {
			s.fail(in.Key, msgOnlyBoolean)
			return nil, nil
		}
		a.Boolean = in.BooleanValue
	case DataDate:
		if in.NumberValue != nil || in.NumberValues != nil || in.BooleanValue != nil || isEntity {
			s.fail(in.Key, msgOnlyDate)
			return nil, nil
		}
		// Dates may come as dateValue(s) or as ISO strings.
		raw := append(collect(in.DateValue, in.DateValues), collect(in.StringValue, in.StringValues)...)
		if len(raw) == 0 {
			s.fail(in.Key, msgOnlyDate)
			return nil, nil
		}
		for _, v := range raw {
			n, ok := NormalizeDate(v)
			if !ok {
				s.fail(in.Key, fmt.Sprintf("invalid date value '%s'", v))
				return nil, nil
			}
			a.Strings = append(a.Strings, n)
		}
	case DataEntity:
		if in.hasStandardValue() || !isEntity {
			s.fail(in.Key, msgOnlyEntity)
			return nil, nil
		}
		refs := in.Entities
		if in.EntityTypeID != "" || in.EntityID != "" {
			refs = append([]EntityRefInput{{EntityTypeID: in.EntityTypeID, EntityID: in.EntityID, Namespace: in.Namespace}}, refs...)
		}
		for _, r := range refs {
			ref, msg, err := resolveEntity(s.t, s.c.Site, r)
			if err != nil {
				return nil, err
			}
			if msg != "" {
				s.fail(in.Key, msg)
				return nil, nil
			}
			a.Entities = append(a.Entities, ref)
		}
	}
	if def.ValidationRegex != "" {
		re, err := regexp.Compile(def.ValidationRegex)
		if err == nil {
			for _, v := range a.indexValues() {
				if def.DataType == DataNumber {
					break // numbers are checked as written below
				}
				if !re.MatchString(v) {
					s.fail(in.Key, fmt.Sprintf("invalid attribute value '%s', does not match regex '%s'", v, def.ValidationRegex))
					return nil, nil
				}
			}
			for _, n := range a.Numbers {
				if v := FormatNumber(n); !re.MatchString(v) {
					s.fail(in.Key, fmt.Sprintf("invalid attribute value '%s', does not match regex '%s'", v, def.ValidationRegex))
					return nil, nil
				}
			}
		}
	}
	a.normalize()
	return a, nil
}

// relate records a relationship on this document and its inverse on the
// other one.
func (s *docAttrSet) relate(in *AttributeInput, a *DocAttribute) error {
	if in.DocumentID == s.doc {
		s.fail("documentId", "a document cannot be related to itself")
		return nil
	}
	other, err := getDoc(s.t, s.c.Site, in.DocumentID)
	if errors.Is(err, ErrNotFound) {
		s.fail("documentId", fmt.Sprintf("Document %s not found.", in.DocumentID))
		return nil
	}
	if err != nil {
		return err
	}
	rel := s.cur[KeyRelationships]
	if rel == nil {
		rel = a
	}
	rel.Strings = unionStrings(rel.Strings, []string{in.Relationship + "#" + other.DocumentID})
	rel.InsertedDate, rel.UserID = s.c.At, s.c.User
	s.cur[KeyRelationships] = rel
	inv := in.InverseRelationship
	if inv == "" {
		inv = defaultInverse[in.Relationship]
	}
	var o DocAttribute
	err = s.t.getJSON(docAttrKey(s.c.Site, other.DocumentID, KeyRelationships), &o)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	if err != nil {
		o = DocAttribute{Key: KeyRelationships, ValueType: ValueRelationships}
	}
	v := inv + "#" + s.doc
	if slices.Contains(o.Strings, v) {
		return nil
	}
	o.Strings = unionStrings(o.Strings, []string{v})
	o.InsertedDate, o.UserID = s.c.At, s.c.User
	if err := s.t.set(attrIndexKey(s.c.Site, KeyRelationships, v, other.DocumentID), nil); err != nil {
		return err
	}
	return s.t.setJSON(docAttrKey(s.c.Site, other.DocumentID, KeyRelationships), &o)
}

// remove deletes key, or one value of it when value is not nil.
func (s *docAttrSet) remove(key string, value *string) {
	a, ok := s.cur[key]
	if !ok {
		return
	}
	if value == nil {
		delete(s.cur, key)
		return
	}
	b := *a
	b.Strings = slices.DeleteFunc(slices.Clone(a.Strings), func(v string) bool { return v == *value })
	b.Numbers = slices.DeleteFunc(slices.Clone(a.Numbers), func(n float64) bool { return FormatNumber(n) == *value })
	b.Entities = slices.DeleteFunc(slices.Clone(a.Entities), func(e EntityRef) bool { return e.EntityID == *value })
	if b.Boolean != nil && strconv.FormatBool(*b.Boolean) == *value {
		b.Boolean = nil
	}
	if len(b.Strings)+len(b.Numbers)+len(b.Entities) == 0 && b.Boolean == nil && a.ValueType != DataKeyOnly {
		delete(s.cur, key)
		return
	}
	s.cur[key] = &b
}

// validate checks the final set against the schemas and the reserved-key
// rules; when the document is new, schema defaults fill missing keys.
func (s *docAttrSet) validate() error {
	if _, ok := s.cur[KeyDispositionPolicy]; ok {
		if _, ok := s.cur[KeyRetentionPolicy]; !ok {
			s.fail(KeyDispositionPolicy, "'DispositionPolicy' requires 'RetentionPolicy'")
		}
	}
	schemas, err := s.schemas()
	if err != nil {
		return err
	}
	for _, sc := range schemas {
		if err := s.checkSchema(sc); err != nil {
			return err
		}
	}
	// An attribute no applicable schema lists is refused when one of them
	// forbids additional attributes: a classification extends the site
	// schema.
	closed := false
	for _, sc := range schemas {
		if a := sc.Attributes.AllowAdditionalAttributes; a != nil && !*a {
			closed = true
		}
	}
	if !closed {
		return nil
	}
	keys := make([]string, 0, len(s.cur))
	for k := range s.cur {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, builtin := builtinAttributes[k]; builtin {
			continue
		}
		if !slices.ContainsFunc(schemas, func(sc *Schema) bool { return sc.listsKey(k) }) {
			s.fail(k, fmt.Sprintf("attribute '%s' is not listed in the schema", k))
		}
	}
	return nil
}

// schemas returns the site schema and the schema of the document's
// classification, those that exist.
func (s *docAttrSet) schemas() ([]*Schema, error) {
	var out []*Schema
	var site Schema
	err := s.t.getJSON(schemaKey(s.c.Site), &site)
	switch {
	case err == nil:
		out = append(out, &site)
	case !errors.Is(err, ErrNotFound):
		return nil, err
	}
	if cl, ok := s.cur[KeyClassification]; ok && len(cl.Strings) == 1 {
		var c Classification
		err := s.t.getJSON(classificationKey(s.c.Site, cl.Strings[0]), &c)
		switch {
		case err == nil:
			out = append(out, &c.Schema)
		case !errors.Is(err, ErrNotFound):
			return nil, err
		}
	}
	return out, nil
}

func (s *docAttrSet) checkSchema(sc *Schema) error {
	at := &sc.Attributes
	for _, r := range at.Required {
		if _, ok := s.cur[r.AttributeKey]; ok {
			continue
		}
		if s.created && (r.DefaultValue != "" || len(r.DefaultValues) > 0 || r.DefaultEntityID != "") {
			in := AttributeInput{Key: r.AttributeKey}
			def, err := lookupDef(s.t, s.c.Site, r.AttributeKey)
			if err != nil && !errors.Is(err, ErrNotFound) {
				return err
			}
			vals := collect(nil, r.DefaultValues)
			if r.DefaultValue != "" {
				vals = append([]string{r.DefaultValue}, vals...)
			}
			switch {
			case def == nil:
			case def.DataType == DataEntity:
				in.EntityTypeID, in.EntityID = r.DefaultEntityTypeID, r.DefaultEntityID
			case def.DataType == DataNumber:
				for _, v := range vals {
					if n, err := strconv.ParseFloat(v, 64); err == nil {
						in.NumberValues = append(in.NumberValues, n)
					}
				}
			case def.DataType == DataBoolean:
				b := len(vals) > 0 && vals[0] == "true"
				in.BooleanValue = &b
			case def.DataType == DataDate:
				in.DateValues = vals
			case def.DataType != DataKeyOnly:
				in.StringValues = vals
			}
			a, err := s.resolve(&in)
			if err != nil {
				return err
			}
			if a != nil {
				s.cur[a.Key] = a
			}
			continue
		}
		s.fail(r.AttributeKey, msgMissingRequired(r.AttributeKey))
	}
	listed := map[string]*SchemaAttribute{}
	for i := range at.Required {
		listed[at.Required[i].AttributeKey] = &at.Required[i]
	}
	for i := range at.Optional {
		listed[at.Optional[i].AttributeKey] = &at.Optional[i]
	}
	keys := make([]string, 0, len(s.cur))
	for k := range s.cur {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		a := s.cur[k]
		if k == KeyClassification || k == KeyRelationships {
			continue
		}
		sa, ok := listed[k]
		if !ok {
			continue // additional attributes are checked across schemas
		}
		if len(sa.AllowedValues) > 0 {
			for _, v := range a.displayValues() {
				if !slices.Contains(sa.AllowedValues, v) {
					s.fail(k, fmt.Sprintf("invalid attribute value '%s', only allowed values are %s", v, strings.Join(sa.AllowedValues, ",")))
					break
				}
			}
		}
		n := float64(len(a.displayValues()))
		if sa.MinNumberOfValues != nil && n < *sa.MinNumberOfValues {
			s.fail(k, fmt.Sprintf("attribute '%s' needs at least %s values", k, FormatNumber(*sa.MinNumberOfValues)))
		}
		if sa.MaxNumberOfValues != nil && n > *sa.MaxNumberOfValues {
			s.fail(k, fmt.Sprintf("attribute '%s' allows at most %s values", k, FormatNumber(*sa.MaxNumberOfValues)))
		}
	}
	return nil
}

// save writes the changed attributes and their index entries.
func (s *docAttrSet) save() error {
	// A watermark is what bypassWatermark (GOVERN) lifts: a request
	// without GOVERN may add one but not take one away. The server's own
	// jobs (no Via) and purges may.
	if v := s.c.Via; v != nil && !v.Govern && !s.purging {
		for _, k := range slices.Sorted(maps.Keys(s.old)) {
			if _, ok := s.cur[k]; !ok && s.old[k].ValueType == DataWatermark {
				s.fail(k, "removing a watermark attribute needs GOVERN permission")
			}
		}
	}
	if len(s.errs) > 0 {
		return &ValidationError{Items: s.errs}
	}
	s.keepLock()
	if err := s.syncRetention(); err != nil {
		return err
	}
	if err := s.syncReminder(); err != nil {
		return err
	}
	var sz requestSize
	for k, a := range s.cur {
		sz.add(k)
		for _, v := range a.indexValues() {
			sz.add(v)
		}
	}
	if err := checkDocumentSize("attributes", sz); err != nil {
		return err
	}
	for k, a := range s.old {
		n, ok := s.cur[k]
		if ok && sameAttr(a, n) {
			continue
		}
		for _, v := range a.indexValues() {
			if err := s.t.del(attrIndexKey(s.c.Site, k, v, s.doc)); err != nil {
				return err
			}
		}
		if !ok {
			if err := s.t.del(docAttrKey(s.c.Site, s.doc, k)); err != nil {
				return err
			}
		}
	}
	for k, a := range s.cur {
		if o, ok := s.old[k]; ok && sameAttr(o, a) {
			continue
		}
		if err := s.t.setJSON(docAttrKey(s.c.Site, s.doc, k), a); err != nil {
			return err
		}
		for _, v := range a.indexValues() {
			if err := s.t.set(attrIndexKey(s.c.Site, k, v, s.doc), nil); err != nil {
				return err
			}
		}
	}
	return nil
}

func sameAttr(a, b *DocAttribute) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// writeDocAttributes applies ins to doc's attributes in mode, validates the
// result and writes it; validation errors leave the transaction to be
// discarded by the caller.
func writeDocAttributes(t *tx, c *Command, doc string, ins []AttributeInput, mode string, created bool) error {
	s, err := loadDocAttrs(t, c, doc, created)
	if err != nil {
		return err
	}
	if err := s.apply(ins, mode); err != nil {
		return err
	}
	if err := assignSequences(s); err != nil {
		return err
	}
	if len(s.errs) == 0 {
		if err := s.validate(); err != nil {
			return err
		}
	}
	return s.save()
}

// deleteDocAttributes removes every attribute of doc and its index entries
// (hard delete), and the inverse relationships other documents hold: keys
// and reminders are doc's attribute and notification keys, gathered by the
// purge (purge.go).
func deleteDocAttributes(t *tx, site, doc string, keys, reminders [][]byte) error {
	c := &Command{Site: site}
	s := &docAttrSet{t: t, c: c, doc: doc, cur: map[string]*DocAttribute{}, old: map[string]*DocAttribute{}, reminders: reminders}
	if err := eachGathered(t, keys, func(_ []byte, a *DocAttribute) error {
		b := *a
		s.cur[a.Key], s.old[a.Key] = a, &b
		return nil
	}); err != nil {
		return err
	}
	if rel, ok := s.cur[KeyRelationships]; ok {
		for _, v := range rel.Strings {
			_, other, _ := strings.Cut(v, "#")
			var o DocAttribute
			err := t.getJSON(docAttrKey(site, other, KeyRelationships), &o)
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			for _, x := range o.Strings {
				if strings.HasSuffix(x, "#"+doc) {
					if err := t.del(attrIndexKey(site, KeyRelationships, x, other)); err != nil {
						return err
					}
				}
			}
			o.Strings = slices.DeleteFunc(o.Strings, func(x string) bool { return strings.HasSuffix(x, "#"+doc) })
			if len(o.Strings) == 0 {
				err = t.del(docAttrKey(site, other, KeyRelationships))
			} else {
				err = t.setJSON(docAttrKey(site, other, KeyRelationships), &o)
			}
			if err != nil {
				return err
			}
		}
	}
	s.cur = map[string]*DocAttribute{}
	s.purging = true
	return s.save()
}

// SetDocAttributes is the payload of OpSetDocAttributes: the
// /documents/{id}/attributes endpoints.
type SetDocAttributes struct {
	DocumentID string           `json:"documentId"`
	Mode       string           `json:"mode"` // AttrAdd, AttrSet, AttrReplace, or "delete"
	Attributes []AttributeInput `json:"attributes,omitempty"`
	// DeleteKey and DeleteValue name what "delete" removes.
	DeleteKey   string  `json:"deleteKey,omitempty"`
	DeleteValue *string `json:"deleteValue,omitempty"`
}

// AttrDelete is the mode that removes a key or one of its values.
const AttrDelete = "delete"

func applySetDocAttributes(t *tx, c *Command) (any, error) {
	p, err := decode[SetDocAttributes](c)
	if err != nil {
		return nil, err
	}
	if err := limitsErr(CheckAttributes("attributes", p.Attributes)); err != nil {
		return nil, err
	}
	d, err := getLiveDoc(t, c.Site, p.DocumentID)
	if err != nil {
		return nil, err
	}
	s, err := loadDocAttrs(t, c, d.DocumentID, false)
	if err != nil {
		return nil, err
	}
	if p.Mode == AttrDelete {
		if isLockKey(p.DeleteKey) {
			return nil, Invalid(p.DeleteKey, msgAttrReserved(p.DeleteKey))
		}
		if _, ok := s.cur[p.DeleteKey]; !ok && p.DeleteValue == nil {
			return nil, &NotFoundError{Msg: fmt.Sprintf("attribute '%s' not found on document '%s'", p.DeleteKey, d.DocumentID)}
		}
		s.remove(p.DeleteKey, p.DeleteValue)
	} else if err := s.apply(p.Attributes, p.Mode); err != nil {
		return nil, err
	}
	if len(s.errs) == 0 {
		if err := s.validate(); err != nil {
			return nil, err
		}
	}
	if err := s.save(); err != nil {
		return nil, err
	}
	d.LastModifiedDate = c.At
	if _, err := applyRules(t, c, d); err != nil { // rulesets.go
		return nil, err
	}
	return nil, putDoc(t, d)
}
