package intake_test

import (
	"bytes"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"mime/quotedprintable"
	"net"
	"net/http"
	"net/smtp"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"quire/node"
	"quire/quiretest"
	"quire/server/internal/servertest"
	"quire/server/internal/testhooks"
)

// mailPart is one attachment of a test mail.
type mailPart struct {
	name, ctype, encoding string
	body                  []byte
}

// buildMail writes a multipart/mixed mail with a text body and parts.
func buildMail(msgID, subject string, parts ...mailPart) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "From: Scanner <scanner@office.test>\r\nTo: finance@scans.test\r\nSubject: %s\r\nDate: Mon, 02 Mar 2026 10:04:05 +0000\r\n", subject)
	if msgID != "" {
		fmt.Fprintf(&b, "Message-ID: %s\r\n", msgID)
	}
	b.WriteString("MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"BOUND\"\r\n\r\n")
	b.WriteString("--BOUND\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nScanned by the office MFP.\r\n")
	for _, p := range parts {
		fmt.Fprintf(&b, "--BOUND\r\nContent-Type: %s; name=\"%s\"\r\nContent-Disposition: attachment; filename=\"%s\"\r\n", p.ctype, p.name, p.name)
		switch p.encoding {
		case "base64":
			b.WriteString("Content-Transfer-Encoding: base64\r\n\r\n")
			enc := base64.StdEncoding.EncodeToString(p.body)
			for len(enc) > 76 {
				b.WriteString(enc[:76] + "\r\n")
				enc = enc[76:]
			}
			b.WriteString(enc + "\r\n")
		case "quoted-printable":
			b.WriteString("Content-Transfer-Encoding: quoted-printable\r\n\r\n")
			w := quotedprintable.NewWriter(&b)
			w.Write(p.body)
			w.Close()
			b.WriteString("\r\n")
		default:
			b.WriteString("\r\n")
			b.Write(p.body)
			b.WriteString("\r\n")
		}
	}
	b.WriteString("--BOUND--\r\n")
	return b.Bytes()
}

// smtpResult is what a client saw at the step that failed ("" when the
// mail was taken).
type smtpResult struct {
	step string
	err  error
}

// sendMail sends one mail with Go's net/smtp client as a scanner would:
// EHLO, AUTH PLAIN (when user is set), MAIL, RCPT, DATA.
func sendMail(t *testing.T, addr, user, pass string, rcpts []string, msg []byte, tlsCfg *tls.Config) smtpResult {
	t.Helper()
	c, err := smtp.Dial(addr)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	defer c.Close()
	if err := c.Hello("mfp.office.test"); err != nil {
		return smtpResult{"EHLO", err}
	}
	if tlsCfg != nil {
		if err := c.StartTLS(tlsCfg); err != nil {
			return smtpResult{"STARTTLS", err}
		}
	}
	if user != "" {
		// net/smtp sends PLAIN in clear text to localhost only.
		if err := c.Auth(smtp.PlainAuth("", user, pass, "127.0.0.1")); err != nil {
			return smtpResult{"AUTH", err}
		}
	}
	if err := c.Mail("scanner@office.test"); err != nil {
		return smtpResult{"MAIL", err}
	}
	for _, r := range rcpts {
		if err := c.Rcpt(r); err != nil {
			return smtpResult{"RCPT", err}
		}
	}
	w, err := c.Data()
	if err != nil {
		return smtpResult{"DATA", err}
	}
	if _, err := w.Write(msg); err != nil {
		return smtpResult{"DATA", err}
	}
	if err := w.Close(); err != nil {
		return smtpResult{"DATA", err}
	}
	c.Quit()
	return smtpResult{}
}

// wantCode fails t unless res failed at step with an SMTP code.
func wantCode(t *testing.T, res smtpResult, step string, code int) {
	t.Helper()
	if res.step != step || res.err == nil || !strings.HasPrefix(res.err.Error(), fmt.Sprint(code)) {
		t.Errorf("got step %q err %v, want %s refused with %d", res.step, res.err, step, code)
	}
}

// sitePaths lists the paths of a site's documents, sorted.
func sitePaths(t *testing.T, s *quiretest.Server, tok, site string) map[string]string {
	t.Helper()
	r := s.Do(http.MethodGet, "/documents?siteId="+site+"&limit=100", nil, tok)
	servertest.MustStatus(t, r, http.StatusOK)
	out := map[string]string{}
	for _, d := range quiretest.List(t, r.JSON(t), "documents") {
		m := quiretest.Obj(t, d)
		out[quiretest.Str(t, m, "path")] = quiretest.Str(t, m, "documentId")
	}
	return out
}

func pathKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestSMTPIntake_NetSMTPAttachments sends a mail with three attachments
// (base64, quoted-printable, 8bit) with net/smtp and an API key: each is a
// document with the mail's sender, subject and date; the same mail sent
// again (same Message-ID) creates nothing new.
func TestSMTPIntake_NetSMTPAttachments(t *testing.T) {
	s := servertest.SmtpServer(t, nil)
	admin := s.Admin()
	key := servertest.APIKey(t, s, "READ", "WRITE")
	servertest.AddIntakeProfile(t, s, admin, map[string]any{"name": "finance", "pathTemplate": "Mail/{yyyy}-{mm}/{filename}", "actions": []any{},
		"duplicates": "KEEP_BOTH", "tags": []map[string]any{{"key": "from", "value": "{sender}: {subject}"}}})
	pdf := append([]byte("%PDF-1.4\n"), bytes.Repeat([]byte("scanned page \x00\x01\x02 "), 3000)...)
	txt := []byte("Total: 100 \u20ac = due\r\nline two with a very long line " + strings.Repeat("x", 200))
	csv := []byte("a,b\r\n1,2\r\n") // DATA carries lines as CRLF
	msg := buildMail("<scan-1@mfp.office.test>", "=?utf-8?q?Invoice_=E2=82=AC?=",
		mailPart{"invoice.pdf", "application/pdf", "base64", pdf},
		mailPart{"note.txt", "text/plain", "quoted-printable", txt},
		mailPart{"table.csv", "text/csv", "", csv})
	if res := sendMail(t, s.Node.SMTPAddr(), "apikey", key, []string{"finance@scans.test"}, msg, nil); res.err != nil {
		t.Fatalf("send: %s: %v", res.step, res.err)
	}
	// The 250 came after the commit: read them at once.
	paths := sitePaths(t, s, admin, "default")
	want := []string{"Mail/2026-03/invoice.pdf", "Mail/2026-03/note.txt", "Mail/2026-03/table.csv"}
	if got := pathKeys(paths); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("documents %v, want %v", got, want)
	}
	for name, body := range map[string][]byte{"invoice.pdf": pdf, "note.txt": txt, "table.csv": csv} {
		if got := servertest.Download(t, s, admin, "", paths["Mail/2026-03/"+name]); !bytes.Equal(got, body) {
			t.Errorf("%s: %d bytes read back, want %d", name, len(got), len(body))
		}
	}
	id := paths["Mail/2026-03/invoice.pdf"]
	for tag, want := range map[string]string{"mailFrom": "scanner@office.test", "mailSubject": "Invoice \u20ac",
		"mailDate": "2026-03-02T10:04:05Z", "mailMessageId": "<scan-1@mfp.office.test>", "from": "scanner@office.test: Invoice \u20ac"} {
		r := s.Do(http.MethodGet, "/documents/"+id+"/tags/"+tag, nil, admin)
		servertest.MustStatus(t, r, http.StatusOK)
		if v := quiretest.Str(t, r.JSON(t), "value"); v != want {
			t.Errorf("tag %s = %q, want %q", tag, v, want)
		}
	}
	// A retry of the same mail (same Message-ID; KEEP_BOTH would keep
	// a second copy of the same bytes otherwise) is answered 250 and
	// creates nothing.
	if res := sendMail(t, s.Node.SMTPAddr(), "apikey", key, []string{"finance@scans.test"}, msg, nil); res.err != nil {
		t.Fatalf("resend: %s: %v", res.step, res.err)
	}
	if got := sitePaths(t, s, admin, "default"); len(got) != 3 {
		t.Errorf("after the retry %d documents, want 3: %v", len(got), pathKeys(got))
	}
	// Another Message-ID with the same bytes is another mail: KEEP_BOTH.
	msg2 := bytes.Replace(msg, []byte("scan-1@"), []byte("scan-2@"), 1)
	if res := sendMail(t, s.Node.SMTPAddr(), "apikey", key, []string{"finance@scans.test"}, msg2, nil); res.err != nil {
		t.Fatalf("second mail: %s: %v", res.step, res.err)
	}
	r := s.Do(http.MethodGet, "/documents?siteId=default&limit=100", nil, admin)
	if n := len(quiretest.List(t, r.JSON(t), "documents")); n != 6 {
		t.Errorf("%d documents after a second mail, want 6", n)
	}
}

// TestSMTPIntake_Refusals: no open relay (MAIL and RCPT need AUTH), bad
// credentials, unknown profiles, profiles the key may not write, the
// size and attachment limits and a mail without attachment are each
// answered with an SMTP code, and nothing is created.
func TestSMTPIntake_Refusals(t *testing.T) {
	s := servertest.SmtpServer(t, func(c *node.IntakeSMTPConfig) { c.MaxMessageBytes = 64 << 10; c.MaxAttachments = 2 })
	admin := s.Admin()
	key := servertest.APIKey(t, s, "READ", "WRITE")
	readOnly := servertest.APIKey(t, s, "READ")
	servertest.AddIntakeProfile(t, s, admin, map[string]any{"name": "finance", "actions": []any{}})
	servertest.SetSiteConfig(t, s, admin, "", map[string]any{"maxContentLengthBytes": "1000"})
	one := buildMail("<m1@x>", "s", mailPart{"a.txt", "text/plain", "", []byte("hello")})
	three := buildMail("<m3@x>", "s", mailPart{"a.txt", "text/plain", "", []byte("a")},
		mailPart{"b.txt", "text/plain", "", []byte("b")}, mailPart{"c.txt", "text/plain", "", []byte("c")})
	big := buildMail("<mb@x>", "s", mailPart{"big.bin", "application/octet-stream", "base64", bytes.Repeat([]byte{1}, 60<<10)})
	overSite := buildMail("<ms@x>", "s", mailPart{"a.txt", "text/plain", "", []byte("ok")},
		mailPart{"b.bin", "application/octet-stream", "base64", bytes.Repeat([]byte{2}, 5000)})
	none := []byte("From: a@b\r\nSubject: no scan\r\nMessage-ID: <n@x>\r\n\r\njust text\r\n")
	empty := buildMail("<me@x>", "s", mailPart{"empty.txt", "text/plain", "", nil})
	addr := s.Node.SMTPAddr()
	for _, tt := range []struct {
		name       string
		user, pass string
		rcpt       string
		msg        []byte
		step       string
		code       int
	}{
		{"no AUTH: MAIL refused", "", "", "finance@scans.test", one, "MAIL", 530},
		{"wrong key", "apikey", "not-a-key", "finance@scans.test", one, "AUTH", 535},
		{"wrong user password", "admin", "guess", "finance@scans.test", one, "AUTH", 535},
		{"unknown profile", "apikey", key, "nobody@scans.test", one, "RCPT", 550},
		{"bad address", "apikey", key, "bad.name@scans.test", one, "RCPT", 550},
		{"another site", "apikey", key, "hr+finance@scans.test", one, "RCPT", 550},
		{"read-only key", "apikey", readOnly, "finance@scans.test", one, "RCPT", 550},
		{"too many attachments", "apikey", key, "finance@scans.test", three, "DATA", 550},
		{"message over max_message_bytes", "apikey", key, "finance@scans.test", big, "DATA", 552},
		{"attachment over the site limit", "apikey", key, "finance@scans.test", overSite, "DATA", 552},
		{"no attachment", "apikey", key, "finance@scans.test", none, "DATA", 550},
		{"empty attachment", "apikey", key, "finance@scans.test", empty, "DATA", 550},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantCode(t, sendMail(t, addr, tt.user, tt.pass, []string{tt.rcpt}, tt.msg, nil), tt.step, tt.code)
		})
	}
	if got := sitePaths(t, s, admin, "default"); len(got) != 0 {
		t.Errorf("refused mails left documents: %v", pathKeys(got))
	}
	r := s.Do(http.MethodGet, "/sites/default/intakeProfiles/finance/errors", nil, admin)
	servertest.MustStatus(t, r, http.StatusOK)
	if n := len(quiretest.List(t, r.JSON(t), "errors")); n < 4 {
		t.Errorf("%d intake errors recorded, want one per refused mail the profile saw: %s", n, r.Body)
	}
	// The listener still takes a good mail.
	if res := sendMail(t, addr, "apikey", key, []string{"finance@scans.test"}, one, nil); res.err != nil {
		t.Errorf("good mail after refusals: %s: %v", res.step, res.err)
	}
}

// TestSMTPIntake_DirectoryUserAndSite: a directory user signs in with its
// password (AUTH LOGIN through net/smtp's custom auth is not offered, so
// PLAIN) and site+profile@ picks another site's profile.
func TestSMTPIntake_DirectoryUserAndSite(t *testing.T) {
	s := servertest.SmtpServer(t, nil)
	admin := s.Admin()
	servertest.MustStatus(t, s.Do(http.MethodPost, "/groups", map[string]any{"group": map[string]any{"name": "finance"}}, admin), http.StatusOK)
	servertest.MustStatus(t, s.Do(http.MethodPost, "/users", map[string]any{"user": map[string]any{"username": "mfp@office.test"}, "temporaryPassword": "Temp-pass-1"}, admin), http.StatusOK)
	servertest.MustStatus(t, s.Do(http.MethodPost, "/groups/finance/users", map[string]any{"user": map[string]any{"username": "mfp@office.test"}}, admin), http.StatusOK)
	servertest.FirstSignIn(t, s, "mfp@office.test", "Temp-pass-1", "Scanner password 1")
	servertest.MustStatus(t, s.Do(http.MethodPost, "/sites/finance/intakeProfiles", map[string]any{"intakeProfile": map[string]any{"name": "invoices", "pathTemplate": "In/{filename}", "actions": []any{}}}, admin), http.StatusCreated)
	msg := buildMail("<u1@x>", "s", mailPart{"scan.pdf", "application/pdf", "base64", []byte("%PDF-1.4 user scan")})
	addr := s.Node.SMTPAddr()
	wantCode(t, sendMail(t, addr, "mfp@office.test", "wrong password", []string{"finance+invoices@scans.test"}, msg, nil), "AUTH", 535)
	// The user's groups give no access to site default.
	servertest.AddIntakeProfile(t, s, admin, map[string]any{"name": "invoices", "actions": []any{}})
	wantCode(t, sendMail(t, addr, "mfp@office.test", "Scanner password 1", []string{"invoices@scans.test"}, msg, nil), "RCPT", 550)
	if res := sendMail(t, addr, "mfp@office.test", "Scanner password 1", []string{"finance+invoices@scans.test"}, msg, nil); res.err != nil {
		t.Fatalf("send: %s: %v", res.step, res.err)
	}
	paths := sitePaths(t, s, admin, "finance")
	id, ok := paths["In/scan.pdf"]
	if !ok {
		t.Fatalf("documents %v, want In/scan.pdf", pathKeys(paths))
	}
	d := s.Do(http.MethodGet, "/documents/"+id+"?siteId=finance", nil, admin).JSON(t)
	if quiretest.Str(t, d, "contentType") != "application/pdf" {
		t.Errorf("document %v", d)
	}
}

// TestSMTPIntake_STARTTLS: with the server's TLS settings the listener
// offers STARTTLS, and a client authenticates after it.
func TestSMTPIntake_STARTTLS(t *testing.T) {
	cfg, pool := quiretest.TestCert(t, "localhost")
	s := servertest.SmtpServer(t, func(c *node.IntakeSMTPConfig) { c.TLS = cfg })
	admin := s.Admin()
	servertest.AddIntakeProfile(t, s, admin, map[string]any{"name": "finance", "actions": []any{}})
	key := servertest.APIKey(t, s, "READ", "WRITE")
	c, err := smtp.Dial(s.Node.SMTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if ok, _ := c.Extension("STARTTLS"); !ok {
		t.Fatal("STARTTLS not offered")
	}
	c.Close()
	msg := buildMail("<tls@x>", "s", mailPart{"a.txt", "text/plain", "", []byte("over tls")})
	if res := sendMail(t, s.Node.SMTPAddr(), "apikey", key, []string{"finance@scans.test"}, msg,
		&tls.Config{RootCAs: pool, ServerName: "localhost"}); res.err != nil {
		t.Fatalf("send over STARTTLS: %s: %v", res.step, res.err)
	}
	if n := len(sitePaths(t, s, admin, "default")); n != 1 {
		t.Errorf("%d documents, want 1", n)
	}
}

// TestSMTPIntake_Swaks sends with Debian's swaks (AUTH LOGIN, two
// attachments) as an administrator's test from a shell would.
func TestSMTPIntake_Swaks(t *testing.T) {
	swaks := quiretest.NeedProgram(t, "swaks", "swaks")
	s := servertest.SmtpServer(t, nil)
	admin := s.Admin()
	key := servertest.APIKey(t, s, "READ", "WRITE")
	servertest.AddIntakeProfile(t, s, admin, map[string]any{"name": "finance", "pathTemplate": "Swaks/{filename}", "actions": []any{}})
	dir := t.TempDir()
	a, b := filepath.Join(dir, "page1.pdf"), filepath.Join(dir, "page2.txt")
	os.WriteFile(a, append([]byte("%PDF-1.4\n"), bytes.Repeat([]byte("swaks scan "), 500)...), 0o600)
	os.WriteFile(b, []byte("second attachment"), 0o600)
	host, port, _ := net.SplitHostPort(s.Node.SMTPAddr())
	run := func(pass string) (string, error) {
		cmd := exec.Command(swaks, "--server", host, "--port", port, "--ehlo", "mfp.office.test",
			"--from", "scanner@office.test", "--to", "finance@scans.test", "--auth", "LOGIN", "--auth-user", "apikey", "--auth-password", pass,
			"--header", "Subject: swaks scan", "--attach", "@"+a, "--attach", "@"+b, "--timeout", "30")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run("wrong"); err == nil || !strings.Contains(out, "535") {
		t.Errorf("swaks with a wrong key: err %v, output:\n%s", err, out)
	}
	out, err := run(key)
	if err != nil || !strings.Contains(out, "250 2.0.0 OK") {
		t.Fatalf("swaks: %v\n%s", err, out)
	}
	paths := sitePaths(t, s, admin, "default")
	if got := pathKeys(paths); strings.Join(got, " ") != "Swaks/page1.pdf Swaks/page2.txt" {
		t.Fatalf("documents %v\nswaks output:\n%s", got, out)
	}
	if got := servertest.Download(t, s, admin, "", paths["Swaks/page2.txt"]); string(got) != "second attachment" {
		t.Errorf("content %q", got)
	}
}

// TestSMTPIntake_NoAuthInClearText: a client that is not on loopback
// (played by treating loopback as the LAN) is not offered AUTH before
// STARTTLS and is refused with 538 when it tries; after STARTTLS it
// signs in and sends. Without TLS configured it can never sign in.
func TestSMTPIntake_NoAuthInClearText(t *testing.T) {
	defer testhooks.SMTPLoopbackUntrusted()()
	cfg, pool := quiretest.TestCert(t, "localhost")
	s := servertest.SmtpServer(t, func(c *node.IntakeSMTPConfig) { c.TLS = cfg })
	admin := s.Admin()
	servertest.AddIntakeProfile(t, s, admin, map[string]any{"name": "finance", "actions": []any{}})
	key := servertest.APIKey(t, s, "READ", "WRITE")
	c, err := smtp.Dial(s.Node.SMTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Hello("mfp"); err != nil {
		t.Fatal(err)
	}
	if ok, mechs := c.Extension("AUTH"); ok {
		t.Errorf("AUTH %s offered in clear text to a LAN client", mechs)
	}
	// net/smtp itself refuses PLAIN in clear text to a non-localhost
	// name: send the command by hand.
	id, err := c.Text.Cmd("AUTH PLAIN %s", base64.StdEncoding.EncodeToString([]byte("\x00apikey\x00"+key)))
	if err != nil {
		t.Fatal(err)
	}
	c.Text.StartResponse(id)
	code, msg, err := c.Text.ReadResponse(235)
	c.Text.EndResponse(id)
	if code != 538 || err == nil {
		t.Errorf("AUTH in clear text answered %d %s, want 538", code, msg)
	}
	msg0 := buildMail("<clear@x>", "s", mailPart{"a.txt", "text/plain", "", []byte("x")})
	if err := c.Mail("a@b"); err == nil || !strings.HasPrefix(err.Error(), "530") {
		t.Errorf("MAIL without AUTH: %v, want 530", err)
	}
	if res := sendMail(t, s.Node.SMTPAddr(), "apikey", key, []string{"finance@scans.test"}, msg0,
		&tls.Config{RootCAs: pool, ServerName: "localhost"}); res.err != nil {
		t.Fatalf("send over STARTTLS: %s: %v", res.step, res.err)
	}
	if n := len(sitePaths(t, s, admin, "default")); n != 1 {
		t.Errorf("%d documents, want 1", n)
	}
}
