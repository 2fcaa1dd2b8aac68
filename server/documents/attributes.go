package documents

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"quire/auth"
	"quire/pipeline/pdfwork"
	"quire/server/internal/api"
	"quire/storage"
)

type attributeDefIn struct {
	Key             *string         `json:"key"`
	DataType        *string         `json:"dataType"`
	Type            *string         `json:"type"`
	ValidationRegex *string         `json:"validationRegex"`
	Watermark       json.RawMessage `json:"watermark"`
}

func attributeDefJSON(d *storage.AttributeDef) map[string]any {
	m := map[string]any{"key": d.Key, "dataType": d.DataType, "type": d.Type}
	if d.ValidationRegex != "" {
		m["validationRegex"] = d.ValidationRegex
	}
	if len(d.Watermark) > 0 {
		m["watermark"] = d.Watermark
	}
	return m
}

// checkAttributeKey validates a client-chosen attribute key.
func checkAttributeKey(k string) string {
	switch {
	case k == "":
		return "'key' is required"
	case len(k) > storage.MaxKeyBytes:
		return "'key' is too long"
	case storage.CheckText("key", k, storage.MaxKeyBytes) != nil:
		return "invalid 'key'"
	}
	return ""
}

// HandleAddAttribute serves POST /attributes.
func (s *Handlers) HandleAddAttribute(r *api.Request) error {
	var b struct {
		Attribute *attributeDefIn `json:"attribute"`
	}
	if err := r.ReadBody(&b, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	if b.Attribute == nil {
		return api.BadRequest("invalid request body") // FormKiQ's message
	}
	in := b.Attribute
	var errs []storage.ValidationItem
	key := api.Deref(in.Key)
	if msg := checkAttributeKey(key); msg != "" {
		errs = append(errs, storage.ValidationItem{Key: "key", Msg: msg})
	} else if storage.IsReservedAttributeName(key) { // early answer; the applier decides
		errs = append(errs, storage.ValidationItem{Key: "key", Msg: fmt.Sprintf("'%s' is a reserved attribute name", key)})
	}
	def := storage.AttributeDef{Key: key, DataType: storage.DataString, Type: storage.AttrStandard, Watermark: in.Watermark}
	if in.DataType != nil {
		def.DataType = strings.ToUpper(*in.DataType)
		if !slices.Contains(storage.DataTypes, def.DataType) {
			errs = append(errs, storage.ValidationItem{Key: "dataType", Msg: "invalid 'dataType'"})
		}
	}
	if in.Type != nil {
		def.Type = strings.ToUpper(*in.Type)
		if !slices.Contains(storage.AttributeTypes, def.Type) {
			errs = append(errs, storage.ValidationItem{Key: "type", Msg: "invalid 'type'"})
		}
	}
	if in.ValidationRegex != nil && *in.ValidationRegex != "" {
		if _, err := regexp.Compile(*in.ValidationRegex); err != nil {
			errs = append(errs, storage.ValidationItem{Key: "validationRegex", Msg: "invalid 'validationRegex'"})
		}
		def.ValidationRegex = *in.ValidationRegex
	}
	errs = append(errs, unsupportedAttribute(in.Type)...)
	switch hasWM := len(in.Watermark) > 0 && string(in.Watermark) != "null"; {
	case def.DataType == storage.DataWatermark && !hasWM:
		errs = append(errs, storage.ValidationItem{Key: "watermark", Msg: "'watermark' is required for 'WATERMARK' attributes"})
	case def.DataType == storage.DataWatermark:
		errs = append(errs, checkWatermark(in.Watermark)...)
	case hasWM:
		errs = append(errs, storage.ValidationItem{Key: "watermark", Msg: "'watermark' is only for 'WATERMARK' attributes"})
	default:
		def.Watermark = nil
	}
	if def.Type == storage.AttrGovernance {
		if err := r.Principal.Require(r.Site, auth.PermGovern); err != nil {
			return err
		}
	}
	if err := api.CheckErrors(errs); err != nil {
		return err
	}
	if _, err := s.Apply(r, storage.OpAddAttribute, storage.AddAttribute{Def: def}); err != nil {
		return err
	}
	return r.Status(http.StatusCreated).JSON(api.MessageBody{Message: fmt.Sprintf("Attribute '%s' created", key)})
}

// HandleGetAttributes serves GET /attributes.
func (s *Handlers) HandleGetAttributes(r *api.Request) error {
	return api.KeyPage(r, "a", "attributes", func(after string, limit int) ([]storage.AttributeDef, string, error) {
		return s.DB.AttributeDefs(r.Site, after, limit)
	}, attributeDefJSON)
}

// HandleGetAttribute serves GET /attributes/{key}.
func (s *Handlers) HandleGetAttribute(r *api.Request) error {
	d, err := s.DB.AttributeDefinition(r.Site, api.PathParam(r, "key"))
	if err != nil {
		return err
	}
	return r.JSON(map[string]any{"attribute": attributeDefJSON(d)})
}

// HandleUpdateAttribute serves PATCH /attributes/{key}.
func (s *Handlers) HandleUpdateAttribute(r *api.Request) error {
	key := api.PathParam(r, "key")
	var b struct {
		Attribute *attributeDefIn `json:"attribute"`
	}
	if err := r.ReadBody(&b, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	if b.Attribute == nil {
		return api.Invalid("attribute", "'attribute' is required")
	}
	in := b.Attribute
	var errs []storage.ValidationItem
	upd := storage.UpdateAttribute{Key: key, ValidationRegex: in.ValidationRegex, Watermark: in.Watermark}
	if in.Type != nil {
		t := strings.ToUpper(*in.Type)
		if !slices.Contains(storage.AttributeTypes, t) {
			errs = append(errs, storage.ValidationItem{Key: "type", Msg: "invalid 'type'"})
		}
		upd.Type = &t
	}
	if in.ValidationRegex != nil && *in.ValidationRegex != "" {
		if _, err := regexp.Compile(*in.ValidationRegex); err != nil {
			errs = append(errs, storage.ValidationItem{Key: "validationRegex", Msg: "invalid 'validationRegex'"})
		}
	}
	errs = append(errs, unsupportedAttribute(in.Type)...)
	if string(in.Watermark) == "null" {
		upd.Watermark = nil
	} else if len(in.Watermark) > 0 {
		// The applier refuses it on an attribute that is not WATERMARK.
		// Changing a watermark could lift it: GOVERN's, as a bypass is.
		if err := r.Principal.Require(r.Site, auth.PermGovern); err != nil {
			return err
		}
		errs = append(errs, checkWatermark(in.Watermark)...)
	}
	if in.DataType != nil {
		errs = append(errs, storage.ValidationItem{Key: "dataType", Msg: "'dataType' cannot be changed"})
	}
	if storage.IsReservedAttribute(key) {
		errs = append(errs, storage.ValidationItem{Key: "key", Msg: fmt.Sprintf("'%s' is a reserved attribute name", key)})
	}
	if err := api.CheckErrors(errs); err != nil {
		return err
	}
	if _, err := s.Apply(r, storage.OpUpdateAttribute, upd); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf("Attribute '%s' updated", key)})
}

// HandleDeleteAttribute serves DELETE /attributes/{key}.
func (s *Handlers) HandleDeleteAttribute(r *api.Request) error {
	key := api.PathParam(r, "key")
	if storage.IsReservedAttribute(key) {
		return api.Invalid("key", fmt.Sprintf("'%s' is a reserved attribute name", key))
	}
	if _, err := s.Apply(r, storage.OpDeleteAttribute, storage.DeleteAttribute{Key: key}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf("Attribute '%s' deleted", key)})
}

// HandleGetAttributeAllowedValues serves GET /attributes/{key}/allowedValues
// (site schema and every classification).
func (s *Handlers) HandleGetAttributeAllowedValues(r *api.Request) error {
	key := api.PathParam(r, "key")
	if _, err := s.DB.AttributeDefinition(r.Site, key); err != nil {
		return err
	}
	vals, err := s.DB.AllowedValues(r.Site, key, "", true)
	if err != nil {
		return err
	}
	return r.JSON(map[string]any{"allowedValues": vals})
}

// docAttributeJSON renders a stored document attribute as FormKiQ's
// DocumentAttribute.
func docAttributeJSON(a *storage.DocAttribute) map[string]any {
	m := map[string]any{
		"key":          a.Key,
		"valueType":    a.ValueType,
		"insertedDate": api.FormatDate(a.InsertedDate),
		"userId":       a.UserID,
	}
	strs := "string"
	if a.ValueType == storage.DataDate {
		strs = "date"
	}
	switch len(a.Strings) {
	case 0:
	case 1:
		m[strs+"Value"] = a.Strings[0]
	default:
		m[strs+"Values"] = a.Strings
	}
	switch len(a.Numbers) {
	case 0:
	case 1:
		m["numberValue"] = a.Numbers[0]
	default:
		m["numberValues"] = a.Numbers
	}
	if a.Boolean != nil {
		m["booleanValue"] = *a.Boolean
	}
	ents := make([]map[string]any, 0, len(a.Entities))
	for _, e := range a.Entities {
		ents = append(ents, map[string]any{"entityTypeId": e.EntityTypeID, "entityId": e.EntityID, "namespace": e.Namespace})
	}
	switch len(ents) {
	case 0:
	case 1:
		m["entity"] = ents[0]
	default:
		m["entities"] = ents
	}
	return m
}

// readDocAttributes reads {"attributes":[…]} or the single form
// {"attribute":{…}}.
func (s *Handlers) readDocAttributes(r *api.Request) ([]storage.AttributeInput, error) {
	var b struct {
		Attributes []storage.AttributeInput `json:"attributes"`
		Attribute  *storage.AttributeInput  `json:"attribute"`
	}
	if err := r.ReadBody(&b, s.Deps.MaxBodyBytes); err != nil {
		return nil, err
	}
	if b.Attribute != nil {
		b.Attributes = append(b.Attributes, *b.Attribute)
	}
	if len(b.Attributes) == 0 {
		return nil, api.Invalid("attributes", "'attributes' is required")
	}
	return b.Attributes, api.CheckErrors(checkAttributeInputs(b.Attributes, "attributes"))
}

// checkAttributeInputs validates the shape of attribute inputs: each is one
// FormKiQ variant. The values are checked by storage against definitions.
func checkAttributeInputs(ins []storage.AttributeInput, field string) []storage.ValidationItem {
	var errs []storage.ValidationItem
	if len(ins) > storage.MaxAttributesPerRequest {
		return storage.CheckAttributes(field, ins)
	}
	for i := range ins {
		in := &ins[i]
		variants := 0
		if in.ClassificationID != "" {
			variants++
		}
		if in.DocumentID != "" || in.Relationship != "" {
			variants++
		}
		if in.Key != "" || variants == 0 {
			variants++
		}
		if variants > 1 {
			errs = append(errs, storage.ValidationItem{Key: field, Msg: "an attribute is one of: a key with values, a classificationId, or a relationship"})
		}
		if in.Key != "" {
			if msg := checkAttributeKey(in.Key); msg != "" {
				errs = append(errs, storage.ValidationItem{Key: "key", Msg: msg})
			}
		}
	}
	if len(errs) == 0 {
		errs = storage.CheckAttributes(field, ins)
	}
	return errs
}

// HandleGetDocumentAttributes serves GET /documents/{documentId}/attributes.
func (s *Handlers) HandleGetDocumentAttributes(r *api.Request) error {
	return api.KeyPage(r, "da", "attributes", func(after string, limit int) ([]storage.DocAttribute, string, error) {
		return s.DB.DocAttributes(r.Site, r.DocID(), after, limit)
	}, docAttributeJSON)
}

// HandleGetDocumentAttribute serves GET /documents/{documentId}/attributes/{attributeKey}.
func (s *Handlers) HandleGetDocumentAttribute(r *api.Request) error {
	a, err := s.DB.DocAttribute(r.Site, r.DocID(), api.PathParam(r, "attributeKey"))
	if err != nil {
		return err
	}
	return r.JSON(map[string]any{"attribute": docAttributeJSON(a)})
}

func (s *Handlers) setDocAttributes(r *api.Request, p storage.SetDocAttributes) error {
	p.DocumentID = r.DocID()
	_, err := s.Apply(r, storage.OpSetDocAttributes, p)
	return err
}

// HandleAddDocumentAttributes serves POST /documents/{documentId}/attributes.
func (s *Handlers) HandleAddDocumentAttributes(r *api.Request) error {
	ins, err := s.readDocAttributes(r)
	if err != nil {
		return err
	}
	if err := s.setDocAttributes(r, storage.SetDocAttributes{Mode: storage.AttrAdd, Attributes: ins}); err != nil {
		return err
	}
	return r.Status(http.StatusCreated).JSON(api.MessageBody{Message: fmt.Sprintf("added attributes to documentId '%s'", r.DocID())})
}

// HandleSetDocumentAttributes serves PUT /documents/{documentId}/attributes.
func (s *Handlers) HandleSetDocumentAttributes(r *api.Request) error {
	ins, err := s.readDocAttributes(r)
	if err != nil {
		return err
	}
	if err := s.setDocAttributes(r, storage.SetDocAttributes{Mode: storage.AttrReplace, Attributes: ins}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf("set attributes on documentId '%s'", r.DocID())})
}

// HandleSetDocumentAttributeValue serves PUT /documents/{documentId}/attributes/{attributeKey}.
func (s *Handlers) HandleSetDocumentAttributeValue(r *api.Request) error {
	key := api.PathParam(r, "attributeKey")
	var b struct {
		Attribute *storage.AttributeInput `json:"attribute"`
	}
	if err := r.ReadBody(&b, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	if b.Attribute == nil {
		return api.Invalid("attribute", "'attribute' is required")
	}
	in := storage.AttributeInput{
		Key: key, StringValue: b.Attribute.StringValue, StringValues: b.Attribute.StringValues,
		NumberValue: b.Attribute.NumberValue, NumberValues: b.Attribute.NumberValues,
		BooleanValue: b.Attribute.BooleanValue, DateValue: b.Attribute.DateValue, DateValues: b.Attribute.DateValues,
		EntityTypeID: b.Attribute.EntityTypeID, EntityID: b.Attribute.EntityID, Namespace: b.Attribute.Namespace,
		Entities: b.Attribute.Entities,
	}
	if err := api.CheckErrors(checkAttributeInputs([]storage.AttributeInput{in}, "attribute")); err != nil {
		return err
	}
	if err := s.setDocAttributes(r, storage.SetDocAttributes{Mode: storage.AttrSet, Attributes: []storage.AttributeInput{in}}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf("Updated attribute '%s' on document '%s'", key, r.DocID())})
}

// HandleDeleteDocumentAttribute serves DELETE
// /documents/{documentId}/attributes/{attributeKey}[/{attributeValue}].
func (s *Handlers) HandleDeleteDocumentAttribute(r *api.Request) error {
	key := api.PathParam(r, "attributeKey")
	p := storage.SetDocAttributes{Mode: storage.AttrDelete, DeleteKey: key}
	if r.Params("attributeValue") != "" {
		v := api.PathParam(r, "attributeValue")
		p.DeleteValue = &v
	}
	if err := s.setDocAttributes(r, p); err != nil {
		return err
	}
	if p.DeleteValue != nil {
		return r.JSON(api.MessageBody{Message: fmt.Sprintf("attribute value '%s' removed from attribute '%s', document '%s'", *p.DeleteValue, key, r.DocID())})
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf("attribute '%s' removed from document '%s'", key, r.DocID())})
}

// checkWatermark validates a watermark definition (API.md "Watermarks").
func checkWatermark(raw json.RawMessage) []storage.ValidationItem {
	var errs []storage.ValidationItem
	_, probs := pdfwork.ParseMark(raw)
	for _, p := range probs {
		errs = append(errs, storage.ValidationItem{Key: p.Key, Msg: p.Msg})
	}
	return errs
}

// unsupportedAttribute refuses the attribute features FormKiQ acts on and
// Quire would only store: OPA attributes (inputs of FormKiQ's OPA access
// policies). Accepted silently, a user would believe access restricted.
func unsupportedAttribute(typ *string) []storage.ValidationItem {
	var errs []storage.ValidationItem
	if typ != nil && strings.EqualFold(*typ, storage.AttrOPA) {
		errs = append(errs, storage.ValidationItem{Key: "type", Msg: "'OPA' attributes are not supported: this server has no OPA access policies"})
	}
	return errs
}
