package server

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"quire/auth"
	"quire/storage"
)

// errBadCredentials is every refused user name and password of the
// scanner sources (SMTP AUTH, WebDAV Basic): the answer says nothing of
// which part was wrong.
var errBadCredentials = errors.New("invalid user name or password")

// CredentialPrincipal verifies a user name and password as a scanner or a
// file manager sends them (SMTP AUTH PLAIN/LOGIN, WebDAV's Basic auth):
// the password is an intake API key (the user name is then free, by
// convention "apikey"), or a directory user's password. A directory
// sign-in counts toward the user's lockout as POST /login does, and the
// principal is the one the user's access token would carry.
func (s *Server) CredentialPrincipal(ctx context.Context, user, pass string) (*auth.Principal, error) {
	if pass == "" || len(pass) > auth.MaxPasswordBytes || len(user) > 256 || !utf8.ValidString(user) || !utf8.ValidString(pass) {
		return nil, errBadCredentials
	}
	if strings.Count(pass, ".") != 2 { // never a JWT: a token is not a password
		if p, err := s.deps.Auth.Authenticate(pass); err == nil && p.APIKeySite != "" {
			return p, nil
		}
	}
	name := storage.NormalizeUsername(user)
	if name == "" || storage.CheckUsername(name) != nil {
		return nil, errBadCredentials
	}
	u, err := s.db.GetUser(name)
	if err != nil && !isNotFound(err) {
		return nil, err
	}
	now := s.now().UTC()
	hash := ""
	if u != nil {
		if u.Locked(now) {
			return nil, errBadCredentials
		}
		hash = u.PasswordHash
	}
	ok := auth.VerifyPassword(hash, pass)
	if u == nil {
		return nil, errBadCredentials
	}
	cmd, err := storage.NewCommand(storage.OpLoginResult, "", name, now, storage.LoginResult{Username: name, OK: ok, PasswordHash: hash})
	if err != nil {
		return nil, err
	}
	cmd.Via = &storage.Via{Source: storage.SourceIntake}
	out, err := s.deps.Applier.Apply(context.WithoutCancel(ctx), cmd)
	if err != nil {
		return nil, err
	}
	if good, _ := out.Value.(bool); !good || u.Status != storage.UserConfirmed {
		return nil, errBadCredentials
	}
	groups, err := s.db.UserGroups(u.Username)
	if err != nil {
		return nil, err
	}
	tok, err := s.deps.Auth.SignUser("access", u.Username, u.Email, groups, u.Generation)
	if err != nil {
		return nil, err
	}
	return s.deps.Auth.Authenticate(tok)
}
