package servertest

import (
	"net/http"
	"testing"

	"quire/quiretest"
)

// Login posts credentials to /login.
func Login(s *quiretest.Server, user, pw string) *quiretest.Response {
	return s.Do(http.MethodPost, "/login", map[string]any{"username": user, "password": pw}, "")
}

// Tokens reads AuthenticationResult's access and refresh tokens.
func Tokens(t *testing.T, r *quiretest.Response) (access, refresh string) {
	t.Helper()
	MustStatus(t, r, http.StatusOK)
	ar := quiretest.Obj(t, r.JSON(t)["AuthenticationResult"])
	access = quiretest.Str(t, ar, "AccessToken")
	if quiretest.Str(t, ar, "IdToken") == "" || quiretest.Str(t, ar, "TokenType") != "Bearer" {
		t.Fatalf("AuthenticationResult %v", ar)
	}
	refresh, _ = ar["RefreshToken"].(string)
	return access, refresh
}

// FirstSignIn signs a new user in with its temporary password and sets pw.
func FirstSignIn(t *testing.T, s *quiretest.Server, user, temp, pw string) (string, string) {
	t.Helper()
	r := Login(s, user, temp)
	MustStatus(t, r, http.StatusOK)
	m := r.JSON(t)
	if quiretest.Str(t, m, "ChallengeName") != "NEW_PASSWORD_REQUIRED" {
		t.Fatalf("first sign-in: %s", r.Body)
	}
	r = s.Do(http.MethodPost, "/respondToAuthChallenge", map[string]any{"session": quiretest.Str(t, m, "Session"), "username": user, "newPassword": pw}, "")
	return Tokens(t, r)
}
