package search

import (
	"encoding/json"
	"net/http"
	"strings"

	"quire/auth"
	"quire/server/internal/api"
	"quire/storage"
)

// Saved searches (Quire; issue 47; storage/savedsearches.go; API.md
// "Saved searches"): a member of a site (READ) lists the site's shared
// searches and their own, and saves their own; sharing one with the site
// needs WRITE. Only its owner deletes a saved search.

func savedSearchJSON(s *storage.SavedSearch) map[string]any {
	return map[string]any{"savedSearchId": s.SavedSearchID, "name": s.Name, "query": s.Query,
		"shared": s.Shared, "userId": s.UserID, "insertedDate": api.FormatDate(s.InsertedDate)}
}

// HandleGetSavedSearches serves GET /sites/{siteId}/savedSearches.
func (s *Handlers) HandleGetSavedSearches(r *api.Request) error {
	return api.KeyPage(r, "ss", "savedSearches", func(after string, limit int) ([]storage.SavedSearch, string, error) {
		return s.DB.SavedSearches(r.Site, r.Principal.Username, after, limit)
	}, savedSearchJSON)
}

// HandleAddSavedSearch serves POST /sites/{siteId}/savedSearches.
func (s *Handlers) HandleAddSavedSearch(r *api.Request) error {
	var in struct {
		SavedSearch *struct {
			Name   string          `json:"name"`
			Query  json.RawMessage `json:"query"`
			Shared bool            `json:"shared"`
		} `json:"savedSearch"`
	}
	if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	if in.SavedSearch == nil {
		return api.Invalid("savedSearch", "'savedSearch' is required")
	}
	v := in.SavedSearch
	if err := storage.CheckSavedSearch(v.Name, v.Query); err != nil {
		return err
	}
	if v.Shared && !r.Principal.Can(r.Site, auth.PermWrite) {
		return api.Invalid("shared", "sharing a saved search with the site needs WRITE permission")
	}
	ss := storage.SavedSearch{SavedSearchID: r.NewID(), Name: v.Name, Query: v.Query, Shared: v.Shared}
	if _, err := s.Apply(r, storage.OpAddSavedSearch, ss); err != nil {
		return err
	}
	return r.Status(http.StatusCreated).JSON(map[string]any{"savedSearchId": ss.SavedSearchID})
}

// HandleDeleteSavedSearch serves DELETE /sites/{siteId}/savedSearches/{savedSearchId}.
func (s *Handlers) HandleDeleteSavedSearch(r *api.Request) error {
	id := api.PathParam(r, "savedSearchId")
	if id == "" || len(id) > storage.MaxKeyBytes || strings.ContainsAny(id, "/\x00") {
		return &storage.NotFoundError{Msg: "Saved search not found"}
	}
	if _, err := s.Apply(r, storage.OpDeleteSavedSearch, storage.SavedSearchRef{SavedSearchID: id}); err != nil {
		return err
	}
	return r.JSON(map[string]any{"message": "Saved search '" + id + "' deleted"})
}
