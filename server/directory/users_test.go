package directory_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"quire/pipeline/mailer"
	"quire/quiretest"
	"quire/server/internal/servertest"
)

func TestUsers_SignInFlow(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	servertest.MustStatus(t, s.Do(http.MethodPost, "/groups", map[string]any{"group": map[string]any{"name": "finance", "description": "Finance"}}, admin), http.StatusOK)
	r := s.Do(http.MethodPost, "/users", map[string]any{"user": map[string]any{"username": "Ann@Example.com", "attributes": map[string]any{"givenName": "Ann"}}, "temporaryPassword": "Temp-pass-1"}, admin)
	servertest.MustStatus(t, r, http.StatusOK)
	servertest.MustBody(t, r, `{"message":"user 'ann@example.com' created"}`)
	servertest.MustStatus(t, s.Do(http.MethodPost, "/groups/finance/users", map[string]any{"user": map[string]any{"username": "ann@example.com"}}, admin), http.StatusOK)

	r = s.Do(http.MethodGet, "/users/ann@example.com", nil, admin)
	servertest.MustStatus(t, r, http.StatusOK)
	u := quiretest.Obj(t, r.JSON(t)["user"])
	if quiretest.Str(t, u, "userStatus") != "FORCE_CHANGE_PASSWORD" || !quiretest.Bool(t, u, "enabled") || quiretest.Str(t, u, "email") != "ann@example.com" {
		t.Errorf("new user %v", u)
	}
	if strings.Contains(string(r.Body), "argon2") || strings.Contains(string(r.Body), "passwordHash") {
		t.Fatalf("the password hash leaked: %s", r.Body)
	}

	access, refresh := servertest.FirstSignIn(t, s, "ann@example.com", "Temp-pass-1", "Ann's new password")
	if refresh == "" {
		t.Fatal("no refresh token after the challenge")
	}
	servertest.MustStatus(t, s.Do(http.MethodGet, "/documents?siteId=finance", nil, access), http.StatusOK)
	servertest.MustStatus(t, s.Do(http.MethodGet, "/documents?siteId=hr", nil, access), http.StatusUnauthorized)
	id := servertest.AddDoc(t, s, access, "?siteId=finance", map[string]any{"path": "a.txt", "content": "a"})
	r = s.Do(http.MethodGet, "/documents/"+id+"?siteId=finance", nil, admin)
	if got := quiretest.Str(t, r.JSON(t), "userId"); got != "ann@example.com" {
		t.Errorf("userId = %q", got)
	}
	servertest.MustStatus(t, s.Do(http.MethodGet, "/users", nil, access), http.StatusUnauthorized) // not an admin

	access2, refresh2 := servertest.Tokens(t, servertest.Login(s, "ann@example.com", "Ann's new password"))
	r = s.Do(http.MethodPost, "/login/refresh", map[string]any{"refreshToken": refresh}, "")
	refreshed, _ := servertest.Tokens(t, r)
	servertest.MustStatus(t, s.Do(http.MethodGet, "/documents?siteId=finance", nil, refreshed), http.StatusOK)

	// Disabling ends every token at once: access tokens and refresh.
	servertest.MustStatus(t, s.Do(http.MethodPut, "/users/ann@example.com/DISABLE", nil, admin), http.StatusOK)
	for _, tok := range []string{access, access2, refreshed} {
		servertest.MustStatus(t, s.Do(http.MethodGet, "/documents?siteId=finance", nil, tok), http.StatusUnauthorized)
	}
	servertest.MustStatus(t, s.Do(http.MethodPost, "/login/refresh", map[string]any{"refreshToken": refresh2}, ""), http.StatusUnauthorized)
	r = servertest.Login(s, "ann@example.com", "Ann's new password")
	servertest.MustStatus(t, r, http.StatusUnauthorized)
	servertest.MustBody(t, r, `{"message":"User is disabled."}`)

	servertest.MustStatus(t, s.Do(http.MethodPut, "/users/ann@example.com/enable", nil, admin), http.StatusOK)
	access3, refresh3 := servertest.Tokens(t, servertest.Login(s, "ann@example.com", "Ann's new password"))
	servertest.MustStatus(t, s.Do(http.MethodPost, "/login/refresh", map[string]any{"refreshToken": refresh2}, ""), http.StatusUnauthorized) // from before the disable

	// Leaving the group ends the tokens that carry it.
	servertest.MustStatus(t, s.Do(http.MethodDelete, "/groups/finance/users/ann@example.com", nil, admin), http.StatusOK)
	servertest.MustStatus(t, s.Do(http.MethodGet, "/documents?siteId=finance", nil, access3), http.StatusUnauthorized)
	servertest.MustStatus(t, s.Do(http.MethodPost, "/login/refresh", map[string]any{"refreshToken": refresh3}, ""), http.StatusUnauthorized)

	// A password change ends the other sessions.
	a4, r4 := servertest.Tokens(t, servertest.Login(s, "ann@example.com", "Ann's new password"))
	r = s.Do(http.MethodPost, "/changePassword", map[string]any{"accessToken": a4, "previousPassword": "wrong password", "proposedPassword": "third password"}, "")
	servertest.MustStatus(t, r, http.StatusUnauthorized)
	r = s.Do(http.MethodPost, "/changePassword", map[string]any{"accessToken": a4, "previousPassword": "Ann's new password", "proposedPassword": "third password"}, "")
	servertest.MustStatus(t, r, http.StatusOK)
	servertest.MustStatus(t, s.Do(http.MethodPost, "/login/refresh", map[string]any{"refreshToken": r4}, ""), http.StatusUnauthorized)
	servertest.MustStatus(t, servertest.Login(s, "ann@example.com", "Ann's new password"), http.StatusUnauthorized)
	servertest.Tokens(t, servertest.Login(s, "ann@example.com", "third password"))
}

func TestUsers_Lockout(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	servertest.MustStatus(t, s.Do(http.MethodPost, "/users", map[string]any{"user": map[string]any{"username": "bob"}, "temporaryPassword": "bob-temp-pw"}, admin), http.StatusOK)
	servertest.FirstSignIn(t, s, "bob", "bob-temp-pw", "bob-password")
	for i := range 5 {
		r := servertest.Login(s, "bob", "guess-"+string(rune('a'+i)))
		servertest.MustStatus(t, r, http.StatusUnauthorized)
		servertest.MustBody(t, r, `{"message":"Incorrect username or password."}`)
	}
	r := servertest.Login(s, "bob", "bob-password")
	servertest.MustStatus(t, r, http.StatusUnauthorized)
	servertest.MustBody(t, r, `{"message":"Password attempts exceeded"}`)
	// An unknown user gets the wrong-password answer, not a hint.
	r = servertest.Login(s, "nobody", "whatever-pw")
	servertest.MustStatus(t, r, http.StatusUnauthorized)
	servertest.MustBody(t, r, `{"message":"Incorrect username or password."}`)
}

func TestUsers_ForgotPasswordByMail(t *testing.T) {
	mail := quiretest.NewMailServer(t)
	s := quiretest.NewServer(t, func(c *quiretest.Config) {
		c.Pipeline.Engines.SMTP = mailer.Config{Host: mail.Host, Port: mail.Port, From: "quire@example.com"}
	})
	admin := s.Admin()
	// Without a temporary password the user gets one by mail.
	servertest.MustStatus(t, s.Do(http.MethodPost, "/users", map[string]any{"user": map[string]any{"username": "cy@example.com"}}, admin), http.StatusOK)
	msgs := mail.Messages()
	if len(msgs) != 1 || msgs[0].To[0] != "cy@example.com" {
		t.Fatalf("invitation: %+v", msgs)
	}
	temp := regexp.MustCompile(`Temporary password: (\S+)`).FindStringSubmatch(msgs[0].Data)
	if temp == nil {
		t.Fatalf("no temporary password in %q", msgs[0].Data)
	}
	servertest.FirstSignIn(t, s, "cy@example.com", temp[1], "cy-password-1")

	r := s.Do(http.MethodPost, "/forgotPassword", map[string]any{"username": "cy@example.com"}, "")
	servertest.MustStatus(t, r, http.StatusOK)
	same := string(r.Body)
	r = s.Do(http.MethodPost, "/forgotPassword", map[string]any{"username": "nobody@example.com"}, "")
	if string(r.Body) != same || r.Status != http.StatusOK {
		t.Errorf("an unknown user is answered differently: %d %s", r.Status, r.Body)
	}
	msgs = mail.Messages()
	if len(msgs) != 2 {
		t.Fatalf("%d mails, want the invitation and one code", len(msgs))
	}
	code := regexp.MustCompile(`Code: (\S+)`).FindStringSubmatch(msgs[1].Data)
	if code == nil {
		t.Fatalf("no code in %q", msgs[1].Data)
	}
	servertest.MustStatus(t, s.Do(http.MethodPost, "/forgotPasswordConfirm", map[string]any{"username": "cy@example.com", "code": "wrong", "password": "cy-password-2"}, ""), http.StatusBadRequest)
	servertest.MustStatus(t, s.Do(http.MethodPost, "/forgotPasswordConfirm", map[string]any{"username": "cy@example.com", "code": code[1], "password": "cy-password-2"}, ""), http.StatusOK)
	servertest.MustStatus(t, s.Do(http.MethodPost, "/forgotPasswordConfirm", map[string]any{"username": "cy@example.com", "code": code[1], "password": "cy-password-3"}, ""), http.StatusBadRequest) // used
	servertest.Tokens(t, servertest.Login(s, "cy@example.com", "cy-password-2"))
	servertest.MustStatus(t, servertest.Login(s, "cy@example.com", "cy-password-1"), http.StatusUnauthorized)
}

func TestUsers_AdminRoutes(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	servertest.MustStatus(t, s.Do(http.MethodPost, "/groups", map[string]any{"group": map[string]any{"name": "hr_read"}}, admin), http.StatusOK)
	for _, tt := range []struct {
		name, method, path string
		body               any
		tok                string
		status             int
		want               string
	}{
		{"add", "POST", "/users", map[string]any{"user": map[string]any{"username": "dee"}, "temporaryPassword": "dee-temp-pw"}, admin, 200, ""},
		{"again", "POST", "/users", map[string]any{"user": map[string]any{"username": "DEE"}, "temporaryPassword": "dee-temp-pw"}, admin, 409, `{"message":"user 'dee' already exists"}`},
		{"no user", "POST", "/users", map[string]any{}, admin, 400, `{"errors":[{"key":"user","error":"'user' is required"}]}`},
		{"space in name", "POST", "/users", map[string]any{"user": map[string]any{"username": "a b"}, "temporaryPassword": "long-enough"}, admin, 400, ""},
		{"short password", "POST", "/users", map[string]any{"user": map[string]any{"username": "e"}, "temporaryPassword": "short"}, admin, 400, ""},
		{"no way to send a password", "POST", "/users", map[string]any{"user": map[string]any{"username": "f"}}, admin, 400, ""},
		{"unknown attribute", "POST", "/users", map[string]any{"user": map[string]any{"username": "g", "attributes": map[string]any{"shoeSize": "9"}}, "temporaryPassword": "long-enough"}, admin, 400, ""},
		{"not an admin", "POST", "/users", map[string]any{"user": map[string]any{"username": "h"}, "temporaryPassword": "long-enough"}, s.Token("gov", "default_govern"), 401, ""},
		{"list", "GET", "/users?limit=10", nil, admin, 200, ""},
		{"group member", "POST", "/groups/hr_read/users", map[string]any{"user": map[string]any{"username": "dee"}}, admin, 200, ""},
		{"member of a missing group", "POST", "/groups/nope/users", map[string]any{"user": map[string]any{"username": "dee"}}, admin, 404, `{"message":"group 'nope' not found"}`},
		{"missing member", "POST", "/groups/hr_read/users", map[string]any{"user": map[string]any{"username": "zed"}}, admin, 404, `{"message":"user 'zed' not found"}`},
		{"group users", "GET", "/groups/hr_read/users", nil, admin, 200, ""},
		{"user groups", "GET", "/users/dee/groups", nil, admin, 200, ""},
		{"unknown operation", "PUT", "/users/dee/FLY", nil, admin, 400, ""},
		{"duplicate group", "POST", "/groups", map[string]any{"group": map[string]any{"name": "hr_read"}}, admin, 409, ""},
		{"reset with a temporary password", "PUT", "/users/dee/RESET_PASSWORD", map[string]any{"temporaryPassword": "dee-temp-2"}, admin, 200, ""},
		{"confirmRegistration", "POST", "/confirmRegistration", map[string]any{"username": "dee", "code": "1"}, "", 400, ""},
		{"delete group", "DELETE", "/groups/hr_read", nil, admin, 200, `{"message":"group 'hr_read' deleted"}`},
		{"deleted group", "GET", "/groups/hr_read", nil, admin, 404, ""},
		{"delete user", "DELETE", "/users/dee", nil, admin, 200, `{"message":"user 'dee' deleted"}`},
		{"deleted user", "GET", "/users/dee", nil, admin, 404, `{"message":"user 'dee' not found"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(tt.method, tt.path, tt.body, tt.tok)
			servertest.MustStatus(t, r, tt.status)
			if tt.want != "" {
				servertest.MustBody(t, r, tt.want)
			}
			switch tt.name {
			case "group users":
				if us := quiretest.List(t, r.JSON(t), "users"); len(us) != 1 || quiretest.Str(t, quiretest.Obj(t, us[0]), "username") != "dee" {
					t.Errorf("members: %s", r.Body)
				}
			case "user groups":
				if gs := quiretest.List(t, r.JSON(t), "groups"); len(gs) != 1 || quiretest.Str(t, quiretest.Obj(t, gs[0]), "name") != "hr_read" {
					t.Errorf("groups: %s", r.Body)
				}
			}
		})
	}
}

// TestUsers_DeletedUserTokensStayDead: the tokens of a deleted user
// (refresh, access, a first sign-in's session) are refused after a user
// of the same name is made again (issue 29, finding 6).
func TestUsers_DeletedUserTokensStayDead(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	add := func(t *testing.T) {
		t.Helper()
		servertest.MustStatus(t, s.Do(http.MethodPost, "/users", map[string]any{"user": map[string]any{"username": "eve"}, "temporaryPassword": "eve-temp-pw"}, admin), http.StatusOK)
	}
	add(t)
	// The first sign-in's session stays signed for 5 minutes.
	r := servertest.Login(s, "eve", "eve-temp-pw")
	servertest.MustStatus(t, r, http.StatusOK)
	session := quiretest.Str(t, r.JSON(t), "Session")
	access, refresh := servertest.Tokens(t, s.Do(http.MethodPost, "/respondToAuthChallenge", map[string]any{"session": session, "username": "eve", "newPassword": "eve-password-1"}, ""))
	if refresh == "" {
		t.Fatal("no refresh token")
	}
	servertest.MustStatus(t, s.Do(http.MethodGet, "/version", nil, access), http.StatusOK)

	servertest.MustStatus(t, s.Do(http.MethodDelete, "/users/eve", nil, admin), http.StatusOK)
	add(t)
	for _, tt := range []struct {
		name, method, path string
		body               any
		tok                string
		status             int
	}{
		{"old refresh token", http.MethodPost, "/login/refresh", map[string]any{"refreshToken": refresh}, "", http.StatusUnauthorized},
		{"old access token", http.MethodGet, "/version", nil, access, http.StatusUnauthorized},
		{"old session", http.MethodPost, "/respondToAuthChallenge", map[string]any{"session": session, "username": "eve", "newPassword": "eve-password-3"}, "", http.StatusUnauthorized},
		{"old password", http.MethodPost, "/login", map[string]any{"username": "eve", "password": "eve-password-1"}, "", http.StatusUnauthorized},
	} {
		t.Run(tt.name, func(t *testing.T) {
			servertest.MustStatus(t, s.Do(tt.method, tt.path, tt.body, tt.tok), tt.status)
		})
	}
	// The new user signs in and refreshes as any user does.
	_, refresh2 := servertest.FirstSignIn(t, s, "eve", "eve-temp-pw", "eve-password-4")
	servertest.Tokens(t, s.Do(http.MethodPost, "/login/refresh", map[string]any{"refreshToken": refresh2}, ""))
}
