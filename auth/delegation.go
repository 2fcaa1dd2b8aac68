package auth

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// DelegationHeader carries a delegation token (FormKiQ's header name).
const DelegationHeader = "x-formkiq-delegation-token"

// DelegationTTL is how long a delegation token is valid.
const DelegationTTL = time.Hour

// delegationUse marks a delegation token's claims; a token so marked is
// never accepted as an Authorization token.
const delegationUse = "delegation"

// DelegablePerms are the permissions a delegation token may keep.
var DelegablePerms = []Permission{PermDelete, PermGovern, PermRead, PermWrite}

// Delegation is what a delegation token grants: on Site, at most
// Permissions, acting as OnBehalfOf (empty: as the caller), for Reason;
// IssuedBy is the admin who made it.
type Delegation struct {
	Site        string       `json:"site"`
	Permissions []Permission `json:"permissions"`
	OnBehalfOf  string       `json:"onBehalfOf,omitempty"`
	Reason      string       `json:"reason"`
	IssuedBy    string       `json:"issuedBy"`
	// Actor is the caller who presented the token (set on use).
	Actor string `json:"actor,omitempty"`
}

// SignDelegation signs d with the server's key, valid for DelegationTTL.
func (a *Authenticator) SignDelegation(d Delegation) (string, error) {
	now := a.cfg.Now()
	perms := make([]string, len(d.Permissions))
	for i, p := range d.Permissions {
		perms[i] = string(p)
	}
	t := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{
		"iss":         a.cfg.Issuer,
		"token_use":   delegationUse,
		"sub":         d.IssuedBy,
		"site":        d.Site,
		"permissions": perms,
		"onBehalfOf":  d.OnBehalfOf,
		"reason":      d.Reason,
		"iat":         now.Unix(),
		"nbf":         now.Add(-time.Minute).Unix(),
		"exp":         now.Add(DelegationTTL).Unix(),
	})
	ks := a.ks.Load()
	t.Header["kid"] = ks.kid
	return t.SignedString(ks.key)
}

// errBadDelegation is the one answer to a delegation token that is not
// this server's, has expired or is malformed.
var errBadDelegation = unauthorized("invalid delegation token")

// Delegate applies a delegation token to the caller p: the result holds
// on the token's site only the permissions both the token and p hold
// there, is no admin, has no other site, and acts as the token's
// onBehalfOf user. The token must be this server's and unexpired.
func (a *Authenticator) Delegate(p *Principal, tok string) (*Principal, error) {
	parsed, err := jwt.Parse(tok, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		return a.ownKey(kid)
	}, jwt.WithValidMethods([]string{"ES256"}), jwt.WithIssuer(a.cfg.Issuer), jwt.WithExpirationRequired(),
		jwt.WithLeeway(a.cfg.Leeway), jwt.WithTimeFunc(a.cfg.Now))
	if err != nil || !parsed.Valid {
		return nil, errBadDelegation
	}
	c, _ := parsed.Claims.(jwt.MapClaims)
	if use, _ := c["token_use"].(string); use != delegationUse {
		return nil, errBadDelegation
	}
	site, _ := c["site"].(string)
	if site == "" {
		return nil, errBadDelegation
	}
	d := &Delegation{Site: site, Actor: p.Username}
	d.OnBehalfOf, _ = c["onBehalfOf"].(string)
	d.Reason, _ = c["reason"].(string)
	d.IssuedBy, _ = c["sub"].(string)
	granted := map[Permission]bool{}
	for _, s := range stringList(c["permissions"]) {
		pm := Permission(s)
		if slices.Contains(DelegablePerms, pm) && p.Can(site, pm) {
			granted[pm] = true
		}
	}
	d.Permissions = sortedPerms(granted)
	sum := sha256.Sum256([]byte(tok))
	out := &Principal{Username: p.Username, Groups: p.Groups, Claims: p.Claims, Sites: map[string][]Permission{},
		APIKeySite: site, Delegation: d, cred: "delegation:" + hex.EncodeToString(sum[:16]) + ":" + p.Credential()}
	if d.OnBehalfOf != "" {
		out.Username = d.OnBehalfOf
	}
	if len(d.Permissions) > 0 {
		out.Sites[site] = d.Permissions
	}
	return out, nil
}

// isDelegation reports whether verified claims are a delegation token's.
func isDelegation(c jwt.MapClaims) bool {
	use, _ := c["token_use"].(string)
	return use == delegationUse
}
