package server

import (
	"github.com/gofiber/fiber/v2"

	"quire/auth"
)

const (
	read   = auth.PermRead
	write  = auth.PermWrite
	del    = auth.PermDelete
	govern = auth.PermGovern
	noPerm = auth.Permission("")
)

// routes registers every route, so the whole API is visible in one place.
func (s *Server) routes() {
	a := s.app
	a.Use(s.accessLog, s.cors)

	// No token: health, and signed upload and download URLs (the signature
	// is the credential).
	a.Get("/healthz", s.handleHealthz)
	a.Put("/uploads/:siteId/:documentId", s.handlePutUpload)
	a.Get("/downloads/:siteId/:documentId", s.handleGetDownload)
	a.Head("/downloads/:siteId/:documentId", s.handleGetDownload)

	api := a.Group("", s.authenticate)
	q := func(p auth.Permission, h handler) fiber.Handler { return s.wrap(siteQuery, p, h) }
	sp := func(p auth.Permission, h handler) fiber.Handler { return s.wrap(sitePath, p, h) }
	none := func(h handler) fiber.Handler { return s.wrap(siteNone, noPerm, h) }

	api.Get("/version", none(s.handleGetVersion))
	api.Get("/sites", none(s.handleGetSites))
	api.Get("/sites/:siteId/apiKeys", sp(govern, s.handleGetAPIKeys))
	api.Post("/sites/:siteId/apiKeys", sp(govern, s.handleAddAPIKey))
	api.Delete("/sites/:siteId/apiKeys/:apiKey", sp(govern, s.handleDeleteAPIKey))

	api.Get("/documents", q(read, s.handleGetDocuments))
	api.Post("/documents", q(write, s.handleAddDocument))
	api.Post("/documents/upload", q(write, s.handleAddDocumentUpload))
	api.Get("/documents/upload", q(write, s.handleGetDocumentUpload))
	api.Patch("/documents/tags", q(write, s.handleUpdateMatchingDocumentTags))
	api.Get("/documents/:documentId", q(read, s.handleGetDocument))
	api.Patch("/documents/:documentId", q(write, s.handleUpdateDocument))
	api.Delete("/documents/:documentId", q(del, s.handleDeleteDocument))
	api.Put("/documents/:documentId/restore", q(write, s.handleRestoreDocument))
	api.Delete("/documents/:documentId/purge", q(del, s.handlePurgeDocument))
	api.Get("/documents/:documentId/upload", q(write, s.handleGetDocumentIDUpload))
	api.Get("/documents/:documentId/content", q(read, s.handleGetDocumentContent))
	api.Get("/documents/:documentId/url", q(read, s.handleGetDocumentURL))

	api.Get("/documents/:documentId/tags", q(read, s.handleGetDocumentTags))
	api.Post("/documents/:documentId/tags", q(write, s.handleAddDocumentTags))
	api.Put("/documents/:documentId/tags", q(write, s.handleSetDocumentTags))
	api.Patch("/documents/:documentId/tags", q(write, s.handleUpdateDocumentTags))
	api.Get("/documents/:documentId/tags/:tagKey", q(read, s.handleGetDocumentTag))
	api.Put("/documents/:documentId/tags/:tagKey", q(write, s.handleSetDocumentTag))
	api.Delete("/documents/:documentId/tags/:tagKey", q(del, s.handleDeleteDocumentTag))
	api.Delete("/documents/:documentId/tags/:tagKey/:tagValue", q(del, s.handleDeleteDocumentTagAndValue))

	// Anything else is FormKiQ's "request handler not found".
	a.Use(func(c *fiber.Ctx) error { return fiber.ErrNotFound })
}
