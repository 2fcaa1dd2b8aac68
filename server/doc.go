// Package server is Quire's HTTP API, wire compatible with FormKiQ 1.19.1.
//
// Handlers parse and validate a request, build storage commands and hand
// them to the Applier; they never write Badger directly. internal/api's
// errors.go is the single place where errors become FormKiQ's two error
// shapes. Routes are all listed in routes.go; handlers live in one file
// per resource, in the domain packages (issue 45):
//
//   - server: the core (New, Listen, Shutdown, the route table, transport
//     middleware, connections, metrics, rate limits, health, console
//     files, the background and the leader's scheduled jobs)
//   - content, documents, search, flow, vocabulary, signatures, intake,
//     dav, admin, directory: one part of the API each, a Handlers type on
//     the shared api.Env
//   - internal/api: the request API the domains stand on (the request,
//     errors, encoding, paging, links, the index gate, exactly-once
//     writes, Apply)
//
// The layering test (layering_test.go) holds the allowed imports.
//
// # Where validation lives
//
// Each check lives in exactly one layer, never both:
//   - server checks the request's shape, everything decidable from the
//     request alone: required fields, types, enums, formats ('name' is
//     required, an invalid e-mail address, an unknown action type). It
//     answers before any command is built.
//   - storage checks whatever needs stored state, inside the applier's
//     transaction: existence, uniqueness, conflicts, attribute values
//     against their definitions and schemas, rules on the merged result
//     of a partial update. So does a replayed command, the same way.
//
// Action parameters are the one exception: each action type's check lives
// with its engine in pipeline's action spec (pipeline/actions.go), which
// ConvertActions runs through Deps.Actions, answering what it asks of
// stored state (a queue, a mapping exists) through pipeline.CheckEnv.
//
// The size and text limits (storage/limits.go) are defined once, in
// storage, and applied by the appliers; handlers may call the same
// functions early, which is one rule in one place, not a second check.
//
// Access is decided before a handler runs: site permissions by wrap, and
// the Admins group by the admin route wrapper in routes.go.
//
// # Where to add an action type
//
// Only in pipeline/actions.go (its spec: name, parameter check, engine):
// the server accepts exactly the types of Deps.Actions, nothing here lists
// them.
package server
