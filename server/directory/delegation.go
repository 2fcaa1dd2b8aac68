package directory

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"quire/auth"
	"quire/server/internal/api"
	"quire/storage"
)

// Delegation tokens (SERVICE-SPEC.md §2.10, §5.7; API.md "Delegation
// tokens").

// maxDelegationReason and maxDelegationUser are FormKiQ's bounds.
const (
	maxDelegationReason = 1024
	maxDelegationUser   = 256
)

// HandleAddDelegationToken serves POST /sites/{siteId}/delegationTokens
// (ADMIN on the site).
func (s *Handlers) HandleAddDelegationToken(r *api.Request) error {
	var in struct {
		Permissions []string `json:"permissions"`
		OnBehalfOf  *struct {
			Username *string `json:"username"`
		} `json:"onBehalfOf"`
		Reason *string `json:"reason"`
	}
	if err := r.ReadBody(&in, 64<<10); err != nil {
		return err
	}
	var errs []storage.ValidationItem
	add := func(key, msg string) { errs = append(errs, storage.ValidationItem{Key: key, Msg: msg}) }
	d := auth.Delegation{Site: r.Site, IssuedBy: r.User()}
	if len(in.Permissions) == 0 {
		add("permissions", "'permissions' is required")
	}
	for _, p := range in.Permissions {
		pm := auth.Permission(strings.ToUpper(p))
		switch {
		case pm == auth.PermAdmin:
			add("permissions", "a delegation token cannot grant ADMIN")
		case !slices.Contains(auth.DelegablePerms, pm):
			add("permissions", fmt.Sprintf("invalid permission '%s'", p))
		case !r.Principal.Can(r.Site, pm):
			add("permissions", fmt.Sprintf("permission '%s' is not held by the caller on site '%s'", pm, r.Site))
		case !slices.Contains(d.Permissions, pm):
			d.Permissions = append(d.Permissions, pm)
		}
	}
	switch {
	case in.Reason == nil || strings.TrimSpace(*in.Reason) == "":
		add("reason", "'reason' is required")
	case utf8.RuneCountInString(*in.Reason) > maxDelegationReason:
		add("reason", fmt.Sprintf("'reason' must be at most %d characters", maxDelegationReason))
	default:
		d.Reason = *in.Reason
	}
	if in.OnBehalfOf != nil {
		switch u := in.OnBehalfOf.Username; {
		case u == nil || strings.TrimSpace(*u) == "":
			add("onBehalfOf.username", "'username' is required")
		case utf8.RuneCountInString(*u) > maxDelegationUser:
			add("onBehalfOf.username", fmt.Sprintf("'username' must be at most %d characters", maxDelegationUser))
		default:
			d.OnBehalfOf = *u
		}
	}
	if err := api.CheckErrors(errs); err != nil {
		return err
	}
	tok, err := s.Deps.Auth.SignDelegation(d)
	if err != nil {
		return err
	}
	return r.JSON(map[string]any{"headerName": auth.DelegationHeader, "delegationToken": tok})
}
