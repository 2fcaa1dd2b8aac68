package server

import "quire/server/internal/api"

// vocabularyHandlers serve what a site's documents are described with:
// schemas and classifications, entity types and entities, sequences,
// mappings, locales and their resource items (and a site's own record).
type vocabularyHandlers struct {
	*api.Env
}
