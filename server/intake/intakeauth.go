package intake

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"quire/auth"
	"quire/server/internal/api"
	"quire/storage"
)

// ErrBadCredentials is every refused user name and password of the
// scanner sources (SMTP AUTH, WebDAV Basic): the answer says nothing of
// which part was wrong.
var ErrBadCredentials = errors.New("invalid user name or password")

// CredentialPrincipal verifies a user name and password from the client
// address from as a scanner or a file manager sends them (SMTP AUTH PLAIN/LOGIN, WebDAV's Basic auth):
// the password is an intake API key (the user name is then free, by
// convention "apikey"), or a directory user's password. A directory
// sign-in counts toward the user's lockout as POST /login does, and the
// principal is the one the user's access token would carry.
func (s *Handlers) CredentialPrincipal(ctx context.Context, from, user, pass string) (*auth.Principal, error) {
	c, err := s.CredentialToken(ctx, api.PasswordCheck{Addr: from}, user, pass)
	if err != nil {
		return nil, err
	}
	return s.Deps.Auth.Authenticate(c.Tok)
}

// CredentialToken checks a user name and password as CredentialPrincipal
// does and answers the token that stands for them: the API key itself,
// or a directory user's fresh access token. Authenticate checks either
// against the store at every use (the key still exists; the user is
// still enabled and of the same generation), so a cache of tokens
// (WebDAV's) never outlives a revoked key, a disabled user or a changed
// password (the cache compares the user's password hash too).
//
// A directory password is checked through CheckPassword: it spends the
// client's sign-in budget (pc) and is refused busy rather than queued
// (*ErrPasswordBusy; issue 43). An API key costs neither.
func (s *Handlers) CredentialToken(ctx context.Context, pc api.PasswordCheck, user, pass string) (CheckedCredential, error) {
	if pass == "" || len(pass) > auth.MaxPasswordBytes || len(user) > 256 || !utf8.ValidString(user) || !utf8.ValidString(pass) {
		return CheckedCredential{}, ErrBadCredentials
	}
	if strings.Count(pass, ".") != 2 { // never a JWT: a token is not a password
		if p, err := s.Deps.Auth.Authenticate(pass); err == nil && p.APIKeySite != "" {
			return CheckedCredential{Tok: pass}, nil
		}
	}
	name := storage.NormalizeUsername(user)
	if name == "" || storage.CheckUsername(name) != nil {
		return CheckedCredential{}, ErrBadCredentials
	}
	u, err := s.DB.GetUser(name)
	if err != nil && !api.IsNotFound(err) {
		return CheckedCredential{}, err
	}
	now := s.Now().UTC()
	hash := ""
	if u != nil {
		if u.Locked(now) {
			return CheckedCredential{}, ErrBadCredentials
		}
		hash = u.PasswordHash
	}
	ok, err := s.CheckPassword(pc, hash, pass)
	if err != nil {
		return CheckedCredential{}, err
	}
	if u == nil {
		return CheckedCredential{}, ErrBadCredentials
	}
	cmd, err := storage.NewCommand(storage.OpLoginResult, "", name, now, storage.LoginResult{Username: name, OK: ok, PasswordHash: hash})
	if err != nil {
		return CheckedCredential{}, err
	}
	cmd.Via = &storage.Via{Source: storage.SourceIntake}
	out, err := s.Deps.Applier.Apply(context.WithoutCancel(ctx), cmd)
	if err != nil {
		return CheckedCredential{}, err
	}
	if good, _ := out.Value.(bool); !good || u.Status != storage.UserConfirmed {
		return CheckedCredential{}, ErrBadCredentials
	}
	groups, err := s.DB.UserGroups(u.Username)
	if err != nil {
		return CheckedCredential{}, err
	}
	tok, err := s.Deps.Auth.SignUser("access", u.Username, u.Email, groups, u.Generation)
	if err != nil {
		return CheckedCredential{}, err
	}
	return CheckedCredential{Tok: tok, user: u.Username, hash: u.PasswordHash}, nil
}

// CheckedCredential is a checked user name and password: the token that
// stands for them and, for a directory user, the user and the password
// hash the password was checked against.
type CheckedCredential struct {
	Tok, user, hash string
}

// StillValid says whether a checked credential still stands: the user's
// password is the one it was checked against and sign-in is not locked
// (the token's own checks, Authenticate, come after).
func (s *Handlers) StillValid(c CheckedCredential) bool {
	if c.user == "" {
		return true
	}
	u, err := s.DB.GetUser(c.user)
	return err == nil && u != nil && u.PasswordHash == c.hash && !u.Locked(s.Now().UTC())
}
