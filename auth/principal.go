package auth

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// Permission is a FormKiQ site permission.
type Permission string

// FormKiQ's site permissions.
const (
	PermAdmin  Permission = "ADMIN"
	PermDelete Permission = "DELETE"
	PermGovern Permission = "GOVERN"
	PermRead   Permission = "READ"
	PermWrite  Permission = "WRITE"
)

// allPerms is what an admin holds on every site, sorted.
var allPerms = []Permission{PermAdmin, PermDelete, PermGovern, PermRead, PermWrite}

// Reserved group and site names.
const (
	GroupAdmins        = "Admins"
	groupAuthOnly      = "authentication_only"
	DefaultSite        = "default"
	reservedSiteGlobal = "global"
	reservedSiteAPIKey = "API_KEY"
)

// Error is an authentication or authorization failure. The server renders
// it as {"message": Msg} with Status (401 in FormKiQ, even for a caller
// that lacks a permission).
type Error struct {
	Status int
	Msg    string
}

func (e *Error) Error() string { return e.Msg }

func unauthorized(msg string) *Error { return &Error{Status: http.StatusUnauthorized, Msg: msg} }

// errUnauthorized is what API Gateway answers for a missing or bad token.
var errUnauthorized = unauthorized("Unauthorized")

// Principal is an authenticated caller.
type Principal struct {
	// Username identifies the caller in userId fields.
	Username string
	// Groups are the raw groups of the token or API key.
	Groups []string
	// Claims are the token's custom claims, reported by GET /sites.
	Claims map[string]any
	// Admin is set for members of "Admins".
	Admin bool
	// Sites maps each site the caller has a group for to its sorted
	// permissions.
	Sites map[string][]Permission
	// APIKeySite is the site of the API key the caller used, if any
	// (with a delegation token: the token's site).
	APIKeySite string
	// APIKeyName is the name of the API key the caller used, if any.
	APIKeyName string
	// Delegation is set when the request carried a delegation token: the
	// caller is then Delegation.Actor, acting as Username.
	Delegation *Delegation
	// dirGen is the generation of a directory user's token (0: not a
	// directory token); Authenticate checks it on every request.
	dirGen int
	// cred names the credential when it is not the user's own token (an
	// API key, a delegation): see Credential.
	cred string
}

// Credential names the credential the caller used, for what belongs to
// one credential only (a recorded Idempotency-Key answer, issue 43): the
// username for a user's token (whatever signed it: the directory, the
// identity provider, `quire token`), "apikey:<the key's hash>" for an API
// key (each key its own, though every key of a creator carries the
// creator's name), and "delegation:<the token's hash>:<the actor's
// credential>" for a delegated request.
func (p *Principal) Credential() string {
	if p.cred != "" {
		return p.cred
	}
	return p.Username
}

// NewPrincipal builds a principal from a username and groups with
// FormKiQ's group rules.
func NewPrincipal(username string, groups []string) *Principal {
	p := &Principal{Username: username, Groups: groups, Sites: map[string][]Permission{}}
	set := map[string]map[Permission]bool{}
	grant := func(site string, perms ...Permission) {
		if set[site] == nil {
			set[site] = map[Permission]bool{}
		}
		for _, pm := range perms {
			set[site][pm] = true
		}
	}
	for _, g := range groups {
		switch {
		case g == GroupAdmins:
			p.Admin = true
		case g == groupAuthOnly || g == "":
		case strings.HasSuffix(g, "_read"):
			grant(strings.TrimSuffix(g, "_read"), PermRead)
		case strings.HasSuffix(g, "_govern"):
			grant(strings.TrimSuffix(g, "_govern"), PermDelete, PermGovern, PermRead, PermWrite)
		default:
			grant(g, PermDelete, PermRead, PermWrite)
		}
	}
	for site, perms := range set {
		p.Sites[site] = sortedPerms(perms)
	}
	return p
}

func sortedPerms(m map[Permission]bool) []Permission {
	out := make([]Permission, 0, len(m))
	for pm := range m {
		out = append(out, pm)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// BoundSite is the one site a credential a site issued is bound to: an
// API key's site, or a delegation token's ("" for a signed-in user, whose
// groups hold wherever they are granted). A bound credential carries no
// right outside that site: its groups do not reach another site's
// shares, and a request through it never moves to another site.
func (p *Principal) BoundSite() string { return p.APIKeySite }

// Permissions returns the caller's sorted permissions on site; an admin
// holds all of them everywhere.
func (p *Principal) Permissions(site string) []Permission {
	if p.Admin {
		return append([]Permission(nil), allPerms...)
	}
	return p.Sites[site]
}

// Can reports whether the caller holds perm on site.
func (p *Principal) Can(site string, perm Permission) bool {
	for _, pm := range p.Permissions(site) {
		if pm == perm {
			return true
		}
	}
	return false
}

// SelectSite picks the site a request acts on, with FormKiQ's rules: the
// siteId query parameter wins when the caller may use it; without it, an
// API key's site, else the caller's only site, else "default" for admins
// and callers with a "default" group.
func (p *Principal) SelectSite(requested string) (string, error) {
	if requested == reservedSiteAPIKey {
		return "", unauthorized("'API_KEY' siteId is reserved")
	}
	if requested == reservedSiteGlobal && !p.Admin {
		return "", unauthorized("'global' siteId is reserved")
	}
	if requested != "" {
		if !p.Admin && len(p.Sites[requested]) == 0 {
			return "", unauthorized(fmt.Sprintf("fkq access denied to siteId (%s)", requested))
		}
		return requested, nil
	}
	if p.APIKeySite != "" {
		return p.APIKeySite, nil
	}
	if len(p.Sites) == 1 {
		for site := range p.Sites {
			return site, nil
		}
	}
	if _, ok := p.Sites[DefaultSite]; ok || p.Admin {
		return DefaultSite, nil
	}
	return "", unauthorized(fmt.Sprintf("fkq access denied to siteId (%s)", DefaultSite))
}

// Require checks that the caller holds perm on site. FormKiQ answers 401
// in both cases: no access to the site at all, or too few permissions on
// it (the message then lists what the caller has).
func (p *Principal) Require(site string, perm Permission) error {
	perms := p.Permissions(site)
	if len(perms) == 0 {
		return unauthorized(fmt.Sprintf("fkq access denied to siteId (%s)", site))
	}
	for _, pm := range perms {
		if pm == perm {
			return nil
		}
	}
	names := make([]string, len(perms))
	for i, pm := range perms {
		names[i] = string(pm)
	}
	return unauthorized(fmt.Sprintf("fkq access denied (groups: %s (%s))", site, strings.Join(names, ",")))
}

// WithSiteGrants returns a copy of p that also holds grants (site ->
// permissions): a site's stored group permissions (PUT
// /sites/{siteId}/groups/{groupName}/permissions) for the caller's groups.
func (p *Principal) WithSiteGrants(grants map[string][]Permission) *Principal {
	if len(grants) == 0 {
		return p
	}
	q := p.clone()
	for site, perms := range grants {
		set := map[Permission]bool{}
		for _, pm := range q.Sites[site] {
			set[pm] = true
		}
		for _, pm := range perms {
			set[pm] = true
		}
		q.Sites[site] = sortedPerms(set)
	}
	return q
}

// DirectoryUser reports whether the principal signed in with the built-in
// directory (a token of this server carrying the user's generation).
func (p *Principal) DirectoryUser() bool { return p.dirGen > 0 }
