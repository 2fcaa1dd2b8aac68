// Package server is Quire's HTTP API, wire compatible with FormKiQ 1.19.1.
//
// Handlers parse and validate a request, build storage commands and hand
// them to the Applier; they never write Badger directly. errors.go is the
// single place where errors become FormKiQ's two error shapes. Routes are
// all listed in routes.go; handlers live in one file per resource.
package server
