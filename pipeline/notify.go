package pipeline

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/smtp"
	"net/textproto"
	"os"
	"strconv"
	"strings"
	"time"

	"quire/outbound"
	"quire/pipeline/engine"
	"quire/storage"
)

// Mail is one e-mail.
type Mail struct {
	From    string
	To, Cc  []string
	Bcc     []string
	Subject string
	Text    string
	HTML    string
}

// mailConfig resolves a site's mail server and sender: the site's
// notification settings first, then the server's.
func (p *Pipeline) mailConfig(site string) (SMTPConfig, error) {
	cfg := p.cfg.Engines.SMTP
	sc, err := p.db.SiteConfig(site)
	if err != nil {
		return cfg, err
	}
	if from := sc.FromEmail(); from != "" {
		cfg.From = from
	}
	if n := sc.Notification; n != nil && n.SMTP != nil && n.SMTP.Host != "" {
		cfg.Host, cfg.Port, cfg.Security = n.SMTP.Host, n.SMTP.Port, n.SMTP.ConnectionSecurity
		cfg.Username, cfg.Password = n.SMTP.Username, n.SMTP.Password
		// The operator's trust settings are for the operator's relay.
		cfg.RootCAs, cfg.CAFile, cfg.InsecureSkipVerify = nil, "", false
		cfg.Dialer, cfg.Dial = p.cfg.Outbound.Dialer(30*time.Second), nil
	}
	if cfg.From == "" {
		return cfg, errors.New("notificationEmail is not configured")
	}
	if cfg.Host == "" {
		return cfg, errors.New("no mail server configured: set the site's notification.smtp or the server's SMTP settings")
	}
	return cfg, nil
}

// runNotification e-mails the action's subject and text or HTML to its cc
// and bcc recipients, and records the notification for
// GET /documents/{id}/notifications.
func runNotification(ctx context.Context, j *Job) (*Outcome, error) {
	if t := j.Param("notificationType"); t != "" && !strings.EqualFold(t, "email") {
		return nil, fmt.Errorf("invalid notificationType '%s'", t)
	}
	cfg, err := j.p.mailConfig(j.Site)
	if err != nil {
		return nil, err
	}
	m := Mail{From: cfg.From, Cc: splitAddrs(j.Param("notificationToCc")), Bcc: splitAddrs(j.Param("notificationToBcc")),
		Subject: j.Param("notificationSubject"), Text: j.Param("notificationText"), HTML: j.Param("notificationHtml")}
	if err := SendMail(ctx, cfg, m); err != nil {
		return nil, err
	}
	v, _ := json.Marshal(map[string]any{"notificationType": "EMAIL", "cc": m.Cc, "bcc": m.Bcc, "subject": m.Subject,
		"notificationDate": j.Now().UTC().Format("2006-01-02T15:04:05+0000"), "status": "ACTION_CREATED", "actionSk": j.Action.ID()})
	return &Outcome{Results: []storage.ActionResult{{Kind: "notification", Name: fmt.Sprintf("%020d", j.Now().UnixNano()), Value: v}}}, nil
}

// splitAddrs splits a comma separated list of addresses, lower case.
func splitAddrs(s string) []string {
	out := splitList(s)
	for i, a := range out {
		out[i] = strings.ToLower(a)
	}
	return out
}

// SendTestMail sends the site's test notification (POST
// /sites/{siteId}/configuration/notification/test).
func (p *Pipeline) SendTestMail(ctx context.Context, site, to string) error {
	cfg, err := p.mailConfig(site)
	if err != nil {
		return err
	}
	return SendMail(ctx, cfg, Mail{From: cfg.From, To: []string{to}, Subject: "Quire test notification",
		Text: "This is a test notification from Quire for site " + site + ". Notifications of this site are delivered."})
}

// SendSiteMail sends one mail through a site's mail settings (the
// server's when the site has none): e-signature links, reminders.
func (p *Pipeline) SendSiteMail(ctx context.Context, site, to, subject, text string) error {
	cfg, err := p.mailConfig(site)
	if err != nil {
		return err
	}
	return SendMail(ctx, cfg, Mail{From: cfg.From, To: []string{to}, Subject: subject, Text: text})
}

// ErrNoServerMail is the answer of SendUserMail and ServerMail when the
// server has no mail settings of its own ([smtp] host and from in the
// configuration file).
var ErrNoServerMail = errors.New("this server has no mail settings of its own: the configuration file's [smtp] host and from are needed to mail reset codes and temporary passwords")

// ServerMail reports whether the server's own mail settings are complete
// (nil) or ErrNoServerMail.
func (p *Pipeline) ServerMail() error {
	if c := p.cfg.Engines.SMTP; c.Host == "" || c.From == "" {
		return ErrNoServerMail
	}
	return nil
}

// ServerMailInfo describes the server's own mail settings for an
// administrator (GET /system/health "serverMail"): where directory mail
// goes, never the credentials.
type ServerMailInfo struct {
	Configured bool
	Host       string
	Port       int
	Security   string
	From       string
}

// ServerMailSettings is what ServerMailInfo says of this server.
func (p *Pipeline) ServerMailSettings() ServerMailInfo {
	c := p.cfg.Engines.SMTP
	port := c.Port
	if port == 0 && c.Host != "" {
		port = 25
		if c.Security == "IMPLICIT_TLS" {
			port = 465
		}
	}
	return ServerMailInfo{Configured: p.ServerMail() == nil, Host: c.Host, Port: port, Security: c.Security, From: c.From}
}

// SendServerTestMail sends a test mail through the server's own mail
// settings only (POST /system/mail/test): the path reset codes and
// temporary passwords take.
func (p *Pipeline) SendServerTestMail(ctx context.Context, to string) error {
	return p.SendUserMail(ctx, to, "Quire test mail",
		"This is a test mail from Quire. Password mail of this server (temporary passwords, reset codes) is delivered.")
}

// SendUserMail sends a directory mail (a temporary password, a reset
// code: mail that grants access) through the server's own mail settings
// only. A site's notification settings, which that site's governors
// change, are never used: a governor pointing them at a relay of their
// own would read every reset code (issue 29, finding 1).
func (p *Pipeline) SendUserMail(ctx context.Context, to, subject, text string) error {
	if err := p.ServerMail(); err != nil {
		return err
	}
	cfg := p.cfg.Engines.SMTP
	return SendMail(ctx, cfg, Mail{From: cfg.From, To: []string{to}, Subject: subject, Text: text})
}

// SendMail delivers m through the mail server of cfg. Connection errors
// and 4xx replies are transient (retried); 5xx replies fail.
func SendMail(ctx context.Context, cfg SMTPConfig, m Mail) error {
	rcpts := append(append(append([]string{}, m.To...), m.Cc...), m.Bcc...)
	if len(rcpts) == 0 {
		return errors.New("no recipients")
	}
	port := cfg.Port
	if port == 0 {
		port = 25
		if cfg.Security == "IMPLICIT_TLS" {
			port = 465
		}
	}
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(port))
	roots := cfg.RootCAs
	if cfg.CAFile != "" {
		b, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return fmt.Errorf("smtp.ca_file: %w", err)
		}
		roots = x509.NewCertPool()
		if !roots.AppendCertsFromPEM(b) {
			return fmt.Errorf("smtp.ca_file: %s holds no PEM certificate", cfg.CAFile)
		}
	}
	tlsCfg := &tls.Config{ServerName: cfg.Host, RootCAs: roots, InsecureSkipVerify: cfg.InsecureSkipVerify} //nolint:gosec // opt-in for LAN relays
	dial := cfg.Dial
	if dial == nil {
		d := cfg.Dialer
		if d == nil {
			d = &net.Dialer{Timeout: 30 * time.Second}
		}
		dial = d.DialContext
	}
	conn, err := dial(ctx, "tcp", addr)
	if err == nil && cfg.Security == "IMPLICIT_TLS" {
		tc := tls.Client(conn, tlsCfg)
		hctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		if err = tc.HandshakeContext(hctx); err != nil {
			conn.Close()
		}
		cancel()
		conn = tc
	}
	var certErr *tls.CertificateVerificationError
	if errors.As(err, &certErr) {
		// Not transient: the certificate stays what it is.
		return fmt.Errorf("connect to mail server %s: %s", addr, outbound.Reason(err))
	}
	if err != nil {
		msg := fmt.Errorf("connect to mail server %s: %s", addr, outbound.Reason(err))
		if errors.As(err, new(*outbound.RefusedError)) {
			return msg
		}
		return engine.Retryable(msg)
	}
	defer conn.Close()
	deadline := time.Now().Add(2 * time.Minute)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	c, err := smtp.NewClient(conn, cfg.Host)
	if err != nil {
		return smtpErr(err)
	}
	defer c.Close()
	if err := c.Hello("quire"); err != nil {
		return smtpErr(err)
	}
	if cfg.Security == "STARTTLS" {
		if ok, _ := c.Extension("STARTTLS"); !ok {
			return fmt.Errorf("mail server %s offers no STARTTLS: set the connection security it supports", addr)
		}
		if err := c.StartTLS(tlsCfg); err != nil {
			var certErr *tls.CertificateVerificationError
			if errors.As(err, &certErr) {
				return fmt.Errorf("STARTTLS with mail server %s: %s", addr, outbound.Reason(err))
			}
			return smtpErr(fmt.Errorf("STARTTLS: %w", err))
		}
	}
	if cfg.Username != "" {
		// net/smtp sends a password in the clear only to localhost; say
		// so instead of failing (and retrying) on its terse refusal.
		if _, isTLS := c.TLSConnectionState(); !isTLS && !loopbackHost(cfg.Host) {
			return fmt.Errorf("mail server %s: the connection is not encrypted, and Quire sends the password only over TLS: set the connection security to STARTTLS or IMPLICIT_TLS", addr)
		}
		if err := c.Auth(smtp.PlainAuth("", cfg.Username, cfg.Password, cfg.Host)); err != nil {
			return smtpErr(fmt.Errorf("authenticate: %w", err))
		}
	}
	if err := c.Mail(cfg.From); err != nil {
		return smtpErr(err)
	}
	for _, r := range rcpts {
		if err := c.Rcpt(r); err != nil {
			return smtpErr(fmt.Errorf("recipient %s: %w", r, err))
		}
	}
	w, err := c.Data()
	if err != nil {
		return smtpErr(err)
	}
	if _, err := w.Write(buildMessage(m)); err != nil {
		return smtpErr(err)
	}
	if err := w.Close(); err != nil {
		return smtpErr(err)
	}
	return c.Quit()
}

// loopbackHost reports whether net/smtp takes host as local (it then
// allows PLAIN authentication without TLS).
func loopbackHost(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1"
}

// smtpErr marks network errors and 4xx replies as transient. A reply
// keeps its code and the start of its text (the reason a mail server
// gives); anything else the server sent (a line that is no SMTP reply, as
// a service that is not a mail server answers) is left out.
func smtpErr(err error) error {
	var tp *textproto.Error
	if errors.As(err, &tp) {
		msg := strings.Map(func(r rune) rune {
			if r < ' ' || r > '~' {
				return -1
			}
			return r
		}, tp.Msg)
		if len(msg) > 100 {
			msg = msg[:100]
		}
		e := fmt.Errorf("mail server answered %d %s", tp.Code, msg)
		if tp.Code >= 500 {
			return e
		}
		return engine.Retryable(e)
	}
	return engine.Retryable(fmt.Errorf("mail server: %s", outbound.Reason(err)))
}

// buildMessage writes m as a MIME message: text, HTML, or both as
// multipart/alternative, quoted-printable.
func buildMessage(m Mail) []byte {
	var b bytes.Buffer
	h := func(k, v string) { fmt.Fprintf(&b, "%s: %s\r\n", k, v) }
	h("From", m.From)
	if len(m.To) > 0 {
		h("To", strings.Join(m.To, ", "))
	}
	if len(m.Cc) > 0 {
		h("Cc", strings.Join(m.Cc, ", "))
	}
	h("Subject", mime.QEncoding.Encode("utf-8", m.Subject))
	h("Date", time.Now().UTC().Format(time.RFC1123Z))
	id := make([]byte, 12)
	rand.Read(id)
	h("Message-ID", "<"+hex.EncodeToString(id)+"@quire>")
	h("MIME-Version", "1.0")
	part := func(ctype, body string) {
		fmt.Fprintf(&b, "Content-Type: %s; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n", ctype)
		qw := quotedprintable.NewWriter(&b)
		qw.Write([]byte(body))
		qw.Close()
		b.WriteString("\r\n")
	}
	switch {
	case m.Text != "" && m.HTML != "":
		bound := "quire-" + hex.EncodeToString(id)
		h("Content-Type", `multipart/alternative; boundary="`+bound+`"`)
		b.WriteString("\r\n")
		b.WriteString("--" + bound + "\r\n")
		part("text/plain", m.Text)
		b.WriteString("--" + bound + "\r\n")
		part("text/html", m.HTML)
		b.WriteString("--" + bound + "--\r\n")
	case m.HTML != "":
		part("text/html", m.HTML)
	default:
		part("text/plain", m.Text)
	}
	return b.Bytes()
}
