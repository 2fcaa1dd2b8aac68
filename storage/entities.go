package storage

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"
)

// Entity type namespaces.
const (
	NamespacePreset = "PRESET"
	NamespaceCustom = "CUSTOM"
)

// Preset entity types exist in every site under their name, which is also
// their id. Later capabilities read their entities: retention and
// disposition policies, reminders and LLM prompts.
var PresetEntityTypes = []string{"DispositionPolicy", "LlmPrompt", "ReminderPolicy", "RetentionPolicy"}

// presetAttributeTypes types the attributes preset entities may carry.
var presetAttributeTypes = map[string]string{
	"ModelId":     DataString,
	"LlmMaxToken": DataNumber,
	// RetentionPolicy and DispositionPolicy entities (retention.go).
	KeyRetentionMode:                DataString,
	KeyRetentionPeriodInDays:        DataNumber,
	KeyRetentionStartDateSourceType: DataString,
	KeyDispositionPeriodInDays:      DataNumber,
	KeyDispositionAction:            DataString,
}

// EntityType is a kind of entity: customer, supplier, an LLM prompt, ...
type EntityType struct {
	EntityTypeID string    `json:"entityTypeId"`
	Namespace    string    `json:"namespace"`
	Name         string    `json:"name"`
	InsertedDate time.Time `json:"insertedDate"`
	UserID       string    `json:"userId,omitempty"`
}

// EntityAttribute is a typed value of an entity.
type EntityAttribute struct {
	Key       string    `json:"key"`
	ValueType string    `json:"valueType"`
	Strings   []string  `json:"strings,omitempty"`
	Numbers   []float64 `json:"numbers,omitempty"`
	Boolean   *bool     `json:"boolean,omitempty"`
}

// Entity is one entity of a type.
type Entity struct {
	EntityID     string            `json:"entityId"`
	EntityTypeID string            `json:"entityTypeId"`
	Name         string            `json:"name"`
	Attributes   []EntityAttribute `json:"attributes,omitempty"`
	InsertedDate time.Time         `json:"insertedDate"`
	UserID       string            `json:"userId,omitempty"`
}

func entityTypeNotFound(id string) error {
	return &NotFoundError{Msg: fmt.Sprintf("EntityType '%s' not found", id)}
}

func entityNotFound(id string) error {
	return &NotFoundError{Msg: fmt.Sprintf("Entity '%s' not found", id)}
}

// findEntityType resolves an entity type by id or by name. namespace may be
// empty: then ids, custom names and preset names are tried in that order.
func findEntityType(t *tx, site, idOrName, namespace string) (*EntityType, error) {
	if namespace != NamespacePreset {
		var et EntityType
		err := t.getJSON(entityTypeKey(site, idOrName), &et)
		if err == nil && (namespace == "" || et.Namespace == namespace) {
			return &et, nil
		}
		if err != nil && !errors.Is(err, ErrNotFound) {
			return nil, err
		}
		id, err := t.getRaw(entityTypeNameKey(site, NamespaceCustom, idOrName))
		if err == nil {
			if err := t.getJSON(entityTypeKey(site, string(id)), &et); err != nil {
				return nil, err
			}
			return &et, nil
		}
		if !errors.Is(err, ErrNotFound) {
			return nil, err
		}
	}
	if namespace != NamespaceCustom && slices.Contains(PresetEntityTypes, idOrName) {
		return &EntityType{EntityTypeID: idOrName, Namespace: NamespacePreset, Name: idOrName}, nil
	}
	return nil, entityTypeNotFound(idOrName)
}

// resolveEntity checks a reference of an ENTITY attribute. A reference that
// does not resolve gives a message for the client.
func resolveEntity(t *tx, site string, r EntityRefInput) (EntityRef, string, error) {
	if r.EntityTypeID == "" {
		return EntityRef{}, "'entityTypeId' is required", nil
	}
	if r.EntityID == "" {
		return EntityRef{}, "'entityId' is required", nil
	}
	if r.Namespace != "" && r.Namespace != NamespacePreset && r.Namespace != NamespaceCustom {
		return EntityRef{}, "invalid 'namespace'", nil
	}
	et, err := findEntityType(t, site, r.EntityTypeID, r.Namespace)
	var nf *NotFoundError
	if errors.As(err, &nf) {
		return EntityRef{}, nf.Msg, nil
	}
	if err != nil {
		return EntityRef{}, "", err
	}
	ok, err := t.exists(entityKey(site, et.EntityTypeID, r.EntityID))
	if err != nil {
		return EntityRef{}, "", err
	}
	if !ok {
		return EntityRef{}, entityNotFound(r.EntityID).Error(), nil
	}
	return EntityRef{EntityTypeID: et.EntityTypeID, EntityID: r.EntityID, Namespace: et.Namespace}, "", nil
}

// AddEntityType is the payload of OpAddEntityType.
type AddEntityType struct {
	EntityType EntityType `json:"entityType"`
}

// DeleteEntityType is the payload of OpDeleteEntityType.
type DeleteEntityType struct {
	EntityTypeID string `json:"entityTypeId"`
	Namespace    string `json:"namespace,omitempty"`
}

// PutEntity is the payload of OpPutEntity: create, replace or update one
// entity.
type PutEntity struct {
	EntityTypeID string `json:"entityTypeId"`
	Namespace    string `json:"namespace,omitempty"`
	Entity       Entity `json:"entity"`
	// Mode is "add" (new id), "set" (replace; CreateIfMissing allows a new
	// id) or "update" (name and the given attributes change).
	Mode            string `json:"mode"`
	CreateIfMissing bool   `json:"createIfMissing,omitempty"`
}

// DeleteEntity is the payload of OpDeleteEntity; with AttributeKey only
// that attribute is removed.
type DeleteEntity struct {
	EntityTypeID string `json:"entityTypeId"`
	Namespace    string `json:"namespace,omitempty"`
	EntityID     string `json:"entityId"`
	AttributeKey string `json:"attributeKey,omitempty"`
}

func applyAddEntityType(t *tx, c *Command) (any, error) {
	p, err := decode[AddEntityType](c)
	if err != nil {
		return nil, err
	}
	et := p.EntityType
	if err := checkName("name", et.Name); err != nil {
		return nil, err
	}
	if et.Namespace == NamespacePreset {
		if !slices.Contains(PresetEntityTypes, et.Name) {
			return nil, Invalid("name", fmt.Sprintf("unsupported PRESET entity type '%s'", et.Name))
		}
		return et.Name, nil // presets always exist
	}
	ok, err := t.exists(entityTypeNameKey(c.Site, et.Namespace, et.Name))
	if err != nil {
		return nil, err
	}
	if ok {
		return nil, Invalid("name", fmt.Sprintf("EntityType '%s' already exists", et.Name))
	}
	f := newDefFields(c) // RulesDefinitionFields: PUT /entityTypes/{id} names the id
	if f.name("entityTypeId", et.EntityTypeID); f.err() != nil {
		return nil, f.err()
	}
	et.InsertedDate, et.UserID = c.At, c.User
	if err := t.setJSON(entityTypeKey(c.Site, et.EntityTypeID), et); err != nil {
		return nil, err
	}
	if err := t.set(entityTypeNameKey(c.Site, et.Namespace, et.Name), []byte(et.EntityTypeID)); err != nil {
		return nil, err
	}
	return et.EntityTypeID, ensureSite(t, c)
}

func applyDeleteEntityType(t *tx, c *Command) (any, error) {
	p, err := decode[DeleteEntityType](c)
	if err != nil {
		return nil, err
	}
	et, err := findEntityType(t, c.Site, p.EntityTypeID, p.Namespace)
	if err != nil {
		return nil, err
	}
	if len(t.firstKey(entityPrefix(c.Site, et.EntityTypeID))) > 0 {
		return nil, Invalid("entityTypeId", fmt.Sprintf("EntityType '%s' has entities, cannot be deleted", p.EntityTypeID))
	}
	if et.Namespace == NamespacePreset {
		return nil, Invalid("entityTypeId", "PRESET entity types cannot be deleted")
	}
	if err := t.del(entityTypeNameKey(c.Site, et.Namespace, et.Name)); err != nil {
		return nil, err
	}
	return nil, t.del(entityTypeKey(c.Site, et.EntityTypeID))
}

// checkEntityAttributes types the attributes of an entity; preset
// entities' known keys must have their type.
func checkEntityAttributes(et *EntityType, attrs []EntityAttribute) error {
	var items []ValidationItem
	for i := range attrs {
		a := &attrs[i]
		if a.Key == "" {
			items = append(items, ValidationItem{Key: "key", Msg: "'key' is required"})
			continue
		}
		if want, ok := presetAttributeTypes[a.Key]; ok && et.Namespace == NamespacePreset && want != a.ValueType {
			items = append(items, ValidationItem{Key: a.Key, Msg: fmt.Sprintf("attribute only support %s value", lower(want))})
		}
		sort.Strings(a.Strings)
		sort.Float64s(a.Numbers)
	}
	if len(items) > 0 {
		return &ValidationError{Items: items}
	}
	return nil
}

// checkEntityFields bounds an entity as it is stored after the command
// (RulesDefinitionFields): its id, at most MaxAttributesPerRequest
// attributes (an update adds to those it has), each attribute's key and
// at most MaxValuesPerKey values of MaxValueBytes.
func checkEntityFields(c *Command, e *Entity) error {
	f := newDefFields(c)
	f.name("entityId", e.EntityID)
	if f.count("attributes", len(e.Attributes), MaxAttributesPerRequest) {
		for _, a := range e.Attributes {
			f.name("key", a.Key)
			f.values("stringValues", a.Strings, MaxValuesPerKey)
			f.count("numberValues", len(a.Numbers), MaxValuesPerKey)
		}
	}
	return f.err()
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func applyPutEntity(t *tx, c *Command) (any, error) {
	p, err := decode[PutEntity](c)
	if err != nil {
		return nil, err
	}
	if err := checkName("name", p.Entity.Name); err != nil {
		return nil, err
	}
	et, err := findEntityType(t, c.Site, p.EntityTypeID, p.Namespace)
	if err != nil {
		return nil, err
	}
	e := p.Entity
	e.EntityTypeID = et.EntityTypeID
	k := entityKey(c.Site, et.EntityTypeID, e.EntityID)
	var old Entity
	err = t.getJSON(k, &old)
	exists := err == nil
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	switch p.Mode {
	case "add":
		if exists {
			return nil, &ConflictError{Msg: fmt.Sprintf("Entity '%s' already exists", e.EntityID)}
		}
		e.InsertedDate, e.UserID = c.At, c.User
	case "set":
		if !exists && !p.CreateIfMissing {
			return nil, entityNotFound(e.EntityID)
		}
		e.InsertedDate, e.UserID = c.At, c.User
		if exists {
			e.InsertedDate, e.UserID = old.InsertedDate, old.UserID
		}
	case "update":
		if !exists {
			return nil, entityNotFound(e.EntityID)
		}
		merged := old
		if e.Name != "" {
			merged.Name = e.Name
		}
		for _, a := range e.Attributes {
			i := slices.IndexFunc(merged.Attributes, func(o EntityAttribute) bool { return o.Key == a.Key })
			if i >= 0 {
				merged.Attributes[i] = a
			} else {
				merged.Attributes = append(merged.Attributes, a)
			}
		}
		e = merged
	default:
		return nil, fmt.Errorf("put entity: unknown mode %q", p.Mode)
	}
	sort.Slice(e.Attributes, func(i, j int) bool { return e.Attributes[i].Key < e.Attributes[j].Key })
	if err := checkEntityAttributes(et, e.Attributes); err != nil {
		return nil, err
	}
	if err := checkEntityFields(c, &e); err != nil {
		return nil, err
	}
	if err := t.setJSON(k, e); err != nil {
		return nil, err
	}
	return e.EntityID, ensureSite(t, c)
}

func applyDeleteEntity(t *tx, c *Command) (any, error) {
	p, err := decode[DeleteEntity](c)
	if err != nil {
		return nil, err
	}
	et, err := findEntityType(t, c.Site, p.EntityTypeID, p.Namespace)
	if err != nil {
		return nil, err
	}
	k := entityKey(c.Site, et.EntityTypeID, p.EntityID)
	var e Entity
	if err := t.getJSON(k, &e); err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, entityNotFound(p.EntityID)
		}
		return nil, err
	}
	if p.AttributeKey != "" {
		i := slices.IndexFunc(e.Attributes, func(a EntityAttribute) bool { return a.Key == p.AttributeKey })
		if i < 0 {
			return nil, &NotFoundError{Msg: fmt.Sprintf("attribute '%s' not found on entity '%s'", p.AttributeKey, p.EntityID)}
		}
		e.Attributes = slices.Delete(e.Attributes, i, i+1)
		return nil, t.setJSON(k, e)
	}
	return nil, t.del(k)
}

// GetEntityType resolves an entity type by id or name.
func (d *DB) GetEntityType(site, idOrName, namespace string) (*EntityType, error) {
	var out *EntityType
	err := d.view(func(t *tx) error {
		var err error
		out, err = findEntityType(t, site, idOrName, namespace)
		return err
	})
	return out, err
}

// EntityTypes lists the entity types of a namespace (CUSTOM ones by id,
// or the presets).
func (d *DB) EntityTypes(site, namespace, after string, limit int) ([]EntityType, string, error) {
	if namespace == NamespacePreset {
		var out []EntityType
		var next string
		for _, n := range PresetEntityTypes {
			if n > after {
				out = append(out, EntityType{EntityTypeID: n, Namespace: NamespacePreset, Name: n})
			}
		}
		if limit > 0 && len(out) > limit {
			out, next = out[:limit], out[limit-1].EntityTypeID
		}
		return out, next, nil
	}
	return listPage(d, entityTypePrefix(site), after, limit, func(et *EntityType) string { return et.EntityTypeID })
}

// GetEntity returns one entity.
func (d *DB) GetEntity(site, typeIDOrName, namespace, id string) (*Entity, error) {
	var e Entity
	err := d.view(func(t *tx) error {
		et, err := findEntityType(t, site, typeIDOrName, namespace)
		if err != nil {
			return err
		}
		err = t.getJSON(entityKey(site, et.EntityTypeID, id), &e)
		if errors.Is(err, ErrNotFound) {
			return entityNotFound(id)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &e, nil
}

// Entities lists the entities of a type by id after after.
func (d *DB) Entities(site, typeIDOrName, namespace, after string, limit int) ([]Entity, string, error) {
	var out []Entity
	var next string
	err := d.view(func(t *tx) error {
		et, err := findEntityType(t, site, typeIDOrName, namespace)
		if err != nil {
			return err
		}
		out, next, err = scanPage(t, entityPrefix(site, et.EntityTypeID), after, limit, func(e *Entity) string { return e.EntityID })
		return err
	})
	return out, next, err
}

// LlmPrompt returns the LlmPrompt entity named (or with the id) name.
func (d *DB) LlmPrompt(site, name string) (*Entity, error) {
	if e, err := d.GetEntity(site, "LlmPrompt", NamespacePreset, name); err == nil {
		return e, nil
	}
	list, _, err := d.Entities(site, "LlmPrompt", NamespacePreset, "", 0)
	if err != nil {
		return nil, err
	}
	for i := range list {
		if list[i].Name == name {
			return &list[i], nil
		}
	}
	return nil, entityNotFound(name)
}

// String returns the first string value of an entity attribute ("" when
// absent), and Number its first number (0 when absent).
func (e *Entity) String(key string) string {
	for _, a := range e.Attributes {
		if a.Key == key && len(a.Strings) > 0 {
			return a.Strings[0]
		}
	}
	return ""
}

// Strings returns the string values of an entity attribute.
func (e *Entity) Strings(key string) []string {
	for _, a := range e.Attributes {
		if a.Key == key {
			return a.Strings
		}
	}
	return nil
}

// Number returns the first number value of an entity attribute.
func (e *Entity) Number(key string) float64 {
	for _, a := range e.Attributes {
		if a.Key == key && len(a.Numbers) > 0 {
			return a.Numbers[0]
		}
	}
	return 0
}
