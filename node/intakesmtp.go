package node

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"

	"quire/guard"
	"quire/server"
)

// IntakeSMTPConfig configures scan to e-mail (config's [intake_smtp]).
type IntakeSMTPConfig struct {
	// Listen is the SMTP listener's address (empty: off).
	Listen string
	// Domain is the greeting's name (default: the machine's name).
	Domain string
	// MaxMessageBytes and MaxAttachments bound one mail (0: defaults).
	MaxMessageBytes int64
	MaxAttachments  int
	// CertFile and KeyFile are STARTTLS's certificate (empty: the
	// server's TLS settings, when set; else no STARTTLS).
	CertFile, KeyFile string
	// TLS, when set, is STARTTLS's configuration itself (tests).
	TLS *tls.Config
}

// startSMTP starts the scan-to-e-mail listener, when configured. Every
// node of a cluster listens: a follower's intake forwards through the
// log (server/intakesmtp.go).
func (n *Node) startSMTP() error {
	c := n.cfg.IntakeSMTP
	if c.Listen == "" {
		return nil
	}
	var tc *tls.Config
	switch {
	case c.TLS != nil:
		tc = c.TLS
	case c.CertFile != "":
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return fmt.Errorf("intake_smtp: %w", err)
		}
		tc = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	case n.cfg.TLS.Enabled():
		var err error
		if tc, _, err = loadTLS(n.cfg.TLS, n.cfg.DataDir, n.ln.Addr().String()); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return fmt.Errorf("intake_smtp listener %s: %w", c.Listen, err)
	}
	n.smtp = n.Server.NewSMTPIntake(server.SMTPConfig{Domain: c.Domain, MaxMessageBytes: c.MaxMessageBytes,
		MaxAttachments: c.MaxAttachments, TLS: tc})
	n.smtpLn = ln
	n.cfg.Logger.Info("serving scan to e-mail (SMTP)", "listen", ln.Addr().String(), "starttls", tc != nil)
	go guard.Run(n.cfg.Logger, guard.HTTP, func() error {
		if err := n.smtp.Serve(ln); err != nil && !errors.Is(err, net.ErrClosed) {
			n.cfg.Logger.Error("smtp intake listener stopped", "err", err)
		}
		return nil
	})
	return nil
}

// SMTPAddr is the scan-to-e-mail listener's address ("" without one).
func (n *Node) SMTPAddr() string {
	if n.smtpLn == nil {
		return ""
	}
	return n.smtpLn.Addr().String()
}
