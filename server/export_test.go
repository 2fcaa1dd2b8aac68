package server

import "github.com/gofiber/fiber/v2"

// SetTestRoutes adds routes to every server built until it is called
// with nil (tests only).
func SetTestRoutes(f func(fiber.Router)) { testRoutes = f }
