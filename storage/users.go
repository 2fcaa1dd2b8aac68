package storage

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// The built-in user directory (API.md "Users, groups and sign-in"): users
// and groups of the whole server; a user's groups map to site
// permissions exactly as a JWT's groups do.

// User statuses (Cognito's names, which FormKiQ reports).
const (
	UserForceChangePassword = "FORCE_CHANGE_PASSWORD"
	UserConfirmed           = "CONFIRMED"
	UserResetRequired       = "RESET_REQUIRED"
)

// Directory limits.
const (
	MaxUsers         = 10000
	MaxGroups        = 1000
	MaxGroupsPerUser = 100
	MaxUsernameBytes = 128
	MaxGroupBytes    = 128
	// MaxFailedLogins failed sign-ins in a row lock an account for
	// LockoutDuration.
	MaxFailedLogins = 5
	LockoutDuration = 15 * time.Minute
)

// User is one account of the directory. PasswordHash and the reset code
// never leave the store through the API.
type User struct {
	Username     string            `json:"username"`
	Email        string            `json:"email,omitempty"`
	Enabled      bool              `json:"enabled"`
	Status       string            `json:"userStatus"`
	PasswordHash string            `json:"passwordHash,omitempty"`
	Attributes   map[string]string `json:"attributes,omitempty"`
	// Generation changes whenever the user's sessions must end (disable,
	// password change or reset): tokens of an older generation are refused.
	// It never goes back: a user made again under a deleted user's name
	// starts above the deleted user's last generation, so the deleted
	// user's tokens stay dead.
	Generation   int        `json:"generation"`
	FailedLogins int        `json:"failedLogins,omitempty"`
	LockedUntil  *time.Time `json:"lockedUntil,omitempty"`
	// ResetCodeHash is the SHA-256 (hex) of a pending password-reset
	// code, valid until ResetExpires.
	ResetCodeHash    string     `json:"resetCodeHash,omitempty"`
	ResetExpires     *time.Time `json:"resetExpires,omitempty"`
	InsertedDate     time.Time  `json:"insertedDate"`
	LastModifiedDate time.Time  `json:"lastModifiedDate"`
}

// Locked reports whether sign-in is locked at time at.
func (u *User) Locked(at time.Time) bool { return u.LockedUntil != nil && at.Before(*u.LockedUntil) }

// Group is a directory group.
type Group struct {
	Name             string    `json:"name"`
	Description      string    `json:"description,omitempty"`
	InsertedDate     time.Time `json:"insertedDate"`
	LastModifiedDate time.Time `json:"lastModifiedDate"`
}

// RefreshToken is a stored refresh token (by the SHA-256 of its value).
type RefreshToken struct {
	Username   string    `json:"username"`
	Generation int       `json:"generation"`
	Expires    time.Time `json:"expires"`
	// UserInserted is the InsertedDate of the user the token was issued
	// to: a user made again under the name is another user (zero in
	// tokens stored before it was recorded).
	UserInserted time.Time `json:"userInserted,omitzero"`
	// External marks a session of a user signed in through the identity
	// provider (OIDC, not a directory user): a refresh gives tokens for
	// Username with the Groups and Email the ID token had.
	External bool     `json:"external,omitempty"`
	Groups   []string `json:"groups,omitempty"`
	Email    string   `json:"email,omitempty"`
}

// Of reports whether the token was issued to u: the same name, the same
// creation of that name and the current generation. issuedBefore is how
// long before its expiry a token is issued, for tokens stored without
// UserInserted.
func (rt *RefreshToken) Of(u *User, issuedBefore time.Duration) bool {
	if rt.Username != u.Username || rt.Generation != u.Generation {
		return false
	}
	if rt.UserInserted.IsZero() {
		return !rt.Expires.Add(-issuedBefore).Before(u.InsertedDate)
	}
	return rt.UserInserted.Equal(u.InsertedDate)
}

// NormalizeUsername is the stored form of a username: trimmed and
// lower-cased (usernames are e-mail addresses, compared without case).
func NormalizeUsername(u string) string { return strings.ToLower(strings.TrimSpace(u)) }

// CheckUsername validates a (normalized) username.
func CheckUsername(u string) error {
	return checkDirectoryName("username", "'username'", u, MaxUsernameBytes, "/\x00 ", "no spaces, '/' or control characters")
}

// CheckGroupName validates a group name: it is also a site name or a
// site name with _read or _govern, so it follows the same rules.
func CheckGroupName(g string) error {
	return checkDirectoryName("name", "group name", g, MaxGroupBytes, "\x00 ", "no spaces or control characters")
}

// checkDirectoryName is the one rule for user and group names: present,
// at most max bytes of UTF-8, none of the characters in bad nor control
// characters.
func checkDirectoryName(key, what, v string, max int, bad, rule string) error {
	if v == "" {
		return Invalid(key, fmt.Sprintf("'%s' is required", key))
	}
	if len(v) > max || !utf8.ValidString(v) || strings.ContainsAny(v, bad) || hasControl(v) {
		return Invalid(key, fmt.Sprintf("invalid %s: at most %d bytes, %s", what, max, rule))
	}
	return nil
}

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return true
		}
	}
	return false
}

// AddUser is the payload of OpAddUser.
type AddUser struct {
	User User `json:"user"`
}

// DeleteUser is the payload of OpDeleteUser.
type DeleteUser struct {
	Username string `json:"username"`
}

// UserOperation is the payload of OpUserOperation: DISABLE, ENABLE or
// RESET_PASSWORD (with the hash of the code mailed to the user).
type UserOperation struct {
	Username      string     `json:"username"`
	Operation     string     `json:"operation"`
	ResetCodeHash string     `json:"resetCodeHash,omitempty"`
	ResetExpires  *time.Time `json:"resetExpires,omitempty"`
}

// SetPassword is the payload of OpSetPassword. Via says how: "challenge"
// (first sign-in), "change" (the user, signed in) or "reset" (with a
// mailed code). PreviousHash, when set, must still be the stored hash
// (the handler verified the password against it).
type SetPassword struct {
	Username     string `json:"username"`
	Hash         string `json:"hash"`
	Via          string `json:"via"`
	PreviousHash string `json:"previousHash,omitempty"`
	CodeHash     string `json:"codeHash,omitempty"`
	Generation   *int   `json:"generation,omitempty"`
}

// LoginResult is the payload of OpLoginResult: a sign-in the handler
// checked. A success stores the refresh token; a failure counts towards
// the lockout.
type LoginResult struct {
	Username     string        `json:"username"`
	OK           bool          `json:"ok"`
	PasswordHash string        `json:"passwordHash,omitempty"`
	RefreshHash  string        `json:"refreshHash,omitempty"`
	Refresh      *RefreshToken `json:"refresh,omitempty"`
}

// ExternalSignIn is the payload of OpExternalSignIn: the refresh token
// of a console session of a user the identity provider signed in.
type ExternalSignIn struct {
	RefreshHash string       `json:"refreshHash"`
	Refresh     RefreshToken `json:"refresh"`
}

// Bounds of an external session (what the ID token may bring).
const (
	MaxExternalGroups     = 100
	MaxExternalEmailBytes = 320
)

// RevokeRefresh is the payload of OpRevokeRefresh: the SHA-256 of the
// refresh token a sign-out ends.
type RevokeRefresh struct {
	RefreshHash string `json:"refreshHash"`
}

// AddGroup is the payload of OpAddGroup.
type AddGroup struct {
	Group Group `json:"group"`
}

// DeleteGroup is the payload of OpDeleteGroup.
type DeleteGroup struct {
	Name string `json:"name"`
}

// GroupMember is the payload of OpAddGroupMember and OpRemoveGroupMember.
type GroupMember struct {
	Group    string `json:"group"`
	Username string `json:"username"`
}

// Errors of the directory (FormKiQ/Cognito wording where one exists).
var (
	ErrBadLogin     = &AccessError{Msg: "Incorrect username or password."}
	ErrLoginLocked  = &AccessError{Msg: "Password attempts exceeded"}
	ErrUserDisabled = &AccessError{Msg: "User is disabled."}
	errBadResetCode = Invalid("code", "Invalid verification code provided, please try again.")
)

func userNotFound(u string) error { return &NotFoundError{Msg: fmt.Sprintf("user '%s' not found", u)} }
func groupNotFound(g string) error {
	return &NotFoundError{Msg: fmt.Sprintf("group '%s' not found", g)}
}

func getUser(t *tx, name string) (*User, error) {
	var u User
	err := t.getJSON(userKey(name), &u)
	if errors.Is(err, ErrNotFound) {
		return nil, userNotFound(name)
	}
	return &u, err
}

// getEnabledUser is getUser for operations a disabled user may not do.
func getEnabledUser(t *tx, name string) (*User, error) {
	u, err := getUser(t, name)
	if err == nil && !u.Enabled {
		return nil, ErrUserDisabled
	}
	return u, err
}

func putUser(t *tx, u *User, at time.Time) error {
	u.LastModifiedDate = at
	return t.setJSON(userKey(u.Username), u)
}

func applyAddUser(t *tx, c *Command) (any, error) {
	p, err := decode[AddUser](c)
	if err != nil {
		return nil, err
	}
	u := p.User
	if err := CheckUsername(u.Username); err != nil {
		return nil, err
	}
	if ok, err := t.exists(userKey(u.Username)); err != nil {
		return nil, err
	} else if ok {
		return nil, &ConflictError{Msg: fmt.Sprintf("user '%s' already exists", u.Username)}
	}
	if n := t.count([]byte(pfxUser)); n >= MaxUsers {
		return nil, Invalid("user", fmt.Sprintf("the directory holds at most %d users", MaxUsers))
	}
	// A deleted user's tokens stay dead: the generation starts above the
	// last one any user of this name had.
	var gone int
	if err := t.getJSON(userGoneKey(u.Username), &gone); err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	u.InsertedDate, u.Enabled, u.Generation = c.At, true, gone+1
	if u.Status == "" {
		u.Status = UserForceChangePassword
	}
	return nil, putUser(t, &u, c.At)
}

func applyDeleteUser(t *tx, c *Command) (any, error) {
	p, err := decode[DeleteUser](c)
	if err != nil {
		return nil, err
	}
	u, err := getUser(t, p.Username)
	if err != nil {
		return nil, err
	}
	if err := t.setJSON(userGoneKey(p.Username), u.Generation); err != nil {
		return nil, err
	}
	for _, k := range t.keys(userGroupPrefix(p.Username)) {
		g := string(k[len(userGroupPrefix(p.Username)):])
		if err := t.del(k); err != nil {
			return nil, err
		}
		if err := t.del(groupUserKey(g, p.Username)); err != nil {
			return nil, err
		}
	}
	return nil, t.del(userKey(p.Username))
}

func applyUserOperation(t *tx, c *Command) (any, error) {
	p, err := decode[UserOperation](c)
	if err != nil {
		return nil, err
	}
	u, err := getUser(t, p.Username)
	if err != nil {
		return nil, err
	}
	switch p.Operation {
	case "DISABLE":
		if u.Enabled {
			u.Enabled = false
			u.Generation++
		}
	case "ENABLE":
		u.Enabled = true
	case "RESET_PASSWORD":
		if p.ResetCodeHash == "" || p.ResetExpires == nil {
			return nil, Invalid("userOperation", "a reset needs a code")
		}
		u.Status, u.ResetCodeHash, u.ResetExpires = UserResetRequired, p.ResetCodeHash, p.ResetExpires
		u.Generation++
	default:
		return nil, Invalid("userOperation", "invalid 'userOperation': DISABLE, ENABLE or RESET_PASSWORD")
	}
	return u.Email, putUser(t, u, c.At)
}

// SetResetCode is the payload of OpSetResetCode: a code the user asked
// for (forgot password); unlike RESET_PASSWORD it leaves the password and
// the sessions as they are until the code is used.
type SetResetCode struct {
	Username      string    `json:"username"`
	ResetCodeHash string    `json:"resetCodeHash"`
	ResetExpires  time.Time `json:"resetExpires"`
}

func applySetResetCode(t *tx, c *Command) (any, error) {
	p, err := decode[SetResetCode](c)
	if err != nil {
		return nil, err
	}
	u, err := getEnabledUser(t, p.Username)
	if err != nil {
		return nil, err
	}
	u.ResetCodeHash, u.ResetExpires = p.ResetCodeHash, &p.ResetExpires
	return u.Email, putUser(t, u, c.At)
}

func applySetPassword(t *tx, c *Command) (any, error) {
	p, err := decode[SetPassword](c)
	if err != nil {
		return nil, err
	}
	u, err := getEnabledUser(t, p.Username)
	if err != nil {
		return nil, err
	}
	if p.Generation != nil && *p.Generation != u.Generation {
		return nil, ErrBadLogin // the session or token is from before a change
	}
	switch p.Via {
	case "challenge":
		if u.Status != UserForceChangePassword {
			return nil, Invalid("challengeName", "no new password is required")
		}
	case "change":
		if p.PreviousHash == "" || p.PreviousHash != u.PasswordHash {
			return nil, ErrBadLogin
		}
	case "admin":
		// An admin sets a temporary password: the user picks a new one
		// at the next sign-in.
	case "reset":
		if u.ResetCodeHash == "" || p.CodeHash != u.ResetCodeHash || u.ResetExpires == nil || !c.At.Before(*u.ResetExpires) {
			return nil, errBadResetCode
		}
	default:
		return nil, fmt.Errorf("set password: unknown way %q", p.Via)
	}
	u.PasswordHash, u.Status = p.Hash, UserConfirmed
	if p.Via == "admin" {
		u.Status = UserForceChangePassword
	}
	u.ResetCodeHash, u.ResetExpires, u.FailedLogins, u.LockedUntil = "", nil, 0, nil
	if p.Via != "challenge" {
		u.Generation++ // other sessions end
	}
	return u.Generation, putUser(t, u, c.At)
}

func applyLoginResult(t *tx, c *Command) (any, error) {
	p, err := decode[LoginResult](c)
	if err != nil {
		return nil, err
	}
	u, err := getUser(t, p.Username)
	if err != nil {
		return nil, ErrBadLogin
	}
	if u.Locked(c.At) {
		return nil, ErrLoginLocked
	}
	if !p.OK || p.PasswordHash != u.PasswordHash {
		u.FailedLogins++
		if u.FailedLogins >= MaxFailedLogins {
			until := c.At.Add(LockoutDuration)
			u.LockedUntil, u.FailedLogins = &until, 0
		}
		if err := putUser(t, u, c.At); err != nil {
			return nil, err
		}
		return false, nil // committed: the failure counts
	}
	if !u.Enabled {
		return nil, ErrUserDisabled
	}
	u.FailedLogins, u.LockedUntil = 0, nil
	if err := putUser(t, u, c.At); err != nil {
		return nil, err
	}
	if p.Refresh != nil && p.RefreshHash != "" {
		rt := *p.Refresh
		rt.Generation, rt.UserInserted = u.Generation, u.InsertedDate
		if err := t.setJSON(refreshKey(p.RefreshHash), rt); err != nil {
			return nil, err
		}
	}
	return true, nil
}

// applyExternalSignIn stores an external session's refresh token. The
// handler verified the ID token; the bounds are checked here so a
// replayed command is refused the same way.
func applyExternalSignIn(t *tx, c *Command) (any, error) {
	p, err := decode[ExternalSignIn](c)
	if err != nil {
		return nil, err
	}
	rt := p.Refresh
	bad := func(k, msg string) error { return &ValidationError{Items: []ValidationItem{{Key: k, Msg: msg}}} }
	switch {
	case len(p.RefreshHash) != 64:
		return nil, bad("refreshToken", "'refreshToken' is required")
	case !rt.External || rt.Expires.IsZero():
		return nil, bad("refreshToken", "an external session's refresh token is required")
	case rt.Username == "" || len(rt.Username) > MaxUsernameBytes || !utf8.ValidString(rt.Username):
		return nil, bad("username", fmt.Sprintf("the identity provider's username must be 1 to %d bytes", MaxUsernameBytes))
	case len(rt.Groups) > MaxExternalGroups:
		return nil, bad("groups", fmt.Sprintf("the identity provider gave more than %d groups", MaxExternalGroups))
	case len(rt.Email) > MaxExternalEmailBytes || !utf8.ValidString(rt.Email):
		return nil, bad("email", "the identity provider's e-mail address is too long")
	}
	for _, g := range rt.Groups {
		if g == "" || len(g) > MaxGroupBytes || !utf8.ValidString(g) {
			return nil, bad("groups", fmt.Sprintf("a group name from the identity provider must be 1 to %d bytes", MaxGroupBytes))
		}
	}
	return nil, t.setJSON(refreshKey(p.RefreshHash), rt)
}

// applyRevokeRefresh removes a refresh token; one already gone is no
// error (a sign-out is idempotent).
func applyRevokeRefresh(t *tx, c *Command) (any, error) {
	p, err := decode[RevokeRefresh](c)
	if err != nil {
		return nil, err
	}
	if p.RefreshHash == "" {
		return nil, &ValidationError{Items: []ValidationItem{{Key: "refreshToken", Msg: "'refreshToken' is required"}}}
	}
	return nil, t.del(refreshKey(p.RefreshHash))
}

func applyAddGroup(t *tx, c *Command) (any, error) {
	p, err := decode[AddGroup](c)
	if err != nil {
		return nil, err
	}
	g := p.Group
	if err := CheckGroupName(g.Name); err != nil {
		return nil, err
	}
	if len(g.Description) > MaxValueBytes {
		return nil, Invalid("description", fmt.Sprintf("'description' must be at most %d bytes", MaxValueBytes))
	}
	if ok, err := t.exists(groupKey(g.Name)); err != nil {
		return nil, err
	} else if ok {
		return nil, &ConflictError{Msg: fmt.Sprintf("group '%s' already exists", g.Name)}
	}
	if t.count([]byte(pfxGroup)) >= MaxGroups {
		return nil, Invalid("group", fmt.Sprintf("the directory holds at most %d groups", MaxGroups))
	}
	g.InsertedDate, g.LastModifiedDate = c.At, c.At
	return nil, t.setJSON(groupKey(g.Name), g)
}

func applyDeleteGroup(t *tx, c *Command) (any, error) {
	p, err := decode[DeleteGroup](c)
	if err != nil {
		return nil, err
	}
	if ok, err := t.exists(groupKey(p.Name)); err != nil {
		return nil, err
	} else if !ok {
		return nil, groupNotFound(p.Name)
	}
	pre := groupUserPrefix(p.Name)
	for _, k := range t.keys(pre) {
		user := string(k[len(pre):])
		if err := t.del(k); err != nil {
			return nil, err
		}
		if err := t.del(userGroupKey(user, p.Name)); err != nil {
			return nil, err
		}
		// The user's tokens carry the group: they end.
		if u, err := getUser(t, user); err == nil {
			u.Generation++
			if err := putUser(t, u, c.At); err != nil {
				return nil, err
			}
		}
	}
	return nil, t.del(groupKey(p.Name))
}

func applyAddGroupMember(t *tx, c *Command) (any, error) {
	p, err := decode[GroupMember](c)
	if err != nil {
		return nil, err
	}
	if ok, err := t.exists(groupKey(p.Group)); err != nil {
		return nil, err
	} else if !ok {
		return nil, groupNotFound(p.Group)
	}
	if _, err := getUser(t, p.Username); err != nil {
		return nil, err
	}
	if t.count(userGroupPrefix(p.Username)) >= MaxGroupsPerUser {
		return nil, Invalid("group", fmt.Sprintf("a user is in at most %d groups", MaxGroupsPerUser))
	}
	if err := t.set(userGroupKey(p.Username, p.Group), nil); err != nil {
		return nil, err
	}
	return nil, t.set(groupUserKey(p.Group, p.Username), nil)
}

func applyRemoveGroupMember(t *tx, c *Command) (any, error) {
	p, err := decode[GroupMember](c)
	if err != nil {
		return nil, err
	}
	if ok, err := t.exists(userGroupKey(p.Username, p.Group)); err != nil {
		return nil, err
	} else if !ok {
		return nil, &NotFoundError{Msg: fmt.Sprintf("user '%s' is not in group '%s'", p.Username, p.Group)}
	}
	if err := t.del(userGroupKey(p.Username, p.Group)); err != nil {
		return nil, err
	}
	if err := t.del(groupUserKey(p.Group, p.Username)); err != nil {
		return nil, err
	}
	u, err := getUser(t, p.Username)
	if err != nil {
		return nil, err
	}
	u.Generation++ // tokens carrying the group end
	return nil, putUser(t, u, c.At)
}

// GetUser returns one user.
func (d *DB) GetUser(name string) (*User, error) {
	var u *User
	err := d.view(func(t *tx) error {
		var err error
		u, err = getUser(t, name)
		return err
	})
	return u, err
}

// UserGroups returns the names of a user's groups, sorted.
func (d *DB) UserGroups(name string) ([]string, error) {
	var out []string
	err := d.view(func(t *tx) error {
		pre := userGroupPrefix(name)
		for _, k := range t.keys(pre) {
			out = append(out, string(k[len(pre):]))
		}
		return nil
	})
	return out, err
}

// Users lists users by name after after.
func (d *DB) Users(after string, limit int) ([]User, string, error) {
	return listPage(d, []byte(pfxUser), after, limit, func(u *User) string { return u.Username })
}

// Groups lists groups by name after after.
func (d *DB) Groups(after string, limit int) ([]Group, string, error) {
	return listPage(d, []byte(pfxGroup), after, limit, func(g *Group) string { return g.Name })
}

// GetGroup returns one group.
func (d *DB) GetGroup(name string) (*Group, error) {
	var g Group
	err := d.view(func(t *tx) error { return t.getJSON(groupKey(name), &g) })
	if errors.Is(err, ErrNotFound) {
		return nil, groupNotFound(name)
	}
	return &g, err
}

// GroupUsers lists the members of a group by name after after.
func (d *DB) GroupUsers(group, after string, limit int) ([]User, string, error) {
	var out []User
	var next string
	err := d.view(func(t *tx) error {
		if ok, err := t.exists(groupKey(group)); err != nil {
			return err
		} else if !ok {
			return groupNotFound(group)
		}
		pre := groupUserPrefix(group)
		for _, k := range t.keys(pre) {
			name := string(k[len(pre):])
			if after != "" && name <= after {
				continue
			}
			if limit > 0 && len(out) == limit {
				next = out[len(out)-1].Username
				return nil
			}
			u, err := getUser(t, name)
			if err != nil {
				return err
			}
			out = append(out, *u)
		}
		return nil
	})
	return out, next, err
}

// LookupRefresh returns a stored refresh token by the hash of its value.
func (d *DB) LookupRefresh(hash string) (*RefreshToken, error) {
	var rt RefreshToken
	err := d.view(func(t *tx) error { return t.getJSON(refreshKey(hash), &rt) })
	if err != nil {
		return nil, err
	}
	return &rt, nil
}
