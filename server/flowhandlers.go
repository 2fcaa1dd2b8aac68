package server

import (
	"quire/server/documents"
	"quire/server/internal/api"
)

// flowHandlers serve how documents move through an office: actions,
// workflows, rulesets, queues, reviews, notifications and the activity
// trail.
type flowHandlers struct {
	*api.Env
	// documents converts the actions given with a document.
	documents *documents.Handlers
}
