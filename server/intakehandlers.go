package server

import (
	qintake "quire/intake"
	"quire/server/content"
	"quire/server/documents"
	"quire/server/internal/api"
)

// intakeHandlers take documents in from scanners and other systems:
// intake profiles and their multipart posts, scan to e-mail (SMTP),
// webhooks, and the credential checks these sources share with WebDAV.
type intakeHandlers struct {
	*api.Env
	// content writes the bytes and enforces the upload limits.
	content *content.Handlers
	// documents converts the actions given with a profile or webhook.
	documents *documents.Handlers
	// intake is the shared create path of intake sources, watch the
	// poller of watched folders (the leader starts and stops it).
	intake *qintake.Intake
	watch  *qintake.Watcher
}
