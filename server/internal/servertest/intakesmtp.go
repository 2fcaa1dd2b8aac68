package servertest

import (
	"testing"

	"quire/node"
	"quire/quiretest"
)

// SmtpServer starts a node with the scan-to-e-mail listener on loopback.
func SmtpServer(t *testing.T, set func(c *node.IntakeSMTPConfig), opts ...quiretest.Option) *quiretest.Server {
	t.Helper()
	opts = append(opts, func(c *quiretest.Config) {
		c.IntakeSMTP.Listen = "127.0.0.1:0"
		c.IntakeSMTP.Domain = "scans.test"
		if set != nil {
			set(&c.IntakeSMTP)
		}
	})
	s := quiretest.NewServer(t, opts...)
	if s.Node.SMTPAddr() == "" {
		t.Fatal("no SMTP listener")
	}
	return s
}
