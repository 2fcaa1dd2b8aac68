package server

import (
	"fmt"
	"net/http"

	"quire/storage"
)

type mappingIn struct {
	Name            *string                         `json:"name"`
	Description     string                          `json:"description"`
	Attributes      []storage.MappingAttribute      `json:"attributes"`
	Classifications []storage.MappingClassification `json:"classifications"`
}

func (s *Server) readMapping(r *reqCtx) (storage.Mapping, error) {
	var b struct {
		Mapping *mappingIn `json:"mapping"`
	}
	if err := r.readBody(&b, s.deps.MaxBodyBytes); err != nil {
		return storage.Mapping{}, err
	}
	if b.Mapping == nil {
		return storage.Mapping{}, invalid("mapping", "'mapping' is required")
	}
	in := b.Mapping
	return storage.Mapping{Name: deref(in.Name), Description: in.Description, Attributes: in.Attributes, Classifications: in.Classifications}, nil
}

func mappingJSON(m *storage.Mapping) map[string]any {
	return map[string]any{
		"mappingId":       m.MappingID,
		"name":            m.Name,
		"description":     m.Description,
		"attributes":      nonNil(m.Attributes),
		"classifications": nonNil(m.Classifications),
	}
}

// handleAddMapping serves POST /mappings.
func (s *Server) handleAddMapping(r *reqCtx) error {
	m, err := s.readMapping(r)
	if err != nil {
		return err
	}
	m.MappingID = r.newID()
	if _, err := s.apply(r, storage.OpPutMapping, storage.PutMapping{Mapping: m, Create: true}); err != nil {
		return err
	}
	return r.Status(http.StatusCreated).JSON(map[string]any{"mappingId": m.MappingID})
}

// handleSetMapping serves PUT /mappings/{mappingId}.
func (s *Server) handleSetMapping(r *reqCtx) error {
	m, err := s.readMapping(r)
	if err != nil {
		return err
	}
	m.MappingID = pathParam(r, "mappingId")
	if _, err := s.apply(r, storage.OpPutMapping, storage.PutMapping{Mapping: m}); err != nil {
		return err
	}
	return r.JSON(messageBody{"Mapping set"})
}

// handleGetMapping serves GET /mappings/{mappingId}.
func (s *Server) handleGetMapping(r *reqCtx) error {
	m, err := s.db.GetMapping(r.site, pathParam(r, "mappingId"))
	if err != nil {
		return err
	}
	return r.JSON(map[string]any{"mapping": mappingJSON(m)})
}

// handleGetMappings serves GET /mappings.
func (s *Server) handleGetMappings(r *reqCtx) error {
	return keyPage(r, "mp", "mappings", func(after string, limit int) ([]storage.Mapping, string, error) {
		return s.db.Mappings(r.site, after, limit)
	}, mappingJSON)
}

// handleDeleteMapping serves DELETE /mappings/{mappingId}.
func (s *Server) handleDeleteMapping(r *reqCtx) error {
	id := pathParam(r, "mappingId")
	if _, err := s.apply(r, storage.OpDeleteMapping, storage.DeleteMapping{MappingID: id}); err != nil {
		return err
	}
	return r.JSON(messageBody{fmt.Sprintf("Mapping '%s' deleted", id)})
}
