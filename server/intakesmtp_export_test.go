package server

// SMTPLoopbackUntrusted makes loopback SMTP clients count as LAN clients
// (no AUTH before STARTTLS) until the returned restore runs.
func SMTPLoopbackUntrusted() (restore func()) {
	smtpLoopbackUntrusted.Store(true)
	return func() { smtpLoopbackUntrusted.Store(false) }
}

// DavLoopbackUntrusted makes loopback WebDAV clients count as LAN clients
// (no plain HTTP) until the returned restore runs.
func DavLoopbackUntrusted() (restore func()) {
	davLoopbackUntrusted.Store(true)
	return func() { davLoopbackUntrusted.Store(false) }
}
