package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Saved views (Quire; issue 47; API.md "Saved searches"): a named search
// of a site (a /queryFulltext body), private to the user who saved it or
// shared with every member of the site. Only its owner deletes it.

// Saved search limits, checked by the server before it applies and again
// here.
const (
	MaxSavedSearchNameChars = 100     // characters of a name
	MaxSavedSearchQuery     = 8 << 10 // bytes of the saved query (JSON)
	MaxSavedSearchesPerUser = 100     // saved searches one user keeps in a site
	MaxSavedSearchesPerSite = 2000    // saved searches of a site, every user's
)

// SavedSearch is one saved search of a site.
type SavedSearch struct {
	SavedSearchID string          `json:"savedSearchId"`
	Name          string          `json:"name"`
	Query         json.RawMessage `json:"query"`
	Shared        bool            `json:"shared,omitempty"`
	UserID        string          `json:"userId,omitempty"`
	InsertedDate  time.Time       `json:"insertedDate"`
}

// SavedSearchRef is the payload of OpDeleteSavedSearch.
type SavedSearchRef struct {
	SavedSearchID string `json:"savedSearchId"`
}

func savedSearchPrefix(site string) []byte { return []byte(pfxSavedSearch + sk(site) + "/") }

func savedSearchKey(site, id string) []byte { return []byte(pfxSavedSearch + sk(site) + "/" + id) }

func savedSearchNotFound(id string) error {
	return &NotFoundError{Msg: fmt.Sprintf("Saved search '%s' not found", id)}
}

// CheckSavedSearch refuses a name or query out of bounds.
func CheckSavedSearch(name string, query []byte) error {
	var errs []ValidationItem
	switch {
	case !utf8.ValidString(name):
		errs = append(errs, ValidationItem{Key: "name", Msg: "'name' is not valid UTF-8"})
	case strings.TrimSpace(name) == "":
		errs = append(errs, ValidationItem{Key: "name", Msg: "'name' is required"})
	case utf8.RuneCountInString(name) > MaxSavedSearchNameChars:
		errs = append(errs, ValidationItem{Key: "name", Msg: fmt.Sprintf("'name' is longer than %d characters", MaxSavedSearchNameChars)})
	}
	switch {
	case len(query) == 0 || string(query) == "null":
		errs = append(errs, ValidationItem{Key: "query", Msg: "'query' is required"})
	case len(query) > MaxSavedSearchQuery:
		errs = append(errs, ValidationItem{Key: "query", Msg: fmt.Sprintf("'query' is larger than %d bytes", MaxSavedSearchQuery)})
	case !json.Valid(query) || query[0] != '{':
		errs = append(errs, ValidationItem{Key: "query", Msg: "'query' must be a JSON object"})
	}
	if len(errs) > 0 {
		return &ValidationError{Items: errs}
	}
	return nil
}

func applyAddSavedSearch(t *tx, c *Command) (any, error) {
	p, err := decode[SavedSearch](c)
	if err != nil {
		return nil, err
	}
	if err := CheckSavedSearch(p.Name, p.Query); err != nil {
		return nil, err
	}
	if p.SavedSearchID == "" || len(p.SavedSearchID) > MaxKeyBytes || strings.ContainsAny(p.SavedSearchID, "/\x00") {
		return nil, Invalid("savedSearchId", "invalid 'savedSearchId'")
	}
	if ok, err := t.exists(savedSearchKey(c.Site, p.SavedSearchID)); err != nil {
		return nil, err
	} else if ok {
		return nil, &ConflictError{Msg: fmt.Sprintf("saved search '%s' already exists", p.SavedSearchID)}
	}
	mine, all := 0, 0
	err = t.each(savedSearchPrefix(c.Site), func(_, v []byte) error {
		var s SavedSearch
		if err := json.Unmarshal(v, &s); err != nil {
			return err
		}
		all++
		if s.UserID == c.User {
			mine++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if mine >= MaxSavedSearchesPerUser {
		return nil, Invalid("savedSearch", fmt.Sprintf("a user keeps at most %d saved searches in a site", MaxSavedSearchesPerUser))
	}
	if all >= MaxSavedSearchesPerSite {
		return nil, Invalid("savedSearch", fmt.Sprintf("a site keeps at most %d saved searches", MaxSavedSearchesPerSite))
	}
	p.UserID, p.InsertedDate = c.User, c.At
	return nil, t.setJSON(savedSearchKey(c.Site, p.SavedSearchID), p)
}

// applyDeleteSavedSearch removes a saved search of the command's user;
// another user's (shared or not) is not found, so nothing is said about it.
func applyDeleteSavedSearch(t *tx, c *Command) (any, error) {
	p, err := decode[SavedSearchRef](c)
	if err != nil {
		return nil, err
	}
	var s SavedSearch
	switch err := t.getJSON(savedSearchKey(c.Site, p.SavedSearchID), &s); {
	case errors.Is(err, ErrNotFound):
		return nil, savedSearchNotFound(p.SavedSearchID)
	case err != nil:
		return nil, err
	}
	if s.UserID != c.User {
		return nil, savedSearchNotFound(p.SavedSearchID)
	}
	return nil, t.del(savedSearchKey(c.Site, p.SavedSearchID))
}

// SavedSearches lists the saved searches of site that user sees (their
// own and the shared ones), in id order, after the cursor after.
func (d *DB) SavedSearches(site, user, after string, limit int) ([]SavedSearch, string, error) {
	var out []SavedSearch
	var next string
	err := d.view(func(t *tx) error {
		return t.each(savedSearchPrefix(site), func(_, v []byte) error {
			var s SavedSearch
			if err := json.Unmarshal(v, &s); err != nil {
				return err
			}
			if (after != "" && s.SavedSearchID <= after) || (s.UserID != user && !s.Shared) {
				return nil
			}
			if limit > 0 && len(out) == limit {
				next = out[len(out)-1].SavedSearchID
				return errStop
			}
			out = append(out, s)
			return nil
		})
	})
	if errors.Is(err, errStop) {
		err = nil
	}
	return out, next, err
}
