package vocabulary

import (
	"quire/server/internal/api"
)

// Handlers serve what a site's documents are described with:
// schemas and classifications, entity types and entities, sequences,
// mappings, locales and their resource items (and a site's own record).
type Handlers struct {
	*api.Env
}
