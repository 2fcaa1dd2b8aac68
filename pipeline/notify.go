package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"quire/pipeline/mailer"
	"quire/storage"
)

// mailConfig resolves a site's mail server and sender: the site's
// notification settings first, then the server's.
func (p *Pipeline) mailConfig(site string) (mailer.Config, error) {
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
	m := mailer.Message{From: cfg.From, Cc: splitAddrs(j.Param("notificationToCc")), Bcc: splitAddrs(j.Param("notificationToBcc")),
		Subject: j.Param("notificationSubject"), Text: j.Param("notificationText"), HTML: j.Param("notificationHtml")}
	if err := mailer.Send(ctx, cfg, m); err != nil {
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
	return mailer.Send(ctx, cfg, mailer.Message{From: cfg.From, To: []string{to}, Subject: "Quire test notification",
		Text: "This is a test notification from Quire for site " + site + ". Notifications of this site are delivered."})
}

// SendSiteMail sends one mail through a site's mail settings (the
// server's when the site has none): e-signature links, reminders.
func (p *Pipeline) SendSiteMail(ctx context.Context, site, to, subject, text string) error {
	cfg, err := p.mailConfig(site)
	if err != nil {
		return err
	}
	return mailer.Send(ctx, cfg, mailer.Message{From: cfg.From, To: []string{to}, Subject: subject, Text: text})
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
	return mailer.Send(ctx, cfg, mailer.Message{From: cfg.From, To: []string{to}, Subject: subject, Text: text})
}
