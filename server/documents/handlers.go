package documents

import (
	"quire/server/content"
	"quire/server/internal/api"
)

// Handlers serve documents and what hangs on them: tags,
// attributes, versions, artifacts, archives, locks, publications,
// public submissions, retention and the actions a document is created
// with.
type Handlers struct {
	*api.Env
	// content stores and serves the documents' bytes.
	Content *content.Handlers
	// public limits anonymous submissions per client address.
	public publicLimiter
	// RateLimited counts a refused anonymous submission in the core's
	// HTTP metrics.
	RateLimited func(route string)
}
