package server

import (
	"quire/server/content"
	"quire/server/documents"
	"quire/server/intake"
	"quire/server/internal/api"
	"quire/server/search"
)

// davHandlers serve a site's folders and documents as a WebDAV tree
// (/dav/{siteId}/...) for file managers and scanners.
type davHandlers struct {
	*api.Env
	// content reads and writes a document's bytes (watermarks, limits).
	content *content.Handlers
	// documents deletes documents as DELETE /documents/{id} does.
	documents *documents.Handlers
	// search runs folder moves as PATCH /folders does.
	search *search.Handlers
	// intake checks Basic credentials and records a failed file in the
	// webdav profile's errors, as the other intake sources do.
	intake *intake.Handlers
	// creds caches checked Basic credentials.
	creds davCreds
}
