package intake

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/textproto"
	"os"
	"path"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	sasl "github.com/emersion/go-sasl"
	smtp "github.com/emersion/go-smtp"

	"quire/auth"
	qintake "quire/intake"
	"quire/server/internal/api"
	"quire/server/internal/testhooks"
	"quire/storage"
)

// Scan to e-mail (issue 32, source 2): an SMTP listener (intake_smtp.listen,
// off by default) takes mail from scanners. Every client authenticates
// (AUTH PLAIN or LOGIN with a directory user or an intake API key; never
// an open relay), over STARTTLS or from loopback. The recipient's local
// part picks the intake profile: "profile@any.domain" is the profile in
// the API key's site (a directory user: site "default"), and
// "site+profile@any.domain" the profile of that site. Each attachment
// becomes a document through intake.Intake; the 250 is sent only once
// every document is committed, and a mail sent again with the same
// Message-ID creates nothing new (the intake journal, per site, profile
// and attachment). See API.md "Scan to e-mail".
//
// In a cluster every node listens: the documents' commands go through
// the node's applier, which forwards a follower's writes to the leader
// through the Raft log, and the journal is decided by the applier on the
// leader, so a retried mail reaching another node still does not
// duplicate. A scanner is set up with one host name; refusing it on a
// follower would lose scans.

// SMTP intake limits and defaults (intake_smtp.* settings).
const (
	DefaultSMTPMaxMessageBytes = 50 << 20
	DefaultSMTPMaxAttachments  = 20
	// smtpMaxRecipients is how many profiles one mail may go to.
	smtpMaxRecipients = 10
	// smtpMaxParts and smtpMaxDepth bound the MIME tree walked.
	smtpMaxParts = 1000
	smtpMaxDepth = 8
	// smtpTimeout bounds one read or write of the SMTP conversation.
	smtpTimeout = 2 * time.Minute
)

// SMTPConfig configures the scan-to-e-mail listener.
type SMTPConfig struct {
	// Domain is the name in the greeting (default: this machine's name).
	Domain string
	// MaxMessageBytes is the largest mail (SIZE; a larger one is answered
	// 552). MaxAttachments is the most attachments one mail may carry
	// (more are answered 550). Zero: the defaults.
	MaxMessageBytes int64
	MaxAttachments  int
	// TLS offers STARTTLS (nil: none, and AUTH is only taken from
	// loopback clients).
	TLS *tls.Config
	// SpoolDir holds mails being received (default: the system's temp
	// directory).
	SpoolDir string
}

// SMTPIntake is a running scan-to-e-mail listener.
type SMTPIntake struct {
	srv *smtp.Server
	s   *Handlers
	cfg SMTPConfig
	// addr is the listener's address once Serve runs (the intake test
	// dials it: intaketest.go).
	addr atomic.Pointer[string]
}

// NewSMTPIntake builds the scan-to-e-mail listener; Serve runs it.
func (s *Handlers) NewSMTPIntake(cfg SMTPConfig) *SMTPIntake {
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = DefaultSMTPMaxMessageBytes
	}
	if cfg.MaxAttachments <= 0 {
		cfg.MaxAttachments = DefaultSMTPMaxAttachments
	}
	if cfg.Domain == "" {
		cfg.Domain, _ = os.Hostname()
		if cfg.Domain == "" {
			cfg.Domain = "quire"
		}
	}
	m := &SMTPIntake{s: s, cfg: cfg}
	srv := smtp.NewServer(m)
	srv.Domain = cfg.Domain
	srv.MaxMessageBytes = cfg.MaxMessageBytes
	srv.MaxRecipients = smtpMaxRecipients
	// AUTH is allowed or refused by the session (TLS, or a loopback
	// client): go-smtp's own switch knows no loopback exception.
	srv.AllowInsecureAuth = true
	srv.TLSConfig = cfg.TLS
	srv.ReadTimeout, srv.WriteTimeout = smtpTimeout, smtpTimeout
	srv.ErrorLog = slogPrinter{s.Log.With("component", "smtp-intake")}
	m.srv = srv
	s.smtp.Store(m)
	return m
}

// Serve takes connections from ln until Close.
func (m *SMTPIntake) Serve(ln net.Listener) error {
	a := ln.Addr().String()
	m.addr.Store(&a)
	return m.srv.Serve(ln)
}

// Close stops listening and closes the connections.
func (m *SMTPIntake) Close() error { return m.srv.Close() }

type slogPrinter struct{ log *slog.Logger }

func (p slogPrinter) Printf(format string, v ...any) { p.log.Warn(fmt.Sprintf(format, v...)) }
func (p slogPrinter) Println(v ...any)               { p.log.Warn(fmt.Sprint(v...)) }

// NewSession implements smtp.Backend.
func (m *SMTPIntake) NewSession(c *smtp.Conn) (smtp.Session, error) {
	return &smtpSession{m: m, c: c}, nil
}

// smtpTarget is one recipient: a site's profile.
type smtpTarget struct {
	site string
	p    *storage.IntakeProfile
}

type smtpSession struct {
	m       *SMTPIntake
	c       *smtp.Conn
	p       *auth.Principal
	from    string
	targets []smtpTarget
	// authFails counts the connection's refused AUTH tries.
	authFails int
}

// smtpMaxAuthTries bounds the failed AUTH tries of one connection.
const smtpMaxAuthTries = 3

// clientAddr is the client's IP address (the sign-in budget's key).
func (ss *smtpSession) clientAddr() string {
	if a, ok := ss.c.Conn().RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	return ss.c.Conn().RemoteAddr().String()
}

func smtpErr(code int, enh smtp.EnhancedCode, msg string) *smtp.SMTPError {
	return &smtp.SMTPError{Code: code, EnhancedCode: enh, Message: msg}
}

var (
	errSMTPAuthRequired = smtpErr(530, smtp.EnhancedCode{5, 7, 0}, "Authentication required: AUTH with a Quire user or an intake API key")
	errSMTPNeedTLS      = smtpErr(538, smtp.EnhancedCode{5, 7, 11}, "Encryption required: STARTTLS before AUTH")
	errSMTPBadAuth      = smtpErr(535, smtp.EnhancedCode{5, 7, 8}, "Authentication credentials invalid")
	errSMTPAuthBusy     = smtpErr(454, smtp.EnhancedCode{4, 7, 0}, "Too many sign-in attempts, try again later")
	errSMTPAuthTries    = smtpErr(454, smtp.EnhancedCode{4, 7, 0}, "Too many failed AUTH attempts on this connection: reconnect later")
)

// authOK: credentials may be sent on this connection (TLS, or loopback).
func (ss *smtpSession) authOK() bool {
	if _, ok := ss.c.TLSConnectionState(); ok {
		return true
	}
	if a, ok := ss.c.Conn().RemoteAddr().(*net.TCPAddr); ok && smtpTrusted(a.IP) {
		return true
	}
	return false
}

// smtpTrusted reports whether a client may send credentials without TLS:
// a loopback client only (unless a test plays a LAN client from
// loopback: testhooks.SMTPLoopbackUntrusted).
func smtpTrusted(ip net.IP) bool { return ip.IsLoopback() && testhooks.SMTPLoopbackTrusted() }

// AuthMechanisms implements smtp.AuthSession: none advertised where
// credentials would travel in clear text.
func (ss *smtpSession) AuthMechanisms() []string {
	if !ss.authOK() {
		return nil
	}
	return []string{sasl.Plain, sasl.Login}
}

// Auth implements smtp.AuthSession.
func (ss *smtpSession) Auth(mech string) (sasl.Server, error) {
	if !ss.authOK() {
		return nil, errSMTPNeedTLS
	}
	// At most smtpMaxAuthTries failed tries a connection: then 454
	// without a check (each check spends the address's sign-in budget
	// too: passwords.go).
	if ss.authFails >= smtpMaxAuthTries {
		return nil, errSMTPAuthTries
	}
	check := func(user, pass string) error {
		p, err := ss.m.s.CredentialPrincipal(context.Background(), ss.clientAddr(), user, pass)
		var busy *api.ErrPasswordBusy
		if errors.As(err, &busy) {
			ss.authFails++
			return errSMTPAuthBusy
		}
		if errors.Is(err, ErrBadCredentials) {
			ss.authFails++
			return errSMTPBadAuth
		}
		if err != nil {
			ss.m.s.Log.Warn("smtp intake: authentication failed", "err", err)
			return smtpErr(454, smtp.EnhancedCode{4, 7, 0}, "Temporary authentication failure")
		}
		ss.p = p
		return nil
	}
	switch strings.ToUpper(mech) {
	case sasl.Plain:
		return sasl.NewPlainServer(func(identity, user, pass string) error {
			if identity != "" && identity != user {
				return errSMTPBadAuth
			}
			return check(user, pass)
		}), nil
	case sasl.Login:
		return &loginServer{check: check}, nil
	}
	return nil, smtp.ErrAuthUnknownMechanism
}

// loginServer is the server side of the LOGIN mechanism (many scanners
// know only it): go-sasl has its client only.
type loginServer struct {
	check func(user, pass string) error
	user  string
	step  int
}

func (l *loginServer) Next(resp []byte) ([]byte, bool, error) {
	switch l.step {
	case 0:
		l.step = 1
		if len(resp) > 0 { // an initial response is the user name
			l.user, l.step = string(resp), 2
			return []byte("Password:"), false, nil
		}
		return []byte("Username:"), false, nil
	case 1:
		l.user, l.step = string(resp), 2
		return []byte("Password:"), false, nil
	case 2:
		l.step = 3
		if err := l.check(l.user, string(resp)); err != nil {
			return nil, true, err
		}
		return nil, true, nil
	}
	return nil, true, errSMTPBadAuth
}

// Mail implements smtp.Session: only an authenticated client sends.
func (ss *smtpSession) Mail(from string, _ *smtp.MailOptions) error {
	if ss.p == nil {
		return errSMTPAuthRequired
	}
	ss.from = from
	return nil
}

// Rcpt implements smtp.Session: the recipient names a profile the client
// may write to.
func (ss *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	if ss.p == nil {
		return errSMTPAuthRequired
	}
	site, name, ok := smtpRecipient(to, ss.p)
	if !ok {
		return smtpErr(550, smtp.EnhancedCode{5, 1, 1}, "No such intake address: use profile@… or site+profile@…")
	}
	if !storage.CheckSiteID(site) || ss.p.Require(site, auth.PermWrite) != nil {
		return smtpErr(550, smtp.EnhancedCode{5, 7, 1}, "Not allowed to send to this intake profile")
	}
	p, err := ss.m.s.Intake.Profile(site, name)
	if api.IsNotFound(err) {
		return smtpErr(550, smtp.EnhancedCode{5, 1, 1}, "No such intake profile: "+name)
	}
	if err != nil {
		return smtpErr(451, smtp.EnhancedCode{4, 3, 0}, "Temporary failure, try again later")
	}
	for _, t := range ss.targets {
		if t.site == site && t.p.Name == p.Name {
			return nil // the same profile twice: taken once
		}
	}
	ss.targets = append(ss.targets, smtpTarget{site: site, p: p})
	return nil
}

// smtpRecipient maps a recipient address to a site and profile name:
// "profile@…" (the API key's site, or "default") or "site+profile@…".
func smtpRecipient(to string, p *auth.Principal) (site, profile string, ok bool) {
	local, _, found := strings.Cut(to, "@")
	if !found || local == "" {
		return "", "", false
	}
	site = auth.DefaultSite
	if p.APIKeySite != "" {
		site = p.APIKeySite
	}
	if s, prof, plus := strings.Cut(local, "+"); plus {
		site, local = s, prof
	}
	profile = strings.ToLower(local)
	if storage.CheckIntakeName(profile) != "" || site == "" {
		return "", "", false
	}
	return site, profile, true
}

// Reset implements smtp.Session.
func (ss *smtpSession) Reset() { ss.from, ss.targets = "", nil }

// Logout implements smtp.Session.
func (ss *smtpSession) Logout() error { return nil }

// Data implements smtp.Session: the mail is spooled to a temporary file
// (its size bounded by MaxMessageBytes, answered 552), then each
// recipient's profile takes every attachment: all are written first, then
// committed, and only then is 250 answered.
func (ss *smtpSession) Data(r io.Reader) error {
	if ss.p == nil {
		return errSMTPAuthRequired
	}
	m := ss.m
	f, err := os.CreateTemp(m.cfg.SpoolDir, "quire-smtp-*.eml")
	if err != nil {
		m.s.Log.Error("smtp intake: spool", "err", err)
		return smtpErr(452, smtp.EnhancedCode{4, 3, 1}, "Insufficient system storage, try again later")
	}
	defer func() {
		f.Close()
		os.Remove(f.Name())
	}()
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(f, h), r); err != nil {
		var se *smtp.SMTPError
		if errors.As(err, &se) {
			return se // the size limit: 552
		}
		return smtpErr(451, smtp.EnhancedCode{4, 3, 0}, "Receiving the message failed, try again")
	}
	if err := f.Sync(); err != nil {
		return smtpErr(452, smtp.EnhancedCode{4, 3, 1}, "Insufficient system storage, try again later")
	}
	sum := hex.EncodeToString(h.Sum(nil))
	var pending []*qintake.Pending
	abort := func() {
		for _, pd := range pending {
			pd.Abort()
		}
	}
	for _, t := range ss.targets {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			abort()
			return smtpErr(451, smtp.EnhancedCode{4, 3, 0}, "Temporary failure, try again later")
		}
		pds, err := ss.prepare(t, bufio.NewReader(f), sum)
		pending = append(pending, pds...)
		if err != nil {
			abort()
			return err
		}
	}
	for i, pd := range pending {
		if _, err := pd.Commit(context.Background()); err != nil {
			for _, rest := range pending[i+1:] {
				rest.Abort()
			}
			m.s.Log.Warn("smtp intake: commit failed", "committed", i, "err", err)
			// Temporary: the client sends the mail again, and the
			// journal keeps what was committed from being duplicated.
			return smtpErr(451, smtp.EnhancedCode{4, 3, 0}, "Storing the documents failed, try again later")
		}
	}
	return nil
}

// mailInfo is what a mail's header says.
type mailInfo struct {
	messageID, sender, subject string
	date                       time.Time
}

// prepare writes the attachments of the spooled mail for one target.
func (ss *smtpSession) prepare(t smtpTarget, r io.Reader, sum string) ([]*qintake.Pending, error) {
	in := ss.m.s.Intake
	msg, err := mail.ReadMessage(r)
	if err != nil {
		return nil, smtpErr(550, smtp.EnhancedCode{5, 6, 0}, "The message header cannot be read: "+err.Error())
	}
	info := mailInfo{sender: ss.from, date: ss.m.s.Now().UTC()}
	dec := &mime.WordDecoder{}
	if a, err := mail.ParseAddress(msg.Header.Get("From")); err == nil {
		info.sender = a.Address
	}
	if s, err := dec.DecodeHeader(msg.Header.Get("Subject")); err == nil {
		info.subject = s
	} else {
		info.subject = msg.Header.Get("Subject")
	}
	if d, err := msg.Header.Date(); err == nil {
		info.date = d.UTC()
	}
	info.messageID = strings.TrimSpace(msg.Header.Get("Message-Id"))
	tags := []storage.Tag{{Key: "mailFrom", Value: mailTagValue(info.sender)}, {Key: "mailSubject", Value: mailTagValue(info.subject)},
		{Key: "mailDate", Value: info.date.Format(time.RFC3339)}}
	if info.messageID != "" {
		tags = append(tags, storage.Tag{Key: "mailMessageId", Value: mailTagValue(info.messageID)})
	}
	var pending []*qintake.Pending
	n, parts := 0, 0
	take := func(name, ctype string, body io.Reader) error {
		n++
		if n > ss.m.cfg.MaxAttachments {
			err := fmt.Errorf("the message has more than %d attachments", ss.m.cfg.MaxAttachments)
			ss.fail(t, name, err)
			return smtpErr(550, smtp.EnhancedCode{5, 3, 4}, "Too many attachments: at most "+fmt.Sprint(ss.m.cfg.MaxAttachments)+" per message")
		}
		src := qintake.Source{Kind: qintake.KindSMTP, Name: name, ContentType: ctype, Sender: info.sender, Subject: info.subject,
			Date: info.date, Actor: smtpActor(ss.p), Tags: tags}
		// The journal: one intake per profile, Message-ID (or, without
		// one, the mail's SHA-256) and attachment, whichever node the
		// retry reaches.
		id := info.messageID
		if id == "" {
			id = "sha256:" + sum
		}
		src.Key = fmt.Sprintf("smtp %s %s %d", t.p.Name, id, n)
		pd, err := in.Prepare(context.Background(), t.site, t.p, src, body)
		if err != nil {
			return ss.prepareError(t, name, err)
		}
		pending = append(pending, pd)
		return nil
	}
	err = walkMail(textproto.MIMEHeader(msg.Header), msg.Body, 0, &parts, take)
	if err == nil && n == 0 {
		err = errors.New("the message has no attachment")
		ss.fail(t, "", err)
		in.Count(qintake.KindSMTP, t.p.Name, "failed") // no file reached Prepare
		err = smtpErr(550, smtp.EnhancedCode{5, 6, 0}, "The message has no attachment: scan to e-mail takes each attachment as a document")
	}
	if err != nil {
		var se *smtp.SMTPError
		if !errors.As(err, &se) {
			err = smtpErr(550, smtp.EnhancedCode{5, 6, 0}, "The message cannot be read: "+err.Error())
		}
		return pending, err
	}
	return pending, nil
}

// prepareError answers a failed attachment: the file's own fault is
// permanent (5xx, recorded in the profile's errors), the server's is
// temporary (4xx: the client sends the mail again).
func (ss *smtpSession) prepareError(t smtpTarget, name string, err error) error {
	var tl *qintake.TooLargeError
	var ve *storage.ValidationError
	switch {
	case errors.As(err, &tl):
		ss.fail(t, name, err)
		return smtpErr(552, smtp.EnhancedCode{5, 3, 4}, fmt.Sprintf("Attachment %q is larger than the limit of %d bytes", name, tl.Limit))
	case errors.As(err, &ve):
		ss.fail(t, name, err)
		return smtpErr(550, smtp.EnhancedCode{5, 6, 0}, fmt.Sprintf("Attachment %q refused: %s", name, err.Error()))
	case errors.Is(err, errMIME):
		ss.fail(t, name, err)
		return smtpErr(550, smtp.EnhancedCode{5, 6, 0}, "The message cannot be read: "+err.Error())
	}
	ss.m.s.Log.Warn("smtp intake: attachment failed", "site", t.site, "profile", t.p.Name, "err", err)
	return smtpErr(451, smtp.EnhancedCode{4, 3, 0}, "Storing the attachment failed, try again later")
}

func (ss *smtpSession) fail(t smtpTarget, name string, err error) {
	src := qintake.Source{Kind: qintake.KindSMTP, Name: name}
	if ferr := ss.m.s.Intake.Fail(t.site, t.p.Name, src, err); ferr != nil {
		ss.m.s.Log.Warn("smtp intake: recording an error", "err", ferr)
	}
}

func smtpActor(p *auth.Principal) string {
	if p.APIKeyName != "" {
		return "apiKey " + p.APIKeyName
	}
	return p.Username
}

// mailTagValue makes a header value a tag value: valid UTF-8, no control
// characters, bounded.
func mailTagValue(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "_"))
	for len(s) > storage.MaxValueBytes {
		s = s[:storage.MaxValueBytes]
		for len(s) > 0 && !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
	}
	return s
}

// errMIME marks a broken MIME structure (the client's fault).
var errMIME = errors.New("invalid MIME structure")

// walkMail walks a MIME entity, streaming: every attachment (a part with
// a file name, or with Content-Disposition: attachment) is handed to take,
// decoded; text bodies are skipped.
func walkMail(h textproto.MIMEHeader, body io.Reader, depth int, parts *int, take func(name, ctype string, r io.Reader) error) error {
	*parts++
	if *parts > smtpMaxParts || depth > smtpMaxDepth {
		return fmt.Errorf("%w: more than %d parts or %d levels", errMIME, smtpMaxParts, smtpMaxDepth)
	}
	ct := h.Get("Content-Type")
	if ct == "" {
		ct = "text/plain"
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		mt, params = "application/octet-stream", map[string]string{}
	}
	if strings.HasPrefix(mt, "multipart/") {
		if params["boundary"] == "" {
			return fmt.Errorf("%w: a multipart part without a boundary", errMIME)
		}
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextRawPart()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return fmt.Errorf("%w: %v", errMIME, err)
			}
			if err := walkMail(p.Header, p, depth+1, parts, take); err != nil {
				return err
			}
		}
	}
	disp, dparams, _ := mime.ParseMediaType(h.Get("Content-Disposition"))
	name := dparams["filename"]
	if name == "" {
		name = params["name"]
	}
	if name != "" {
		if d, err := (&mime.WordDecoder{}).DecodeHeader(name); err == nil {
			name = d
		}
	}
	if name == "" && disp != "attachment" {
		return nil // a body: text, or an inline part without a name
	}
	name = path.Base(strings.ReplaceAll(name, "\\", "/"))
	if name == "" || name == "." || name == "/" {
		name = "attachment"
		if exts, _ := mime.ExtensionsByType(mt); len(exts) > 0 {
			name += exts[0]
		}
	}
	name = mailTagValue(name)
	var r io.Reader = body
	switch strings.ToLower(strings.TrimSpace(h.Get("Content-Transfer-Encoding"))) {
	case "base64":
		r = base64.NewDecoder(base64.StdEncoding, &base64Lines{r: body})
	case "quoted-printable":
		r = quotedprintable.NewReader(body)
	}
	return take(name, mt, &mimeErrReader{r: r})
}

// base64Lines drops what a base64 body may hold besides its alphabet
// (line breaks, spaces, which the decoder mostly ignores already).
type base64Lines struct{ r io.Reader }

func (b *base64Lines) Read(p []byte) (int, error) {
	for {
		n, err := b.r.Read(p)
		j := 0
		for _, c := range p[:n] {
			if c != '\r' && c != '\n' && c != ' ' && c != '\t' {
				p[j] = c
				j++
			}
		}
		if j > 0 || err != nil {
			return j, err
		}
	}
}

// mimeErrReader marks a decoding error as the mail's fault.
type mimeErrReader struct{ r io.Reader }

func (m *mimeErrReader) Read(p []byte) (int, error) {
	n, err := m.r.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%w: %v", errMIME, err)
	}
	return n, err
}
