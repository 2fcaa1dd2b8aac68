package content

import (
	"quire/server/internal/api"
	"quire/storage"
)

// Handlers serve a document's bytes: uploads (whole, chunked,
// through signed URLs), downloads and ranges, checksums, watermark
// stamping, PDF examination and the short URLs of documents.
type Handlers struct {
	*api.Env
	// uploads tracks chunks of uploads in progress (against the sweep).
	Uploads inflight
	// detect asks the background to detect the content type of an
	// upload that came without one (the core's background.go).
	Detect func(storage.PendingDetection)
}
