package server

import (
	"context"
	"os"

	"quire/server/content"
	"quire/server/internal/api"
)

// signaturesHandlers serve what proves a document: e-signature
// envelopes and their signing pages, certification with a site's
// certificate, secrets, and documents generated from templates.
type signaturesHandlers struct {
	*api.Env
	// content serves the watermark rules a signed or generated copy
	// follows.
	content *content.Handlers
	// certifyEnvelope, when set, certifies the signed copy of an envelope
	// with the site's certificate (esign.go).
	certifyEnvelope func(ctx context.Context, site string, in *os.File) (*os.File, error)
}
