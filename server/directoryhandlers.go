package server

import "quire/server/internal/api"

// directoryHandlers serve who the callers are: directory users and
// groups, sign-in (passwords, OIDC, the console's refresh cookie),
// delegation tokens and the permissions of a site's groups.
type directoryHandlers struct {
	*api.Env
	// oidcSeen remembers the states of finished OIDC sign-ins (oidc.go).
	oidcSeen oidcSeen
}
