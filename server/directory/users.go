package directory

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"quire/auth"
	"quire/pipeline"
	"quire/server/internal/api"
	"quire/storage"
)

// The built-in user directory and FormKiQ's sign-in operations (API.md
// "Users, groups and sign-in").

const (
	// resetCodeTTL is how long a mailed reset code or temporary password
	// works.
	resetCodeTTL = time.Hour
	// mailTimeout bounds sending one directory mail.
	mailTimeout = 60 * time.Second
)

type userAttrsIn map[string]string

func userJSON(u *storage.User) map[string]any {
	m := map[string]any{
		"username":         u.Username,
		"email":            u.Email,
		"enabled":          u.Enabled,
		"userStatus":       u.Status,
		"insertedDate":     api.FormatDate(u.InsertedDate),
		"lastModifiedDate": api.FormatDate(u.LastModifiedDate),
	}
	if len(u.Attributes) > 0 {
		m["attributes"] = u.Attributes
	}
	return m
}

func groupJSON(g *storage.Group) map[string]any {
	return map[string]any{"name": g.Name, "description": g.Description,
		"insertedDate": api.FormatDate(g.InsertedDate), "lastModifiedDate": api.FormatDate(g.LastModifiedDate)}
}

// userAttributeKeys are FormKiQ's UserAttributes fields.
var userAttributeKeys = map[string]bool{"address": true, "birthdate": true, "familyName": true, "gender": true,
	"givenName": true, "locale": true, "middleName": true, "name": true, "nickname": true, "phoneNumber": true,
	"picture": true, "preferredUsername": true, "profile": true, "zoneinfo": true, "website": true}

// HandleAddUser serves POST /users (Admins) {user:{username, attributes},
// temporaryPassword?}: without a temporary password one is made and
// mailed to the username (an e-mail address).
func (s *Handlers) HandleAddUser(r *api.Request) error {
	var in struct {
		User *struct {
			Username   string      `json:"username"`
			Email      string      `json:"email"`
			Attributes userAttrsIn `json:"attributes"`
		} `json:"user"`
		TemporaryPassword *string `json:"temporaryPassword"`
	}
	if err := r.ReadBody(&in, 64<<10); err != nil {
		return err
	}
	if in.User == nil {
		return api.Invalid("user", "'user' is required")
	}
	u := storage.User{Username: storage.NormalizeUsername(in.User.Username), Email: in.User.Email, Attributes: map[string]string(in.User.Attributes)}
	if err := storage.CheckUsername(u.Username); err != nil {
		return err
	}
	if u.Email == "" && api.ValidEmail(u.Username) {
		u.Email = u.Username
	}
	if u.Email != "" && !api.ValidEmail(u.Email) {
		return api.Invalid("email", "invalid 'email'")
	}
	for k, v := range u.Attributes {
		if !userAttributeKeys[k] {
			return api.Invalid("attributes."+k, fmt.Sprintf("unknown user attribute '%s'", k))
		}
		if len(v) > storage.MaxValueBytes {
			return api.Invalid("attributes."+k, fmt.Sprintf("'%s' must be at most %d bytes", k, storage.MaxValueBytes))
		}
	}
	pw, mail := "", false
	if in.TemporaryPassword != nil {
		pw = *in.TemporaryPassword
		if err := auth.CheckPassword(pw); err != nil {
			return api.Invalid("temporaryPassword", err.Error())
		}
	} else {
		if u.Email == "" {
			return api.Invalid("temporaryPassword", "'temporaryPassword' is required for a user without an e-mail address")
		}
		if err := s.serverMail(); err != nil {
			return api.Invalid("temporaryPassword", "'temporaryPassword' is required: "+err.Error())
		}
		pw, _ = auth.NewSecret(12)
		mail = true
	}
	hash, err := auth.HashPassword(pw)
	if err != nil {
		return err
	}
	u.PasswordHash = hash
	if _, err := s.Apply(r, storage.OpAddUser, storage.AddUser{User: u}); err != nil {
		return err
	}
	if mail {
		if err := s.mailUser(r, u.Email, "Your Quire account",
			fmt.Sprintf("An account was made for you on Quire.\n\nUsername: %s\nTemporary password: %s\n\nSign in with it; you will be asked to choose a new password.\n", u.Username, pw)); err != nil {
			// The user must not exist with a password nobody got: take it
			// back, so the 502 leaves nothing behind.
			if _, derr := s.Apply(r, storage.OpDeleteUser, storage.DeleteUser{Username: u.Username}); derr != nil {
				s.Log.Error("user whose temporary password was not sent not removed", "user", u.Username, "err", derr)
				return api.ErrStatus(http.StatusBadGateway, fmt.Sprintf("user '%s' created, but the temporary password was not sent (%v): set one with PUT /users/%s/RESET_PASSWORD {\"temporaryPassword\"}", u.Username, err, u.Username))
			}
			return api.ErrStatus(http.StatusBadGateway, fmt.Sprintf("user '%s' not created: the temporary password was not sent (%v); try again, or give 'temporaryPassword'", u.Username, err))
		}
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf("user '%s' created", u.Username)})
}

// serverMail reports whether directory mail can be sent: the server's own
// mail settings are complete (never a site's, which its governors change).
func (s *Handlers) serverMail() error {
	if s.Deps.Pipeline == nil {
		return pipeline.ErrNoServerMail
	}
	return s.Deps.Pipeline.ServerMail()
}

// errNoResetMail answers /forgotPassword on a server without mail
// settings of its own: 400, as for other flows the server does not offer
// (/confirmRegistration), for every username.
var errNoResetMail = api.ErrStatus(http.StatusBadRequest, "password reset by mail is not available: "+pipeline.ErrNoServerMail.Error()+"; an admin can set a temporary password instead (PUT /users/{username}/RESET_PASSWORD {\"temporaryPassword\"})")

// mailUser sends a directory mail through the server's own mail settings.
func (s *Handlers) mailUser(r *api.Request, to, subject, text string) error {
	if err := s.serverMail(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(r.UserContext(), mailTimeout)
	defer cancel()
	return s.Deps.Pipeline.SendUserMail(ctx, to, subject, text)
}

// userParam is the {username} path parameter in stored form.
func userParam(r *api.Request) string { return storage.NormalizeUsername(api.PathParam(r, "username")) }

// HandleGetUsers serves GET /users.
func (s *Handlers) HandleGetUsers(r *api.Request) error {
	return api.KeyPage(r, "us", "users", s.DB.Users, userJSON)
}

// HandleGetUser serves GET /users/{username}.
func (s *Handlers) HandleGetUser(r *api.Request) error {
	u, err := s.DB.GetUser(userParam(r))
	if err != nil {
		return err
	}
	return r.JSON(map[string]any{"user": userJSON(u)})
}

// HandleDeleteUser serves DELETE /users/{username}.
func (s *Handlers) HandleDeleteUser(r *api.Request) error {
	name := userParam(r)
	if _, err := s.Apply(r, storage.OpDeleteUser, storage.DeleteUser{Username: name}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf("user '%s' deleted", name)})
}

// HandleGetUserGroups serves GET /users/{username}/groups.
func (s *Handlers) HandleGetUserGroups(r *api.Request) error {
	name := userParam(r)
	if _, err := s.DB.GetUser(name); err != nil {
		return err
	}
	names, err := s.DB.UserGroups(name)
	if err != nil {
		return err
	}
	out := make([]map[string]any, 0, len(names))
	for _, n := range names {
		if g, err := s.DB.GetGroup(n); err == nil {
			out = append(out, groupJSON(g))
		}
	}
	return r.JSON(map[string]any{"groups": out})
}

// HandleUserOperation serves PUT /users/{username}/{userOperation}:
// DISABLE, ENABLE or RESET_PASSWORD (also as disable, enable,
// reset-password). A reset mails a code, or with {"temporaryPassword"}
// sets one the user replaces at the next sign-in.
func (s *Handlers) HandleUserOperation(r *api.Request) error {
	name := userParam(r)
	op := strings.ToUpper(strings.ReplaceAll(api.PathParam(r, "userOperation"), "-", "_"))
	switch op {
	case "DISABLE", "ENABLE":
		if _, err := s.Apply(r, storage.OpUserOperation, storage.UserOperation{Username: name, Operation: op}); err != nil {
			return err
		}
		return r.JSON(api.MessageBody{Message: fmt.Sprintf("user '%s' %sd", name, strings.ToLower(op))})
	case "RESET_PASSWORD":
	default:
		return api.Invalid("userOperation", "invalid 'userOperation': DISABLE, ENABLE or RESET_PASSWORD")
	}
	var in struct {
		TemporaryPassword *string `json:"temporaryPassword"`
	}
	if r.Request().Header.ContentLength() != 0 {
		if err := r.ReadBody(&in, 64<<10); err != nil {
			return err
		}
	}
	if in.TemporaryPassword != nil {
		if err := auth.CheckPassword(*in.TemporaryPassword); err != nil {
			return api.Invalid("temporaryPassword", err.Error())
		}
		hash, err := auth.HashPassword(*in.TemporaryPassword)
		if err != nil {
			return err
		}
		if _, err := s.Apply(r, storage.OpSetPassword, storage.SetPassword{Username: name, Hash: hash, Via: "admin"}); err != nil {
			return err
		}
		return r.JSON(api.MessageBody{Message: fmt.Sprintf("temporary password set for user '%s'", name)})
	}
	u, err := s.DB.GetUser(name)
	if err != nil {
		return err
	}
	if u.Email == "" {
		return api.Invalid("temporaryPassword", "the user has no e-mail address: give 'temporaryPassword'")
	}
	if err := s.serverMail(); err != nil {
		return api.Invalid("temporaryPassword", "'temporaryPassword' is required: "+err.Error())
	}
	code, codeHash := auth.NewSecret(6)
	exp := r.Now.Add(resetCodeTTL)
	if _, err := s.Apply(r, storage.OpUserOperation, storage.UserOperation{Username: name, Operation: op, ResetCodeHash: codeHash, ResetExpires: &exp}); err != nil {
		return err
	}
	if err := s.mailUser(r, u.Email, "Reset your Quire password", resetText(name, code)); err != nil {
		return api.ErrStatus(http.StatusBadGateway, fmt.Sprintf("the reset code was not sent: %v", err))
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf("password reset sent to user '%s'", name)})
}

func resetText(user, code string) string {
	return fmt.Sprintf("A password reset was asked for your Quire account %s.\n\nCode: %s\n\nIt works for one hour (POST /forgotPasswordConfirm with username, code and password).\n", user, code)
}

// HandleGetGroups serves GET /groups.
func (s *Handlers) HandleGetGroups(r *api.Request) error {
	return api.KeyPage(r, "gr", "groups", s.DB.Groups, groupJSON)
}

// HandleAddGroup serves POST /groups {group:{name, description}}.
func (s *Handlers) HandleAddGroup(r *api.Request) error {
	var in struct {
		Group *struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		} `json:"group"`
	}
	if err := r.ReadBody(&in, 64<<10); err != nil {
		return err
	}
	if in.Group == nil {
		return api.Invalid("group", "'group' is required")
	}
	g := storage.Group{Name: strings.TrimSpace(in.Group.Name), Description: in.Group.Description}
	if _, err := s.Apply(r, storage.OpAddGroup, storage.AddGroup{Group: g}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf("group '%s' created", g.Name)})
}

// HandleGetGroup serves GET /groups/{groupName}.
func (s *Handlers) HandleGetGroup(r *api.Request) error {
	g, err := s.DB.GetGroup(api.PathParam(r, "groupName"))
	if err != nil {
		return err
	}
	return r.JSON(map[string]any{"group": groupJSON(g)})
}

// HandleDeleteGroup serves DELETE /groups/{groupName}.
func (s *Handlers) HandleDeleteGroup(r *api.Request) error {
	name := api.PathParam(r, "groupName")
	if _, err := s.Apply(r, storage.OpDeleteGroup, storage.DeleteGroup{Name: name}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf("group '%s' deleted", name)})
}

// HandleGetGroupUsers serves GET /groups/{groupName}/users.
func (s *Handlers) HandleGetGroupUsers(r *api.Request) error {
	group := api.PathParam(r, "groupName")
	return api.KeyPage(r, "gu", "users", func(after string, limit int) ([]storage.User, string, error) {
		return s.DB.GroupUsers(group, after, limit)
	}, userJSON)
}

// HandleAddGroupUser serves POST /groups/{groupName}/users {user:{username}}.
func (s *Handlers) HandleAddGroupUser(r *api.Request) error {
	var in struct {
		User *struct {
			Username string `json:"username"`
		} `json:"user"`
	}
	if err := r.ReadBody(&in, 64<<10); err != nil {
		return err
	}
	if in.User == nil || strings.TrimSpace(in.User.Username) == "" {
		return api.Invalid("username", "'username' is required")
	}
	m := storage.GroupMember{Group: api.PathParam(r, "groupName"), Username: storage.NormalizeUsername(in.User.Username)}
	if _, err := s.Apply(r, storage.OpAddGroupMember, m); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf("user '%s' added to group '%s'", m.Username, m.Group)})
}

// HandleRemoveGroupUser serves DELETE /groups/{groupName}/users/{username}.
func (s *Handlers) HandleRemoveGroupUser(r *api.Request) error {
	m := storage.GroupMember{Group: api.PathParam(r, "groupName"), Username: userParam(r)}
	if _, err := s.Apply(r, storage.OpRemoveGroupMember, m); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf("user '%s' removed from group '%s'", m.Username, m.Group)})
}

type authResult struct {
	AccessToken  string `json:"AccessToken"`
	ExpiresIn    int    `json:"ExpiresIn"`
	IdToken      string `json:"IdToken"`
	RefreshToken string `json:"RefreshToken,omitempty"`
	TokenType    string `json:"TokenType"`
}

// issue signs a directory user's access and ID tokens.
func (s *Handlers) issue(u *storage.User, refresh string) (map[string]any, error) {
	groups, err := s.DB.UserGroups(u.Username)
	if err != nil {
		return nil, err
	}
	at, err := s.Deps.Auth.SignUser("access", u.Username, u.Email, groups, u.Generation)
	if err != nil {
		return nil, err
	}
	it, err := s.Deps.Auth.SignUser("id", u.Username, u.Email, groups, u.Generation)
	if err != nil {
		return nil, err
	}
	return map[string]any{"AuthenticationResult": authResult{AccessToken: at, IdToken: it, RefreshToken: refresh,
		ExpiresIn: int(s.Deps.Auth.AccessTTL() / time.Second), TokenType: "Bearer"}}, nil
}

// HandleLogin serves POST /login {username, password}.
func (s *Handlers) HandleLogin(c *fiber.Ctx) error {
	var in struct {
		Username      string `json:"username"`
		Password      string `json:"password"`
		RefreshCookie bool   `json:"refreshCookie"`
	}
	r := s.PublicCtx(c, "")
	if err := r.ReadBody(&in, 16<<10); err != nil {
		return err
	}
	if in.RefreshCookie {
		if err := s.consoleRequest(c); err != nil {
			return err
		}
	}
	name := storage.NormalizeUsername(in.Username)
	if name == "" || in.Password == "" {
		return api.Invalid("", "'username' and 'password' are required")
	}
	// Cheap checks first: a name no user can have or a password longer
	// than any user's is refused without hashing (the answer says nothing
	// about which users exist: no user has such a name or password).
	if storage.CheckUsername(name) != nil || len(in.Password) > auth.MaxPasswordBytes {
		return storage.ErrBadLogin
	}
	r.Principal.Username = name
	u, err := s.DB.GetUser(name)
	if err != nil && !api.IsNotFound(err) {
		return err
	}
	hash := ""
	if u != nil {
		if u.Locked(r.Now) {
			return storage.ErrLoginLocked
		}
		hash = u.PasswordHash
	}
	ok, err := s.CheckPassword(api.SignInRoute(r), hash, in.Password)
	if err != nil {
		return err
	}
	if u == nil {
		return storage.ErrBadLogin
	}
	res := storage.LoginResult{Username: name, OK: ok, PasswordHash: hash}
	refresh := ""
	if ok && u.Status == storage.UserConfirmed {
		var rh string
		refresh, rh = auth.NewSecret(32)
		res.RefreshHash, res.Refresh = rh, &storage.RefreshToken{Username: name, Expires: r.Now.Add(s.Deps.Auth.RefreshTTL())}
	}
	out, err := s.Apply(r, storage.OpLoginResult, res)
	if err != nil {
		return err
	}
	if good, _ := out.Value.(bool); !good {
		return storage.ErrBadLogin
	}
	switch u.Status {
	case storage.UserForceChangePassword:
		return r.JSON(map[string]any{"ChallengeName": "NEW_PASSWORD_REQUIRED", "Session": s.Deps.Auth.Session(name, u.Generation),
			"ChallengeParameters": map[string]string{"USER_ID_FOR_SRP": name, "requiredAttributes": "[]", "userAttributes": "{}"}})
	case storage.UserResetRequired:
		return &storage.AccessError{Msg: "Password reset required for the user"}
	}
	return s.answerTokens(r, u, refresh, in.RefreshCookie)
}

// answerTokens answers a sign-in: the tokens, with the refresh token in
// the answer or, for the console (refreshCookie), in its cookie only.
func (s *Handlers) answerTokens(r *api.Request, u *storage.User, refresh string, cookie bool) error {
	if cookie && refresh != "" {
		s.setRefreshCookie(r.Ctx, refresh, s.Deps.Auth.RefreshTTL())
		refresh = ""
	}
	body, err := s.issue(u, refresh)
	if err != nil {
		return err
	}
	return r.JSON(body)
}

// HandleRespondToAuthChallenge serves POST /respondToAuthChallenge: the
// new password of a first sign-in. It takes {session, username,
// newPassword} or Cognito's {ChallengeName, Session,
// ChallengeResponses:{USERNAME, NEW_PASSWORD}}.
func (s *Handlers) HandleRespondToAuthChallenge(c *fiber.Ctx) error {
	var in struct {
		Session            string            `json:"session"`
		SessionC           string            `json:"Session"`
		Username           string            `json:"username"`
		NewPassword        string            `json:"newPassword"`
		ChallengeName      string            `json:"challengeName"`
		ChallengeNameC     string            `json:"ChallengeName"`
		ChallengeResponses map[string]string `json:"ChallengeResponses"`
		RefreshCookie      bool              `json:"refreshCookie"`
	}
	r := s.PublicCtx(c, "")
	if err := r.ReadBody(&in, 16<<10); err != nil {
		return err
	}
	if in.RefreshCookie {
		if err := s.consoleRequest(c); err != nil {
			return err
		}
	}
	session, user, pw := first(in.Session, in.SessionC), in.Username, in.NewPassword
	if in.ChallengeResponses != nil {
		user, pw = first(user, in.ChallengeResponses["USERNAME"]), first(pw, in.ChallengeResponses["NEW_PASSWORD"])
	}
	if name := first(in.ChallengeName, in.ChallengeNameC); name != "" && name != "NEW_PASSWORD_REQUIRED" {
		return api.Invalid("challengeName", "invalid 'challengeName': NEW_PASSWORD_REQUIRED")
	}
	name, gen, ok := s.Deps.Auth.CheckSession(session)
	if !ok || (user != "" && storage.NormalizeUsername(user) != name) {
		return &storage.AccessError{Msg: "Invalid session for the user, session is expired."}
	}
	if err := auth.CheckPassword(pw); err != nil {
		return api.Invalid("newPassword", err.Error())
	}
	hash, err := s.HashNewPassword(api.SignInRoute(r), pw)
	if err != nil {
		return err
	}
	r.Principal.Username = name
	if _, err := s.Apply(r, storage.OpSetPassword, storage.SetPassword{Username: name, Hash: hash, Via: "challenge", Generation: &gen}); err != nil {
		return err
	}
	return s.signIn(r, name, in.RefreshCookie)
}

// signIn issues tokens and a refresh token for a user whose password was
// just set.
func (s *Handlers) signIn(r *api.Request, name string, cookie bool) error {
	u, err := s.DB.GetUser(name)
	if err != nil {
		return err
	}
	refresh, rh := auth.NewSecret(32)
	res := storage.LoginResult{Username: name, OK: true, PasswordHash: u.PasswordHash, RefreshHash: rh,
		Refresh: &storage.RefreshToken{Username: name, Expires: r.Now.Add(s.Deps.Auth.RefreshTTL())}}
	if _, err := s.Apply(r, storage.OpLoginResult, res); err != nil {
		return err
	}
	return s.answerTokens(r, u, refresh, cookie)
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// HandleRefresh serves POST /login/refresh {refreshToken}: new access and
// ID tokens while the user is enabled and nothing ended the session.
func (s *Handlers) HandleRefresh(c *fiber.Ctx) error {
	var in struct {
		RefreshToken string `json:"refreshToken"`
	}
	r := s.PublicCtx(c, "")
	if err := r.ReadBody(&in, 16<<10); err != nil {
		return err
	}
	if in.RefreshToken == "" && c.Cookies(RefreshCookie) != "" {
		// The console's cookie (console.go), only with its header and
		// from this server's own pages.
		if err := s.consoleRequest(c); err != nil {
			return err
		}
		in.RefreshToken = c.Cookies(RefreshCookie)
	}
	bad := &storage.AccessError{Msg: "Invalid Refresh Token"}
	if in.RefreshToken == "" || len(in.RefreshToken) > 256 {
		return bad
	}
	rt, err := s.DB.LookupRefresh(auth.SecretHash(in.RefreshToken))
	if err != nil {
		if api.IsNotFound(err) {
			return bad
		}
		return err
	}
	if rt.External {
		// A session the identity provider opened (oidc.go): it ends with
		// its lifetime, or when the provider is no longer configured.
		if _, on := s.Deps.Auth.OIDC(); !on || !r.Now.Before(rt.Expires) {
			return bad
		}
		body, err := s.issueExternal(rt)
		if err != nil {
			return err
		}
		return r.JSON(body)
	}
	u, err := s.DB.GetUser(rt.Username)
	if err != nil || !r.Now.Before(rt.Expires) {
		return bad
	}
	if !u.Enabled && disabledSince(rt, u, s.Deps.Auth.RefreshTTL()) {
		// Say why, as a sign-in does (Cognito's answer): the console
		// tells a user disabled mid-session instead of guessing.
		return storage.ErrUserDisabled
	}
	if !u.Enabled || !rt.Of(u, s.Deps.Auth.RefreshTTL()) {
		return bad
	}
	body, err := s.issue(u, "")
	if err != nil {
		return err
	}
	return r.JSON(body)
}

// disabledSince tells whether rt was a session of u, disabled since: the
// same user (not a deleted one's namesake) whose generation moved on by
// the disable alone. A token that had ended before (a password change,
// a left group) stays "Invalid Refresh Token".
func disabledSince(rt *storage.RefreshToken, u *storage.User, ttl time.Duration) bool {
	was := *rt
	was.Generation++ // DISABLE moves the generation on once
	return was.Of(u, ttl)
}

// HandleChangePassword serves POST /changePassword {accessToken,
// previousPassword, proposedPassword}: other sessions of the user end.
func (s *Handlers) HandleChangePassword(c *fiber.Ctx) error {
	var in struct {
		AccessToken      string `json:"accessToken"`
		PreviousPassword string `json:"previousPassword"`
		ProposedPassword string `json:"proposedPassword"`
	}
	r := s.PublicCtx(c, "")
	if err := r.ReadBody(&in, 16<<10); err != nil {
		return err
	}
	p, err := s.Deps.Auth.Authenticate(in.AccessToken)
	if err != nil {
		return err
	}
	u, err := s.DB.GetUser(p.Username)
	if err != nil {
		return storage.ErrBadLogin // not a directory user
	}
	if err := auth.CheckPassword(in.ProposedPassword); err != nil {
		return api.Invalid("proposedPassword", err.Error())
	}
	if ok, err := s.CheckPassword(api.SignInRoute(r), u.PasswordHash, in.PreviousPassword); err != nil {
		return err
	} else if !ok {
		return storage.ErrBadLogin
	}
	hash, err := s.HashNewPassword(api.SignInRoute(r), in.ProposedPassword)
	if err != nil {
		return err
	}
	r.Principal.Username = u.Username
	if _, err := s.Apply(r, storage.OpSetPassword, storage.SetPassword{Username: u.Username, Hash: hash, Via: "change", PreviousHash: u.PasswordHash}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "Password changed"})
}

// HandleForgotPassword serves POST /forgotPassword {username}: a code by
// mail to an enabled user with an address. The answer is the same for
// every username, so it tells nobody which exist.
func (s *Handlers) HandleForgotPassword(c *fiber.Ctx) error {
	var in struct {
		Username string `json:"username"`
	}
	r := s.PublicCtx(c, "")
	if err := r.ReadBody(&in, 16<<10); err != nil {
		return err
	}
	name := storage.NormalizeUsername(in.Username)
	if name == "" {
		return api.Invalid("username", "'username' is required")
	}
	// The same answer for every username: it tells nothing about users.
	if s.serverMail() != nil {
		return errNoResetMail
	}
	done := r.JSON(api.MessageBody{Message: "If the user exists, a code was sent to its e-mail address"})
	u, err := s.DB.GetUser(name)
	if err != nil || !u.Enabled || u.Email == "" {
		return done
	}
	code, codeHash := auth.NewSecret(6)
	r.Principal.Username = name
	if _, err := s.Apply(r, storage.OpSetResetCode, storage.SetResetCode{Username: name, ResetCodeHash: codeHash, ResetExpires: r.Now.Add(resetCodeTTL)}); err != nil {
		return err
	}
	if err := s.mailUser(r, u.Email, "Reset your Quire password", resetText(name, code)); err != nil {
		s.Log.Warn("password reset code not sent", "user", name, "err", err)
	}
	return done
}

// HandleForgotPasswordConfirm serves POST /forgotPasswordConfirm
// {username, code, password}.
func (s *Handlers) HandleForgotPasswordConfirm(c *fiber.Ctx) error {
	var in struct {
		Username string `json:"username"`
		Code     string `json:"code"`
		Password string `json:"password"`
	}
	r := s.PublicCtx(c, "")
	if err := r.ReadBody(&in, 16<<10); err != nil {
		return err
	}
	name := storage.NormalizeUsername(in.Username)
	if name == "" || in.Code == "" {
		return api.Invalid("", "'username' and 'code' are required")
	}
	if err := auth.CheckPassword(in.Password); err != nil {
		return api.Invalid("password", err.Error())
	}
	// Cheap checks first: only the right code of a pending reset is worth
	// an argon2 hash. Every wrong case gets the same answer; the applier
	// checks the code again in its transaction.
	badCode := api.Invalid("code", "Invalid verification code provided, please try again.")
	codeHash := auth.SecretHash(in.Code)
	u, err := s.DB.GetUser(name)
	if err != nil && !api.IsNotFound(err) {
		return err
	}
	if u == nil || u.ResetCodeHash == "" || subtle.ConstantTimeCompare([]byte(u.ResetCodeHash), []byte(codeHash)) != 1 ||
		u.ResetExpires == nil || !r.Now.Before(*u.ResetExpires) {
		return badCode
	}
	hash, err := s.HashNewPassword(api.SignInRoute(r), in.Password)
	if err != nil {
		return err
	}
	r.Principal.Username = name
	_, err = s.Apply(r, storage.OpSetPassword, storage.SetPassword{Username: name, Hash: hash, Via: "reset", CodeHash: codeHash})
	if api.IsNotFound(err) {
		return badCode
	}
	if err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "Password reset"})
}

// HandleConfirmRegistration serves POST /confirmRegistration: Quire has no
// self sign-up (admins create users), so there is nothing to confirm.
func (s *Handlers) HandleConfirmRegistration(c *fiber.Ctx) error {
	return api.BadRequest("self registration is not enabled on this server: an admin creates users (POST /users)")
}
