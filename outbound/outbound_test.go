package outbound

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"testing"
	"time"
)

func TestPolicy_Check(t *testing.T) {
	def := (*Policy)(nil)
	loop, err := New([]string{"127.0.0.0/8"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	strict, err := New([]string{"192.168.7.0/24"}, []string{"0.0.0.0/0", "::/0"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		p       *Policy
		addr    string
		refused bool
	}{
		{"loopback", def, "127.0.0.1", true},
		{"loopback elsewhere in 127/8", def, "127.9.9.9", true},
		{"IPv6 loopback", def, "::1", true},
		{"IPv4-mapped loopback", def, "::ffff:127.0.0.1", true},
		{"metadata", def, "169.254.169.254", true},
		{"IPv6 link-local", def, "fe80::1", true},
		{"unspecified", def, "0.0.0.0", true},
		{"IPv6 unspecified", def, "::", true},
		{"multicast", def, "239.1.2.3", true},
		{"broadcast", def, "255.255.255.255", true},
		{"LAN", def, "192.168.1.20", false},
		{"LAN 10/8", def, "10.1.2.3", false},
		{"IPv6 ULA", def, "fd12::1", false},
		{"public", def, "203.0.113.9", false},
		{"loopback allowed", loop, "127.0.0.1", false},
		{"metadata still refused", loop, "169.254.169.254", true},
		{"strict: listed network", strict, "192.168.7.9", false},
		{"strict: other LAN", strict, "192.168.1.20", true},
		{"strict: public", strict, "203.0.113.9", true},
		{"strict: IPv6", strict, "2001:db8::1", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.Check(netip.MustParseAddr(tc.addr))
			if got := err != nil; got != tc.refused {
				t.Fatalf("Check(%s) = %v, want refused %v", tc.addr, err, tc.refused)
			}
			if err := tc.p.CheckHost(tc.addr); (err != nil) != tc.refused {
				t.Fatalf("CheckHost(%s) = %v, want refused %v", tc.addr, err, tc.refused)
			}
		})
	}
	for _, bad := range []string{"10.0.0.0/33", "not-a-net", ""} {
		if _, err := New([]string{bad}, nil); err == nil {
			t.Errorf("New(%q) accepted", bad)
		}
	}
}

// TestDialer_NameResolvingToLoopback: a name that resolves to loopback
// (answered by a DNS server of the test, as a rebinding attacker's would)
// is refused when dialed, and the listener on loopback sees no
// connection; with loopback allowed the same dial connects.
func TestDialer_NameResolvingToLoopback(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// accepted gets the client address of every connection, in order.
	accepted := make(chan string, 100)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c.RemoteAddr().String()
			c.Close()
		}
	}()
	dns := fakeDNS(t, netip.MustParseAddr("127.0.0.1"))
	port := ln.Addr().(*net.TCPAddr).Port
	allow, _ := New([]string{"127.0.0.0/8"}, nil)
	for _, tc := range []struct {
		name    string
		p       *Policy
		refused bool
	}{
		{"default policy", nil, true},
		{"loopback allowed", allow, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.p.Dialer(5 * time.Second)
			d.Resolver = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
				return net.Dial("udp", dns)
			}}
			c, err := d.DialContext(context.Background(), "tcp4", net.JoinHostPort("rebind.quire.test", strconv.Itoa(port)))
			want := ""
			if c != nil {
				want = c.LocalAddr().String()
				c.Close()
			}
			var refused *RefusedError
			if tc.refused != errors.As(err, &refused) {
				t.Fatalf("dial: %v, want refused %v", err, tc.refused)
			}
			if tc.refused {
				if Reason(err) != refused.Error() {
					t.Fatalf("Reason %q", Reason(err))
				}
				// A plain connection after the refused one: connections are
				// accepted in order, so the refused dial's would come first.
				c, err := net.Dial("tcp", ln.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				want = c.LocalAddr().String()
				c.Close()
			}
			select {
			case got := <-accepted:
				if got != want {
					t.Fatalf("listener accepted %s first, want %s", got, want)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the dial never reached the listener")
			}
		})
	}
}

// fakeDNS answers every A query with addr (and AAAA queries with no
// records) on a loopback UDP port, and returns its address.
func fakeDNS(t *testing.T, addr netip.Addr) string {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			q := buf[:n]
			if n < 12 {
				continue
			}
			// The question ends after the name's labels and 4 bytes of
			// type and class.
			i := 12
			for i < n && q[i] != 0 {
				i += int(q[i]) + 1
			}
			if i+5 > n {
				continue
			}
			qtype := binary.BigEndian.Uint16(q[i+1:])
			resp := append([]byte(nil), q[:i+5]...)
			resp[2] |= 0x84 // response, authoritative
			resp[3] = 0x80  // recursion available, no error
			binary.BigEndian.PutUint16(resp[6:], 0)
			binary.BigEndian.PutUint16(resp[8:], 0)
			binary.BigEndian.PutUint16(resp[10:], 0)
			if qtype == 1 {
				binary.BigEndian.PutUint16(resp[6:], 1)
				a := addr.As4()
				resp = append(resp, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4)
				resp = append(resp, a[:]...)
			}
			pc.WriteTo(resp, from)
		}
	}()
	return pc.LocalAddr().String()
}
