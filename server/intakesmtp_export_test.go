package server

import "net"

// SMTPLoopbackUntrusted makes loopback SMTP clients count as LAN clients
// (no AUTH before STARTTLS) until the returned restore runs.
func SMTPLoopbackUntrusted() (restore func()) {
	old := smtpTrusted
	smtpTrusted = func(net.IP) bool { return false }
	return func() { smtpTrusted = old }
}

// DavLoopbackUntrusted makes loopback WebDAV clients count as LAN clients
// (no plain HTTP) until the returned restore runs.
func DavLoopbackUntrusted() (restore func()) {
	old := davTrusted
	davTrusted = func(net.IP) bool { return false }
	return func() { davTrusted = old }
}
