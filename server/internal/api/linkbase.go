package api

import (
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
)

// linkHosts decides which Host headers may become the base of the links
// an answer hands out (upload, download, archive and short links) when no
// public URL is configured: only names and addresses of this machine on
// the listener's port, so a forged Host cannot send a client's upload
// elsewhere. A Host it refuses gives way to the address the client
// connected to, which that client can always reach.
type linkHosts struct {
	scheme string // "http://" or "https://"
	port   string // the listener's port
	ip     net.IP // the listener's address; nil or unspecified: every address
	names  []string

	mu      sync.Mutex
	addrs   []net.IP // this machine's addresses, for a wildcard listener
	addrsAt time.Time
}

// NewLinkHosts is nil when the public URL was configured (links always
// start with it): fromHost is Deps.LinksFromHost, listenAddr the API
// listener's address, hostNames more names of this machine.
func NewLinkHosts(publicURL string, fromHost bool, listenAddr string, hostNames []string) *linkHosts {
	if !fromHost {
		return nil
	}
	h := &linkHosts{scheme: "http://"}
	if strings.HasPrefix(publicURL, "https://") {
		h.scheme = "https://"
	}
	host, port, err := net.SplitHostPort(listenAddr)
	if err != nil {
		return nil
	}
	h.port, h.ip = port, net.ParseIP(host)
	h.names = append(h.names, "localhost")
	if hn, err := os.Hostname(); err == nil && hn != "" {
		hn = strings.ToLower(hn)
		h.names = append(h.names, hn)
		if short, _, ok := strings.Cut(hn, "."); ok {
			h.names = append(h.names, short)
		}
	}
	for _, n := range hostNames {
		h.names = append(h.names, strings.ToLower(strings.TrimSuffix(n, ".")))
	}
	return h
}

// LinkBase is the base URL of the links in the answer to c.
func (s *Env) LinkBase(c *fiber.Ctx) string {
	h := s.Links
	if h == nil {
		return s.Deps.PublicURL
	}
	if host := string(c.Request().Host()); h.accepts(host) {
		return h.scheme + strings.ToLower(host)
	}
	return h.scheme + c.Context().LocalAddr().String()
}

// accepts reports whether host (a Host header) names this machine on the
// listener's port.
func (h *linkHosts) accepts(host string) bool {
	if host == "" || len(host) > 300 {
		return false
	}
	name, port, err := net.SplitHostPort(host)
	if err != nil {
		// No port: the scheme's default, which must be the listener's.
		name, port = host, map[string]string{"http://": "80", "https://": "443"}[h.scheme]
		if strings.HasPrefix(name, "[") && strings.HasSuffix(name, "]") {
			name = name[1 : len(name)-1]
		}
	}
	if port != h.port {
		return false
	}
	wildcard := h.ip == nil || h.ip.IsUnspecified()
	if ip := net.ParseIP(name); ip != nil {
		if !wildcard {
			return ip.Equal(h.ip)
		}
		return ip.IsLoopback() || slices.ContainsFunc(h.machineAddrs(), ip.Equal)
	}
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	if !wildcard && !h.ip.IsLoopback() && name == "localhost" {
		return false
	}
	return slices.Contains(h.names, name)
}

// machineAddrs are this machine's interface addresses, looked up at most
// every 30 s (a DHCP lease may change them).
func (h *linkHosts) machineAddrs() []net.IP {
	h.mu.Lock()
	defer h.mu.Unlock()
	if time.Since(h.addrsAt) < 30*time.Second {
		return h.addrs
	}
	var ips []net.IP // a new slice: callers may still read the old one
	addrs, err := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			ips = append(ips, n.IP)
		}
	}
	if err == nil {
		h.addrs = ips
	}
	h.addrsAt = time.Now()
	return h.addrs
}
