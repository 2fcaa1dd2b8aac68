package vocabulary

import (
	"net/http"
	"slices"
	"strings"

	"quire/server/internal/api"
	"quire/storage"
)

func entityTypeJSON(et *storage.EntityType) map[string]any {
	m := map[string]any{"entityTypeId": et.EntityTypeID, "namespace": et.Namespace, "name": et.Name}
	if !et.InsertedDate.IsZero() {
		m["insertedDate"] = api.FormatDate(et.InsertedDate)
	}
	return m
}

// namespaceQuery reads the optional namespace query parameter.
func namespaceQuery(r *api.Request) (string, error) {
	ns := strings.ToUpper(r.Query("namespace"))
	if ns != "" && ns != storage.NamespacePreset && ns != storage.NamespaceCustom {
		return "", api.Invalid("namespace", "invalid 'namespace'")
	}
	return ns, nil
}

type entityTypeIn struct {
	Namespace *string `json:"namespace"`
	Name      *string `json:"name"`
}

func (s *Handlers) readEntityType(r *api.Request) (storage.EntityType, error) {
	var b struct {
		EntityType *entityTypeIn `json:"entityType"`
	}
	if err := r.ReadBody(&b, s.Deps.MaxBodyBytes); err != nil {
		return storage.EntityType{}, err
	}
	if b.EntityType == nil {
		return storage.EntityType{}, api.Invalid("entityType", "'entityType' is required")
	}
	var errs []storage.ValidationItem
	et := storage.EntityType{Namespace: strings.ToUpper(api.Deref(b.EntityType.Namespace)), Name: api.Deref(b.EntityType.Name)}
	switch {
	case et.Namespace == "":
		errs = append(errs, storage.ValidationItem{Key: "namespace", Msg: "'namespace' is required"})
	case et.Namespace != storage.NamespacePreset && et.Namespace != storage.NamespaceCustom:
		errs = append(errs, storage.ValidationItem{Key: "namespace", Msg: "invalid 'namespace'"})
	}
	switch {
	case et.Name == "":
		errs = append(errs, storage.ValidationItem{Key: "name", Msg: "'name' is required"})
	case len(et.Name) > 128 || strings.ContainsAny(et.Name, "/#\x00"):
		errs = append(errs, storage.ValidationItem{Key: "name", Msg: "invalid 'name'"})
	}
	return et, api.CheckErrors(errs)
}

// HandleAddEntityType serves POST /entityTypes.
func (s *Handlers) HandleAddEntityType(r *api.Request) error {
	et, err := s.readEntityType(r)
	if err != nil {
		return err
	}
	et.EntityTypeID = r.NewID()
	res, err := s.Apply(r, storage.OpAddEntityType, storage.AddEntityType{EntityType: et})
	if err != nil {
		return err
	}
	return r.Status(http.StatusCreated).JSON(map[string]any{"entityTypeId": res.Value})
}

// HandleGetEntityTypes serves GET /entityTypes.
func (s *Handlers) HandleGetEntityTypes(r *api.Request) error {
	ns, err := namespaceQuery(r)
	if err != nil {
		return err
	}
	if ns == "" {
		ns = storage.NamespaceCustom
	}
	return api.KeyPage(r, "et", "entityTypes", func(after string, limit int) ([]storage.EntityType, string, error) {
		return s.DB.EntityTypes(r.Site, ns, after, limit)
	}, entityTypeJSON)
}

// HandleGetEntityType serves GET /entityTypes/{entityTypeId}.
func (s *Handlers) HandleGetEntityType(r *api.Request) error {
	ns, err := namespaceQuery(r)
	if err != nil {
		return err
	}
	et, err := s.DB.GetEntityType(r.Site, api.PathParam(r, "entityTypeId"), ns)
	if err != nil {
		return err
	}
	return r.JSON(map[string]any{"entityType": entityTypeJSON(et)})
}

// HandleSetEntityType serves PUT /entityTypes/{entityTypeId}: it creates
// the type under that id (createIfMissing) or confirms an existing one.
func (s *Handlers) HandleSetEntityType(r *api.Request) error {
	et, err := s.readEntityType(r)
	if err != nil {
		return err
	}
	id := api.PathParam(r, "entityTypeId")
	cur, err := s.DB.GetEntityType(r.Site, id, et.Namespace)
	switch {
	case err == nil:
		if cur.Name != et.Name {
			return api.Invalid("name", "an entity type cannot be renamed")
		}
		return r.JSON(api.MessageBody{Message: "EntityType set"})
	case !api.IsNotFound(err):
		return err
	case !r.QueryBool("createIfMissing"):
		return err
	}
	et.EntityTypeID = id
	if _, err := s.Apply(r, storage.OpAddEntityType, storage.AddEntityType{EntityType: et}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "EntityType set"})
}

// HandleDeleteEntityType serves DELETE /entityTypes/{entityTypeId}.
func (s *Handlers) HandleDeleteEntityType(r *api.Request) error {
	ns, err := namespaceQuery(r)
	if err != nil {
		return err
	}
	p := storage.DeleteEntityType{EntityTypeID: api.PathParam(r, "entityTypeId"), Namespace: ns}
	if _, err := s.Apply(r, storage.OpDeleteEntityType, p); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "EntityType deleted"})
}

type entityAttributeIn struct {
	Key          string    `json:"key"`
	StringValue  *string   `json:"stringValue"`
	StringValues []string  `json:"stringValues"`
	NumberValue  *float64  `json:"numberValue"`
	NumberValues []float64 `json:"numberValues"`
	BooleanValue *bool     `json:"booleanValue"`
}

type entityIn struct {
	Name       *string             `json:"name"`
	Attributes []entityAttributeIn `json:"attributes"`
}

func (s *Handlers) readEntity(r *api.Request, nameRequired bool) (storage.Entity, error) {
	var b struct {
		Entity *entityIn `json:"entity"`
	}
	if err := r.ReadBody(&b, s.Deps.MaxBodyBytes); err != nil {
		return storage.Entity{}, err
	}
	if b.Entity == nil {
		return storage.Entity{}, api.Invalid("entity", "'entity' is required")
	}
	var errs []storage.ValidationItem
	e := storage.Entity{Name: api.Deref(b.Entity.Name)}
	if nameRequired && e.Name == "" {
		errs = append(errs, storage.ValidationItem{Key: "name", Msg: "'name' is required"})
	}
	for _, a := range b.Entity.Attributes {
		ea := storage.EntityAttribute{Key: a.Key}
		kinds := 0
		if a.StringValue != nil || a.StringValues != nil {
			kinds++
			ea.ValueType = storage.DataString
			if a.StringValue != nil {
				ea.Strings = append(ea.Strings, *a.StringValue)
			}
			ea.Strings = append(ea.Strings, a.StringValues...)
		}
		if a.NumberValue != nil || a.NumberValues != nil {
			kinds++
			ea.ValueType = storage.DataNumber
			if a.NumberValue != nil {
				ea.Numbers = append(ea.Numbers, *a.NumberValue)
			}
			ea.Numbers = append(ea.Numbers, a.NumberValues...)
		}
		if a.BooleanValue != nil {
			kinds++
			ea.ValueType, ea.Boolean = storage.DataBoolean, a.BooleanValue
		}
		if kinds == 0 {
			ea.ValueType = storage.DataKeyOnly
		}
		if kinds > 1 {
			errs = append(errs, storage.ValidationItem{Key: a.Key, Msg: "an entity attribute has one kind of value"})
		}
		if a.Key == "" {
			errs = append(errs, storage.ValidationItem{Key: "key", Msg: "'key' is required"})
		}
		if slices.ContainsFunc(e.Attributes, func(o storage.EntityAttribute) bool { return o.Key == a.Key }) {
			errs = append(errs, storage.ValidationItem{Key: a.Key, Msg: "attribute key listed more than once"})
		}
		e.Attributes = append(e.Attributes, ea)
	}
	return e, api.CheckErrors(errs)
}

func entityJSON(e *storage.Entity) map[string]any {
	attrs := make([]map[string]any, 0, len(e.Attributes))
	for _, a := range e.Attributes {
		m := map[string]any{"key": a.Key, "valueType": a.ValueType}
		switch len(a.Strings) {
		case 0:
		case 1:
			m["stringValue"] = a.Strings[0]
		default:
			m["stringValues"] = a.Strings
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
		attrs = append(attrs, m)
	}
	return map[string]any{
		"entityId":     e.EntityID,
		"entityTypeId": e.EntityTypeID,
		"name":         e.Name,
		"insertedDate": api.FormatDate(e.InsertedDate),
		"attributes":   attrs,
	}
}

// HandleAddEntity serves POST /entities/{entityTypeId}.
func (s *Handlers) HandleAddEntity(r *api.Request) error {
	ns, err := namespaceQuery(r)
	if err != nil {
		return err
	}
	e, err := s.readEntity(r, true)
	if err != nil {
		return err
	}
	e.EntityID = r.NewID()
	p := storage.PutEntity{EntityTypeID: api.PathParam(r, "entityTypeId"), Namespace: ns, Entity: e, Mode: "add"}
	if _, err := s.Apply(r, storage.OpPutEntity, p); err != nil {
		return err
	}
	return r.Status(http.StatusCreated).JSON(map[string]any{"entityId": e.EntityID})
}

// HandleGetEntities serves GET /entities/{entityTypeId}.
func (s *Handlers) HandleGetEntities(r *api.Request) error {
	ns, err := namespaceQuery(r)
	if err != nil {
		return err
	}
	return api.KeyPage(r, "en", "entities", func(after string, limit int) ([]storage.Entity, string, error) {
		return s.DB.Entities(r.Site, api.PathParam(r, "entityTypeId"), ns, after, limit)
	}, entityJSON)
}

// HandleGetEntity serves GET /entities/{entityTypeId}/{entityId}.
func (s *Handlers) HandleGetEntity(r *api.Request) error {
	ns, err := namespaceQuery(r)
	if err != nil {
		return err
	}
	e, err := s.DB.GetEntity(r.Site, api.PathParam(r, "entityTypeId"), ns, api.PathParam(r, "entityId"))
	if err != nil {
		return err
	}
	return r.JSON(map[string]any{"entity": entityJSON(e)})
}

func (s *Handlers) putEntity(r *api.Request, mode string) error {
	ns, err := namespaceQuery(r)
	if err != nil {
		return err
	}
	e, err := s.readEntity(r, mode == "set")
	if err != nil {
		return err
	}
	e.EntityID = api.PathParam(r, "entityId")
	p := storage.PutEntity{EntityTypeID: api.PathParam(r, "entityTypeId"), Namespace: ns, Entity: e, Mode: mode, CreateIfMissing: r.QueryBool("createIfMissing")}
	_, err = s.Apply(r, storage.OpPutEntity, p)
	return err
}

// HandleSetEntity serves PUT /entities/{entityTypeId}/{entityId}.
func (s *Handlers) HandleSetEntity(r *api.Request) error {
	if err := s.putEntity(r, "set"); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "Entity set"})
}

// HandleUpdateEntity serves PATCH /entities/{entityTypeId}/{entityId}.
func (s *Handlers) HandleUpdateEntity(r *api.Request) error {
	if err := s.putEntity(r, "update"); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "Entity updated"})
}

// HandleDeleteEntity serves DELETE /entities/{entityTypeId}/{entityId}
// and …/attributes/{attributeKey}.
func (s *Handlers) HandleDeleteEntity(r *api.Request) error {
	ns, err := namespaceQuery(r)
	if err != nil {
		return err
	}
	p := storage.DeleteEntity{EntityTypeID: api.PathParam(r, "entityTypeId"), Namespace: ns, EntityID: api.PathParam(r, "entityId")}
	if r.Params("attributeKey") != "" {
		p.AttributeKey = api.PathParam(r, "attributeKey")
	}
	if _, err := s.Apply(r, storage.OpDeleteEntity, p); err != nil {
		return err
	}
	if p.AttributeKey != "" {
		return r.JSON(api.MessageBody{Message: "Entity attribute deleted"})
	}
	return r.JSON(api.MessageBody{Message: "Entity deleted"})
}
