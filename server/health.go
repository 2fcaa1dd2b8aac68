package server

import (
	"errors"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"quire/storage"
)

func isNotFound(err error) bool { return errors.Is(err, storage.ErrNotFound) }

// handleHealthz serves GET /healthz: the process is up and the store open.
func (s *Server) handleHealthz(c *fiber.Ctx) error {
	return c.Status(http.StatusOK).JSON(fiber.Map{"status": "ok"})
}

// handleGetVersion serves GET /version.
func (s *Server) handleGetVersion(r *reqCtx) error {
	return r.JSON(fiber.Map{
		"version":        s.deps.Version,
		"type":           "core",
		"appEnvironment": "quire",
		"modules":        []string{},
	})
}
