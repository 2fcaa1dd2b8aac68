package server

import "net"

// SMTPLoopbackUntrusted makes loopback SMTP clients count as LAN clients
// (no AUTH before STARTTLS) until the returned restore runs.
func SMTPLoopbackUntrusted() (restore func()) {
	old := smtpTrusted
	smtpTrusted = func(net.IP) bool { return false }
	return func() { smtpTrusted = old }
}
