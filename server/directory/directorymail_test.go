package directory_test

import (
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"quire/pipeline"
	"quire/pipeline/mailer"
	"quire/quiretest"
	"quire/server/internal/servertest"
)

// governSiteMail points the default site's notification settings at a
// relay of the governor's own, as a governor of that site may.
func governSiteMail(t *testing.T, s *quiretest.Server, relay *quiretest.MailServer) {
	t.Helper()
	gov := s.Token("gov", "default_govern")
	r := s.Do(http.MethodPatch, "/sites/default/configuration", map[string]any{"notification": map[string]any{
		"email": "gov@example.com", "provider": "SMTP", "smtp": map[string]any{"host": relay.Host, "port": relay.Port}}}, gov)
	servertest.MustStatus(t, r, http.StatusOK)
}

// mailsTo returns the messages of m addressed to addr.
func mailsTo(m *quiretest.MailServer, addr string) []quiretest.Received {
	var out []quiretest.Received
	for _, msg := range m.Messages() {
		for _, to := range msg.To {
			if strings.EqualFold(to, addr) {
				out = append(out, msg)
			}
		}
	}
	return out
}

// TestDirectoryMail_OnlyServerSettings: reset codes and temporary
// passwords go through the configuration file's mail server only; a
// governor who points the default site's notification settings at a
// relay of their own receives none of them (issue 29, finding 1).
func TestDirectoryMail_OnlyServerSettings(t *testing.T) {
	server := quiretest.NewMailServer(t)
	relay := quiretest.NewMailServer(t)
	s := quiretest.NewServer(t, quiretest.AllowLoopbackOutbound, func(c *quiretest.Config) {
		c.Pipeline.Engines.SMTP = mailer.Config{Host: server.Host, Port: server.Port, From: "quire@example.com"}
	})
	admin := s.Admin()
	governSiteMail(t, s, relay)
	const root = "root@example.com"
	servertest.MustStatus(t, s.Do(http.MethodPost, "/users", map[string]any{"user": map[string]any{"username": root}, "temporaryPassword": "root-temp-pw"}, admin), http.StatusOK)
	servertest.MustStatus(t, s.Do(http.MethodPost, "/groups", map[string]any{"group": map[string]any{"name": "Admins"}}, admin), http.StatusOK)
	servertest.MustStatus(t, s.Do(http.MethodPost, "/groups/Admins/users", map[string]any{"user": map[string]any{"username": root}}, admin), http.StatusOK)
	servertest.FirstSignIn(t, s, root, "root-temp-pw", "root-password-1")

	for _, tt := range []struct {
		name, method, path string
		body               any
		tok                string
		to                 string
		pattern            string
	}{
		{"forgotPassword of an Admin", http.MethodPost, "/forgotPassword", map[string]any{"username": root}, "", root, `Code: (\S+)`},
		{"invitation", http.MethodPost, "/users", map[string]any{"user": map[string]any{"username": "new@example.com"}}, admin, "new@example.com", `Temporary password: (\S+)`},
		{"admin reset", http.MethodPut, "/users/" + root + "/RESET_PASSWORD", nil, admin, root, `Code: (\S+)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := len(mailsTo(server, tt.to))
			servertest.MustStatus(t, s.Do(tt.method, tt.path, tt.body, tt.tok), http.StatusOK)
			if got := relay.Messages(); len(got) != 0 {
				t.Fatalf("the governor's relay received %d directory mails: %q", len(got), got[0].Data)
			}
			got := mailsTo(server, tt.to)
			if len(got) != before+1 {
				t.Fatalf("the server's mail server has %d mails to %s, want %d", len(got), tt.to, before+1)
			}
			m := got[len(got)-1]
			if m.From != "quire@example.com" || regexp.MustCompile(tt.pattern).FindStringSubmatch(m.Data) == nil {
				t.Fatalf("mail from %s: %q", m.From, m.Data)
			}
		})
	}
}

// TestDirectoryMail_NoServerSettings: without the server's own mail
// settings, the flows that mail a secret refuse before writing anything,
// whatever a site's settings say.
func TestDirectoryMail_NoServerSettings(t *testing.T) {
	relay := quiretest.NewMailServer(t)
	s := quiretest.NewServer(t, quiretest.AllowLoopbackOutbound)
	admin := s.Admin()
	governSiteMail(t, s, relay)
	servertest.MustStatus(t, s.Do(http.MethodPost, "/users", map[string]any{"user": map[string]any{"username": "ann@example.com"}, "temporaryPassword": "ann-temp-pw"}, admin), http.StatusOK)
	servertest.FirstSignIn(t, s, "ann@example.com", "ann-temp-pw", "ann-password-1")

	for _, tt := range []struct {
		name, method, path string
		body               any
		tok                string
		status             int
		want               string
	}{
		{"add user without a temporary password", http.MethodPost, "/users", map[string]any{"user": map[string]any{"username": "bo@example.com"}}, admin, 400,
			`{"errors":[{"key":"temporaryPassword","error":"'temporaryPassword' is required: ` + pipeline.ErrNoServerMail.Error() + `"}]}`},
		{"nothing was written", http.MethodGet, "/users/bo@example.com", nil, admin, 404, `{"message":"user 'bo@example.com' not found"}`},
		{"add user with a temporary password", http.MethodPost, "/users", map[string]any{"user": map[string]any{"username": "cy@example.com"}, "temporaryPassword": "cy-temp-pw"}, admin, 200, ""},
		{"admin reset without a temporary password", http.MethodPut, "/users/ann@example.com/RESET_PASSWORD", nil, admin, 400, "~no mail settings of its own"},
		{"still signs in", http.MethodPost, "/login", map[string]any{"username": "ann@example.com", "password": "ann-password-1"}, "", 200, ""},
		{"forgotPassword", http.MethodPost, "/forgotPassword", map[string]any{"username": "ann@example.com"}, "", 400, "~password reset by mail is not available"},
		{"forgotPassword of nobody answers the same", http.MethodPost, "/forgotPassword", map[string]any{"username": "nobody@example.com"}, "", 400, "~password reset by mail is not available"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(tt.method, tt.path, tt.body, tt.tok)
			servertest.MustStatus(t, r, tt.status)
			if want, ok := strings.CutPrefix(tt.want, "~"); ok {
				if !strings.Contains(string(r.Body), want) {
					t.Fatalf("body %s, want it to contain %q", r.Body, want)
				}
			} else if tt.want != "" {
				servertest.MustBody(t, r, tt.want)
			}
			if got := relay.Messages(); len(got) != 0 {
				t.Fatalf("the governor's relay received %d directory mails", len(got))
			}
		})
	}
}

// TestDirectoryMail_SendFailureLeavesNoUser: when the server's mail
// server cannot take the invitation, the 502 leaves no user behind.
func TestDirectoryMail_SendFailureLeavesNoUser(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // nothing listens there now: the connection is refused
	s := quiretest.NewServer(t, func(c *quiretest.Config) {
		c.Pipeline.Engines.SMTP = mailer.Config{Host: "127.0.0.1", Port: port, From: "quire@example.com"}
	})
	admin := s.Admin()
	r := s.Do(http.MethodPost, "/users", map[string]any{"user": map[string]any{"username": "dee@example.com"}}, admin)
	servertest.MustStatus(t, r, http.StatusBadGateway)
	if !strings.Contains(string(r.Body), "not created") {
		t.Fatalf("body %s", r.Body)
	}
	servertest.MustStatus(t, s.Do(http.MethodGet, "/users/dee@example.com", nil, admin), http.StatusNotFound)
	// Given a temporary password, the same user is created.
	servertest.MustStatus(t, s.Do(http.MethodPost, "/users", map[string]any{"user": map[string]any{"username": "dee@example.com"}, "temporaryPassword": "dee-temp-pw"}, admin), http.StatusOK)
}

// TestServerMail_HealthAndTest: GET /system/health says where password
// mail goes (host, port, sender; never the credentials) and POST
// /system/mail/test (Admins) mails through the server's own settings
// only, never through a site's that a governor set; without server mail
// settings the test refuses and health says so (issue 47, the console's
// Mail page).
func TestServerMail_HealthAndTest(t *testing.T) {
	server := quiretest.NewMailServer(t)
	relay := quiretest.NewMailServer(t)
	s := quiretest.NewServer(t, quiretest.AllowLoopbackOutbound, func(c *quiretest.Config) {
		c.Pipeline.Engines.SMTP = mailer.Config{Host: server.Host, Port: server.Port, From: "quire@example.com", Username: "u", Password: "server-secret"}
	})
	bare := quiretest.NewServer(t, quiretest.AllowLoopbackOutbound)
	governSiteMail(t, s, relay)
	governSiteMail(t, bare, relay)
	admin, gov := s.Admin(), s.Token("gov", "default_govern")
	for _, tt := range []struct {
		name   string
		srv    *quiretest.Server
		method string
		path   string
		body   any
		tok    string
		status int
		want   []string // substrings of the body
		not    string   // must not be in the body
		mails  int      // mails to it@example.com on the server's own mail server after the step
	}{
		{"health names the server's mail", s, http.MethodGet, "/system/health", nil, admin, 200,
			[]string{`"serverMail":{`, `"configured":true`, `"host":"` + server.Host + `"`, `"from":"quire@example.com"`}, "server-secret", 0},
		{"a governor may not test", s, http.MethodPost, "/system/mail/test", map[string]any{"to": "it@example.com"}, gov, 401, nil, "", 0},
		{"to is required", s, http.MethodPost, "/system/mail/test", map[string]any{}, admin, 400, []string{`{"errors":[{"key":"to","error":"'to' is required"}]}`}, "", 0},
		{"to must be an address", s, http.MethodPost, "/system/mail/test", map[string]any{"to": "nobody"}, admin, 400, []string{`"key":"to"`}, "", 0},
		{"test through the server's mail", s, http.MethodPost, "/system/mail/test", map[string]any{"to": "it@example.com"}, admin, 202, []string{`{"message":"Test mail sent"}`}, "", 1},
		{"health without server mail", bare, http.MethodGet, "/system/health", nil, bare.Admin(), 200, []string{`"serverMail":{"configured":false}`}, "", 1},
		{"no test without server mail", bare, http.MethodPost, "/system/mail/test", map[string]any{"to": "it@example.com"}, bare.Admin(), 400, []string{"password mail is not available"}, "", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.srv.Do(tt.method, tt.path, tt.body, tt.tok)
			servertest.MustStatus(t, r, tt.status)
			for _, w := range tt.want {
				if !strings.Contains(string(r.Body), w) {
					t.Fatalf("body %s, want it to contain %s", r.Body, w)
				}
			}
			if tt.not != "" && strings.Contains(string(r.Body), tt.not) {
				t.Fatalf("body %s holds %q", r.Body, tt.not)
			}
			if got := len(mailsTo(server, "it@example.com")); got != tt.mails {
				t.Fatalf("the server's mail server has %d test mails, want %d", got, tt.mails)
			}
			if got := relay.Messages(); len(got) != 0 {
				t.Fatalf("the governor's relay received %d mails", len(got))
			}
		})
	}
}
