package dav

import (
	"quire/server/content"
	"quire/server/documents"
	"quire/server/intake"
	"quire/server/internal/api"
	"quire/server/search"
)

// Handlers serve a site's folders and documents as a WebDAV tree
// (/dav/{siteId}/...) for file managers and scanners.
type Handlers struct {
	*api.Env
	// Content reads and writes a document's bytes (watermarks, limits).
	Content *content.Handlers
	// Documents deletes documents as DELETE /documents/{id} does.
	Documents *documents.Handlers
	// Search runs folder moves as PATCH /folders does.
	Search *search.Handlers
	// Intake checks Basic credentials and records a failed file in the
	// webdav profile's errors, as the other intake sources do.
	Intake *intake.Handlers
	// creds caches checked Basic credentials.
	creds davCreds
}
