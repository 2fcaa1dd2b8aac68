package vocabulary

import (
	"fmt"
	"net/http"

	"quire/server/internal/api"
	"quire/storage"
)

type mappingIn struct {
	Name            *string                         `json:"name"`
	Description     string                          `json:"description"`
	Attributes      []storage.MappingAttribute      `json:"attributes"`
	Classifications []storage.MappingClassification `json:"classifications"`
}

func (s *Handlers) readMapping(r *api.Request) (storage.Mapping, error) {
	var b struct {
		Mapping *mappingIn `json:"mapping"`
	}
	if err := r.ReadBody(&b, s.Deps.MaxBodyBytes); err != nil {
		return storage.Mapping{}, err
	}
	if b.Mapping == nil {
		return storage.Mapping{}, api.Invalid("mapping", "'mapping' is required")
	}
	in := b.Mapping
	return storage.Mapping{Name: api.Deref(in.Name), Description: in.Description, Attributes: in.Attributes, Classifications: in.Classifications}, nil
}

func mappingJSON(m *storage.Mapping) map[string]any {
	return map[string]any{
		"mappingId":       m.MappingID,
		"name":            m.Name,
		"description":     m.Description,
		"attributes":      api.NonNil(m.Attributes),
		"classifications": api.NonNil(m.Classifications),
	}
}

// HandleAddMapping serves POST /mappings.
func (s *Handlers) HandleAddMapping(r *api.Request) error {
	m, err := s.readMapping(r)
	if err != nil {
		return err
	}
	m.MappingID = r.NewID()
	if _, err := s.Apply(r, storage.OpPutMapping, storage.PutMapping{Mapping: m, Create: true}); err != nil {
		return err
	}
	return r.Status(http.StatusCreated).JSON(map[string]any{"mappingId": m.MappingID})
}

// HandleSetMapping serves PUT /mappings/{mappingId}.
func (s *Handlers) HandleSetMapping(r *api.Request) error {
	m, err := s.readMapping(r)
	if err != nil {
		return err
	}
	m.MappingID = api.PathParam(r, "mappingId")
	if _, err := s.Apply(r, storage.OpPutMapping, storage.PutMapping{Mapping: m}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "Mapping set"})
}

// HandleGetMapping serves GET /mappings/{mappingId}.
func (s *Handlers) HandleGetMapping(r *api.Request) error {
	m, err := s.DB.GetMapping(r.Site, api.PathParam(r, "mappingId"))
	if err != nil {
		return err
	}
	return r.JSON(map[string]any{"mapping": mappingJSON(m)})
}

// HandleGetMappings serves GET /mappings.
func (s *Handlers) HandleGetMappings(r *api.Request) error {
	return api.KeyPage(r, "mp", "mappings", func(after string, limit int) ([]storage.Mapping, string, error) {
		return s.DB.Mappings(r.Site, after, limit)
	}, mappingJSON)
}

// HandleDeleteMapping serves DELETE /mappings/{mappingId}.
func (s *Handlers) HandleDeleteMapping(r *api.Request) error {
	id := api.PathParam(r, "mappingId")
	if _, err := s.Apply(r, storage.OpDeleteMapping, storage.DeleteMapping{MappingID: id}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf("Mapping '%s' deleted", id)})
}
