package signatures

import (
	"context"
	"os"

	"quire/server/content"
	"quire/server/internal/api"
)

// Handlers serve what proves a document: e-signature
// envelopes and their signing pages, certification with a site's
// certificate, secrets, and documents generated from templates.
type Handlers struct {
	*api.Env
	// content serves the watermark rules a signed or generated copy
	// follows.
	Content *content.Handlers
	// CertifyEnvelope, when set, certifies the signed copy of an envelope
	// with the site's certificate (esign.go).
	CertifyEnvelope func(ctx context.Context, site string, in *os.File) (*os.File, error)
}
