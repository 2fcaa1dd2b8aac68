package directory_test

import (
	"net/http"
	"strings"
	"testing"

	"quire/pipeline/mailer"
	"quire/quiretest"
	"quire/server/internal/servertest"
)

// tinyPNG is a 1×1 PNG as a data: URL (a branding logo).
const tinyPNG = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

// TestSignInInfo_ResetAndBranding: GET /login/oidc/info tells a sign-in
// page, before anyone signs in, whether a password can be reset by mail
// (only with the server's own mail settings) and the global branding
// without secrets: the title, the colours and the logo's URL, never the
// logo's bytes or the support address (issue 47, items 4 and 5).
func TestSignInInfo_ResetAndBranding(t *testing.T) {
	mail := quiretest.NewMailServer(t)
	for _, tt := range []struct {
		name      string
		opts      []quiretest.Option
		wantReset bool
	}{
		{"no mail settings", nil, false},
		{"the server's own mail", []quiretest.Option{quiretest.AllowLoopbackOutbound, func(c *quiretest.Config) {
			c.Pipeline.Engines.SMTP = mailer.Config{Host: mail.Host, Port: mail.Port, From: "quire@example.com"}
		}}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := quiretest.NewServer(t, tt.opts...)
			info := s.Do(http.MethodGet, "/login/oidc/info", nil, "")
			servertest.MustStatus(t, info, http.StatusOK)
			m := info.JSON(t)
			if got, ok := m["passwordReset"].(bool); !ok || got != tt.wantReset {
				t.Fatalf("passwordReset = %v, want %v: %s", m["passwordReset"], tt.wantReset, info.Body)
			}
			if _, ok := m["branding"]; ok {
				t.Fatalf("branding without any set: %s", info.Body)
			}

			servertest.MustStatus(t, s.Do(http.MethodPatch, "/system/configuration", map[string]any{"branding": map[string]any{
				"title": "Acme Records", "primaryColor": "#7a1f3d", "secondaryColor": "#d4a017", "supportEmail": "help@acme.example", "logo": tinyPNG}}, s.Admin()), http.StatusOK)
			info = s.Do(http.MethodGet, "/login/oidc/info", nil, "")
			servertest.MustStatus(t, info, http.StatusOK)
			b := quiretest.Obj(t, info.JSON(t)["branding"])
			if quiretest.Str(t, b, "title") != "Acme Records" || quiretest.Str(t, b, "primaryColor") != "#7a1f3d" || quiretest.Str(t, b, "secondaryColor") != "#d4a017" {
				t.Errorf("branding = %v", b)
			}
			logo := quiretest.Str(t, b, "logoUrl")
			if !strings.HasPrefix(logo, "/branding/logo?v=") {
				t.Errorf("logoUrl = %q, want /branding/logo?v=<hash>", logo)
			}
			if strings.Contains(string(info.Body), "base64") || strings.Contains(string(info.Body), "help@acme.example") {
				t.Errorf("the public answer carries the logo's bytes or the support address: %s", info.Body)
			}
			// The URL it names is the logo, without a token.
			r := s.Do(http.MethodGet, logo, nil, "")
			servertest.MustStatus(t, r, http.StatusOK)
			if r.Header.Get("Content-Type") != "image/png" || !strings.HasPrefix(string(r.Body), "\x89PNG") {
				t.Errorf("logo answer %s %q", r.Header.Get("Content-Type"), r.Body)
			}
		})
	}
}

// TestRefresh_DisabledUser: a session of a user an admin disabled is
// refused with the reason, as a sign-in is ("User is disabled."), so a
// client can say why the session ended; a session that had ended before
// for another reason, or one from before the user was enabled again,
// stays "Invalid Refresh Token" (issue 47, item 6).
func TestRefresh_DisabledUser(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	servertest.MustStatus(t, s.Do(http.MethodPost, "/users", map[string]any{"user": map[string]any{"username": "dan@example.com"}, "temporaryPassword": "Temp-pass-1"}, admin), http.StatusOK)
	_, before := servertest.FirstSignIn(t, s, "dan@example.com", "Temp-pass-1", "dan's password 1")
	// A password change ends `before` for its own reason.
	a, live := servertest.Tokens(t, servertest.Login(s, "dan@example.com", "dan's password 1"))
	servertest.MustStatus(t, s.Do(http.MethodPost, "/changePassword", map[string]any{"accessToken": a, "previousPassword": "dan's password 1", "proposedPassword": "dan's password 2"}, ""), http.StatusOK)
	_, live = servertest.Tokens(t, servertest.Login(s, "dan@example.com", "dan's password 2"))
	servertest.MustStatus(t, s.Do(http.MethodPost, "/login/refresh", map[string]any{"refreshToken": live}, ""), http.StatusOK)

	servertest.MustStatus(t, s.Do(http.MethodPut, "/users/dan@example.com/DISABLE", nil, admin), http.StatusOK)
	for _, tt := range []struct {
		name, token string
		want        string
	}{
		{"a session open when the user was disabled", live, `{"message":"User is disabled."}`},
		{"a session that had ended before", before, `{"message":"Invalid Refresh Token"}`},
		{"no such session", "not-a-token", `{"message":"Invalid Refresh Token"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(http.MethodPost, "/login/refresh", map[string]any{"refreshToken": tt.token}, "")
			servertest.MustStatus(t, r, http.StatusUnauthorized)
			servertest.MustBody(t, r, tt.want)
		})
	}

	// Enabled again, the old session stays ended, without a reason to give.
	servertest.MustStatus(t, s.Do(http.MethodPut, "/users/dan@example.com/ENABLE", nil, admin), http.StatusOK)
	r := s.Do(http.MethodPost, "/login/refresh", map[string]any{"refreshToken": live}, "")
	servertest.MustStatus(t, r, http.StatusUnauthorized)
	servertest.MustBody(t, r, `{"message":"Invalid Refresh Token"}`)
}
