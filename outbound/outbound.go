// Package outbound is the one policy for network calls to destinations
// that users choose rather than the operator: a WEBHOOK action's url
// (anyone with WRITE), a site's SMTP host and LLM url (a site governor).
// Without it such a user could make the server call its own loopback
// services, a cloud metadata endpoint (169.254.169.254) or anything else
// only the server can reach, and read the answer back.
//
// Loopback, link-local, unspecified, multicast and reserved addresses are
// refused unless the operator allows their network (outbound.allow);
// everything else, the LAN included, is allowed unless the operator
// denies it (outbound.deny). On-premises the LAN is where webhook
// receivers and mail relays live, so private ranges are allowed by
// default; an operator who wants users kept off the LAN denies it, and
// an operator who wants an allow list denies 0.0.0.0/0 and ::/0 and
// allows the receivers' networks. Allow wins over deny.
//
// Destinations the operator configures in the config file (the server's
// LLM endpoint, event buses, the SMTP relay, clamd) are trusted as given
// and do not go through the policy.
//
// The check happens where the connection is made: the dialer's Control
// function sees the address actually connected to, after resolution, so
// a name that resolves to an allowed address when validated and to
// loopback when dialed (DNS rebinding) is still refused. Proxies from the
// environment are not used for these calls: through a proxy the check
// would see the proxy's address, not the destination's.
package outbound

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"
)

// refusedByDefault are the networks no user-chosen destination may reach
// unless the operator allows them.
var refusedByDefault = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),         // unspecified, "this network"
	netip.MustParsePrefix("127.0.0.0/8"),       // loopback
	netip.MustParsePrefix("169.254.0.0/16"),    // link-local, cloud metadata
	netip.MustParsePrefix("224.0.0.0/4"),       // multicast
	netip.MustParsePrefix("240.0.0.0/4"),       // reserved, broadcast
	netip.MustParsePrefix("::/128"),            // unspecified
	netip.MustParsePrefix("::1/128"),           // loopback
	netip.MustParsePrefix("fe80::/10"),         // link-local
	netip.MustParsePrefix("ff00::/8"),          // multicast
	netip.MustParsePrefix("fd00:ec2::254/128"), // AWS metadata over IPv6
}

// Policy decides which addresses user-chosen destinations may have. The
// nil Policy is the default one: nothing allowed or denied beyond the
// defaults.
type Policy struct {
	allow, deny []netip.Prefix
}

// New builds a policy from the operator's allowed and denied networks
// (CIDR such as "10.0.0.0/8", or single addresses).
func New(allow, deny []string) (*Policy, error) {
	p := &Policy{}
	var err error
	if p.allow, err = parsePrefixes(allow); err != nil {
		return nil, err
	}
	if p.deny, err = parsePrefixes(deny); err != nil {
		return nil, err
	}
	return p, nil
}

func parsePrefixes(ss []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range ss {
		s = strings.TrimSpace(s)
		if pr, err := netip.ParsePrefix(s); err == nil {
			out = append(out, pr.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("want a network such as 10.0.0.0/8 or an address, got %q", s)
		}
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// RefusedError is a destination the policy does not allow.
type RefusedError struct{ Addr netip.Addr }

func (e *RefusedError) Error() string {
	return fmt.Sprintf("destination %s is not allowed by the server's outbound policy (the operator can allow its network with outbound.allow)", e.Addr)
}

// Check returns a *RefusedError when a may not be reached.
func (p *Policy) Check(a netip.Addr) error {
	a = a.Unmap().WithZone("")
	if p != nil {
		for _, pr := range p.allow {
			if pr.Contains(a) {
				return nil
			}
		}
		for _, pr := range p.deny {
			if pr.Contains(a) {
				return &RefusedError{a}
			}
		}
	}
	for _, pr := range refusedByDefault {
		if pr.Contains(a) {
			return &RefusedError{a}
		}
	}
	return nil
}

// CheckHost checks a literal address, so that a request naming one the
// policy refuses is answered when it is made rather than when its action
// runs. Names are checked when dialed, at the address they resolve to
// then.
func (p *Policy) CheckHost(host string) error {
	host = strings.Trim(host, "[]")
	if i := strings.IndexByte(host, '%'); i >= 0 {
		host = host[:i]
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return p.Check(a)
	}
	return nil
}

// CheckURL checks the host of an http(s) URL as CheckHost does.
func (p *Policy) CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	return p.CheckHost(u.Hostname())
}

// control refuses a connection to an address the policy does not allow;
// it runs for every address the dialer tries, after name resolution.
func (p *Policy) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("outbound: unexpected address %q", address)
	}
	return p.Check(ap.Addr())
}

// Dialer returns a dialer that connects only to allowed addresses.
func (p *Policy) Dialer(timeout time.Duration) *net.Dialer {
	return &net.Dialer{Timeout: timeout, Control: p.control}
}

// Client returns an HTTP client for user-chosen URLs: it connects only
// to allowed addresses, uses no proxy and follows no redirect (a
// receiver that moved is reconfigured, not chased). timeout 0 leaves the
// caller's context to bound a call.
func (p *Policy) Client(timeout time.Duration) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.DialContext = p.Dialer(30 * time.Second).DialContext
	return &http.Client{
		Timeout:       timeout,
		Transport:     t,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Reason is a short description of a failed call that carries nothing
// the remote end sent: Go's errors quote what a server that does not
// speak the protocol answered ("malformed HTTP response \"SSH-2.0...\""),
// which would let a user read a banner of a service only the server can
// reach.
func Reason(err error) string {
	var refused *RefusedError
	var dns *net.DNSError
	var op *net.OpError
	var cert *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var rec tls.RecordHeaderError
	switch {
	case errors.As(err, &refused):
		return refused.Error()
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return "timed out"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.As(err, &dns):
		return "host not found: " + dns.Name
	case errors.As(err, &cert), errors.As(err, &unknownAuth), errors.As(err, &hostname):
		return "TLS certificate not trusted"
	case errors.As(err, &rec):
		return "not a TLS server"
	case errors.As(err, &op) && op.Op == "dial":
		var errno syscall.Errno
		if errors.As(err, &errno) {
			return "cannot connect: " + errno.Error()
		}
		return "cannot connect"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "connection reset"
	}
	return "no valid answer"
}

// Status describes an HTTP status by its code: the reason phrase of a
// response's status line is the remote end's text.
func Status(code int) string {
	return strings.TrimSpace(fmt.Sprintf("%d %s", code, http.StatusText(code)))
}
