package directory

import (
	"quire/server/internal/api"
)

// Handlers serve who the callers are: directory users and
// groups, sign-in (passwords, OIDC, the console's refresh cookie),
// delegation tokens and the permissions of a site's groups.
type Handlers struct {
	*api.Env
	// oidcSeen remembers the states of finished OIDC sign-ins (oidc.go).
	oidcSeen oidcSeen
}
