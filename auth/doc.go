// Package auth authenticates Quire's callers and maps them to FormKiQ's
// site permissions (SERVICE-SPEC.md §5).
//
// Quire signs its own tokens (ES256) with a key generated into
// <data-dir>/keys at first start, and can also verify tokens of an external
// identity provider (Keycloak, AD FS) offline from a JWKS file or PEM key.
// Per-site API keys are looked up by their SHA-256 through APIKeyStore.
// Groups map to permissions exactly as FormKiQ does: "<site>" gives
// DELETE, READ and WRITE, "<site>_read" READ, "<site>_govern" GOVERN as
// well, and "Admins" everything everywhere.
//
// The package also signs the expiring upload and download URLs (HMAC with
// a second key in the same directory).
package auth
