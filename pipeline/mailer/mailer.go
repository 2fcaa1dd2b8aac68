// Package mailer delivers e-mail over SMTP (STARTTLS or implicit TLS with
// the server's certificate verified, a password only over TLS): the
// NOTIFICATION action's mail, a site's e-signature links and reminders,
// and the directory's reset codes and temporary passwords. Which server a
// mail goes through (a site's own, or the server's) the pipeline decides.
package mailer

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
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
)

// Config is a mail server.
type Config struct {
	Host string
	Port int
	// Security is "", "STARTTLS" or "IMPLICIT_TLS".
	Security string
	Username string
	Password string
	From     string
	// RootCAs are the authorities the server's TLS certificate must be
	// issued by (nil: the system's).
	RootCAs *x509.CertPool
	// CAFile, when set, holds them as PEM (smtp.ca_file); it is read at
	// each delivery, so a renewed CA needs no restart.
	CAFile string
	// InsecureSkipVerify accepts any TLS certificate (self-signed LAN
	// relays; tests).
	InsecureSkipVerify bool
	// Dialer connects to the server (nil: a plain dialer, for the
	// operator's relay); a site's own server is dialed through the
	// outbound policy's.
	Dialer *net.Dialer
	// Dial, when set, connects instead of Dialer (tests: a relay's name
	// resolved to loopback). A site's own server never uses it.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Message is one e-mail.
type Message struct {
	From    string
	To, Cc  []string
	Bcc     []string
	Subject string
	Text    string
	HTML    string
}

// Send delivers m through the mail server of cfg. Connection errors
// and 4xx replies are transient (engine.Retryable); 5xx replies fail.
func Send(ctx context.Context, cfg Config, m Message) error {
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
func buildMessage(m Message) []byte {
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

// Check connects to the mail server of cfg and reports whether it
// greets as one (or takes a connection, for implicit TLS), with its
// greeting or why not (quire doctor).
func Check(ctx context.Context, cfg Config) (bool, string) {
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
	d := net.Dialer{Timeout: 5 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false, fmt.Sprintf("%s not reachable: %v", addr, err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if cfg.Security == "IMPLICIT_TLS" {
		return true, addr + ": reachable (implicit TLS)"
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "220") {
		return false, fmt.Sprintf("%s did not greet as a mail server: %q %v", addr, strings.TrimSpace(line), err)
	}
	return true, addr + ": " + strings.TrimSpace(line)
}
