package intake

import (
	"sync/atomic"

	qintake "quire/intake"
	"quire/server/content"
	"quire/server/documents"
	"quire/server/internal/api"
)

// Handlers take documents in from scanners and other systems:
// intake profiles and their multipart posts, scan to e-mail (SMTP),
// webhooks, and the credential checks these sources share with WebDAV.
type Handlers struct {
	*api.Env
	// Content writes the bytes and enforces the upload limits.
	Content *content.Handlers
	// Documents converts the actions given with a profile or webhook.
	Documents *documents.Handlers
	// Intake is the shared create path of intake sources, Watch the
	// poller of watched folders (the leader starts and stops it).
	Intake *qintake.Intake
	Watch  *qintake.Watcher
	// smtp is the scan-to-e-mail listener once built (NewSMTPIntake;
	// nil: intake_smtp.listen is not set): profiles' mailAddress and
	// their mail test.
	smtp atomic.Pointer[SMTPIntake]
}
