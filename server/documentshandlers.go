package server

import (
	"quire/server/content"
	"quire/server/internal/api"
)

// documentsHandlers serve documents and what hangs on them: tags,
// attributes, versions, artifacts, archives, locks, publications,
// public submissions, retention and the actions a document is created
// with.
type documentsHandlers struct {
	*api.Env
	// content stores and serves the documents' bytes.
	content *content.Handlers
	// public limits anonymous submissions per client address.
	public publicLimiter
	// rateLimited counts a refused anonymous submission in the core's
	// HTTP metrics.
	rateLimited func(route string)
}
