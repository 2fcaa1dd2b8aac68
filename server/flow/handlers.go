package flow

import (
	"quire/server/documents"
	"quire/server/internal/api"
)

// Handlers serve how documents move through an office: actions,
// workflows, rulesets, queues, reviews, notifications and the activity
// trail.
type Handlers struct {
	*api.Env
	// documents converts the actions given with a document.
	Documents *documents.Handlers
}
