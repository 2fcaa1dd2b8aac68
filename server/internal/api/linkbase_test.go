package api

import (
	"net"
	"os"
	"strings"
	"testing"
)

// TestLinkHosts_Wildcard: a listener on every address takes a Host that
// names this machine (its host name, tls.hosts, localhost, any of its
// addresses) on the listener's port, and nothing else.
func TestLinkHosts_Wildcard(t *testing.T) {
	h := NewLinkHosts("https://10.0.0.1:8443", true, "[::]:8443", []string{"Quire.Office.LAN."})
	if h == nil || h.scheme != "https://" {
		t.Fatalf("linkHosts %+v", h)
	}
	hn, _ := os.Hostname()
	var lan string
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() {
			lan = n.IP.String()
			break
		}
	}
	tests := []struct {
		host string
		want bool
	}{
		{"localhost:8443", true},
		{"127.0.0.1:8443", true},
		{"[::1]:8443", true},
		{strings.ToUpper(hn) + ":8443", hn != ""},
		{"quire.office.lan:8443", true},
		{"quire.office.lan.:8443", true},
		{"quire.office.lan:8080", false},
		{"quire.office.lan", false}, // 443 is not the listener's port
		{"attacker.example:8443", false},
		{"8.8.8.8:8443", false},
		{"", false},
		{strings.Repeat("a", 400) + ":8443", false},
	}
	if lan != "" {
		tests = append(tests, struct {
			host string
			want bool
		}{net.JoinHostPort(lan, "8443"), true})
	}
	for _, tt := range tests {
		if got := h.accepts(tt.host); got != tt.want {
			t.Errorf("accepts(%q) = %v, want %v", tt.host, got, tt.want)
		}
	}
	if NewLinkHosts("https://quire.office.lan", false, "", nil) != nil {
		t.Error("a configured public URL must make every link start with it")
	}
}
