package server

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// connTracker wraps the listener so Shutdown can close connections that
// were accepted but never sent a byte.
//
// fasthttp (v1.51) marks a connection active as soon as a worker picks it
// up, before the first request header arrives, and its Shutdown only closes
// idle connections. An HTTP client that dialled a spare connection and never
// used it (Go's Transport does this under concurrency) therefore held
// Shutdown until its deadline. A connection that has read nothing carries no
// request, so closing it loses nothing.
type connTracker struct {
	mu    sync.Mutex
	conns map[*trackedConn]struct{}
}

func newConnTracker() *connTracker {
	return &connTracker{conns: map[*trackedConn]struct{}{}}
}

type trackedListener struct {
	net.Listener
	t *connTracker
}

func (t *connTracker) wrap(ln net.Listener) net.Listener { return trackedListener{ln, t} }

func (l trackedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, t: l.t}
	l.t.mu.Lock()
	l.t.conns[tc] = struct{}{}
	l.t.mu.Unlock()
	return tc, nil
}

type trackedConn struct {
	net.Conn
	t      *connTracker
	used   atomic.Bool
	closed sync.Once
}

func (c *trackedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.used.Store(true)
	}
	return n, err
}

func (c *trackedConn) Close() error {
	c.closed.Do(func() {
		c.t.mu.Lock()
		delete(c.t.conns, c)
		c.t.mu.Unlock()
	})
	return c.Conn.Close()
}

// closeUnused closes every connection that has not read a byte.
func (t *connTracker) closeUnused() {
	t.mu.Lock()
	var unused []*trackedConn
	for c := range t.conns {
		if !c.used.Load() {
			unused = append(unused, c)
		}
	}
	t.mu.Unlock()
	for _, c := range unused {
		c.Close()
	}
}

// closeUnusedUntil closes unused connections every 50 ms until done is
// closed (connections accepted just before the listener closed included).
func (t *connTracker) closeUnusedUntil(done <-chan struct{}) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		t.closeUnused()
		select {
		case <-done:
			return
		case <-tick.C:
		}
	}
}
