package node

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"slices"

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

// smtpTLS prepares STARTTLS for the scan-to-e-mail listener, when one is
// configured, before the server is built (GET /system/health shows its
// certificate): n.smtpTLS and n.smtpLeaf.
func (n *Node) smtpTLS() error {
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
	default:
		// No certificate anywhere: a scanner on the LAN may only sign in
		// after STARTTLS, so without one it could never send. The
		// server's self-signed certificate (<data>/tls, as tls.self_signed
		// makes it) covers this machine's names and the listen address;
		// scanners do not check it, and its fingerprint is in the log, in
		// quire doctor and on the console's health page for those that pin.
		var (
			fp  string
			err error
		)
		if tc, fp, err = loadTLS(TLSConfig{SelfSigned: true, Hosts: smtpCertHosts(c, n.cfg.TLS.Hosts)}, n.cfg.DataDir, c.Listen); err != nil {
			return fmt.Errorf("intake_smtp: %w", err)
		}
		n.cfg.Logger.Info("scan to e-mail: STARTTLS with the self-signed certificate in the data dir (set intake_smtp.cert_file for one of your own)",
			"cert", SelfSignedCertFile(n.cfg.DataDir), "sha256", fp)
	}
	n.smtpTLSConf = tc
	if tc != nil && len(tc.Certificates) > 0 && len(tc.Certificates[0].Certificate) > 0 {
		if leaf, err := x509.ParseCertificate(tc.Certificates[0].Certificate[0]); err == nil {
			n.smtpLeaf = leaf
		}
	}
	return nil
}

// startSMTP starts the scan-to-e-mail listener, when configured (smtpTLS
// prepared its STARTTLS). Every node of a cluster listens: a follower's
// intake forwards through the log (server/intake/intakesmtp.go).
func (n *Node) startSMTP() error {
	c := n.cfg.IntakeSMTP
	if c.Listen == "" {
		return nil
	}
	tc := n.smtpTLSConf
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

// smtpCertHosts are the extra names of the self-signed certificate the
// SMTP listener uses: the greeting's domain and the configured TLS hosts.
func smtpCertHosts(c IntakeSMTPConfig, hosts []string) []string {
	if c.Domain != "" {
		hosts = append(slices.Clone(hosts), c.Domain)
	}
	return hosts
}

// SMTPAddr is the scan-to-e-mail listener's address ("" without one).
func (n *Node) SMTPAddr() string {
	if n.smtpLn == nil {
		return ""
	}
	return n.smtpLn.Addr().String()
}
