package cluster

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/hashicorp/raft"
)

// DialFunc opens a connection to a peer's Raft address.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// streamLayer carries Raft's RPCs: connections accepted by a listener and
// dialled with dial. It is the seam for mutual TLS: wrap the listener
// with tls.NewListener and dial with a tls.Dialer's DialContext, and
// nothing else changes (see DESIGN.md).
type streamLayer struct {
	net.Listener
	advertise net.Addr
	dial      DialFunc
}

// NewStreamLayer returns Raft's stream layer over ln. advertise is the
// address peers reach this node at (nil: ln's address); dial opens
// connections to peers (nil: plain TCP).
func NewStreamLayer(ln net.Listener, advertise net.Addr, dial DialFunc) (raft.StreamLayer, error) {
	if advertise == nil {
		advertise = ln.Addr()
	}
	if ta, ok := advertise.(*net.TCPAddr); ok && (ta.IP == nil || ta.IP.IsUnspecified()) {
		return nil, errors.New("cluster: the Raft address to advertise is unspecified (set an advertise address)")
	}
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	return &streamLayer{Listener: ln, advertise: advertise, dial: dial}, nil
}

// Addr is the advertised address.
func (s *streamLayer) Addr() net.Addr { return s.advertise }

// Dial connects to a peer.
func (s *streamLayer) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return s.dial(ctx, "tcp", string(addr))
}
