package server

import (
	"crypto/tls"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"

	"quire/server/internal/api"
)

// DefaultMaxConnsPerClient is the default cap of concurrent connections
// from one client address: generous, as a fleet of scanners or a whole
// office may sit behind one NAT address.
const DefaultMaxConnsPerClient = 512

// connTracker wraps the listener. It
//   - lets Shutdown close connections that were accepted but never sent a
//     byte: fasthttp (v1.51) marks a connection active as soon as a worker
//     picks it up, before the first request header arrives, and its
//     Shutdown only closes idle ones, so an HTTP client's spare connection
//     (Go's Transport dials them under concurrency) held Shutdown until its
//     deadline. A connection that has read nothing carries no request, so
//     closing it loses nothing;
//   - caps concurrent connections per client address, closing the excess
//     at accept;
//   - applies the progress deadlines of Timeouts while handlers read and
//     write, and the TLS handshake deadline.
type connTracker struct {
	timeouts api.Timeouts
	maxPer   int // per client address; <= 0: unlimited
	refused  atomic.Uint64

	mu    sync.Mutex
	conns map[*trackedConn]struct{}
	perIP map[string]int
}

func newConnTracker(t api.Timeouts, maxPerClient int) *connTracker {
	return &connTracker{timeouts: t, maxPer: maxPerClient, conns: map[*trackedConn]struct{}{}, perIP: map[string]int{}}
}

type trackedListener struct {
	net.Listener
	t *connTracker
}

func (t *connTracker) wrap(ln net.Listener) net.Listener { return trackedListener{ln, t} }

func (l trackedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := clientIP(c.RemoteAddr())
		l.t.mu.Lock()
		if l.t.maxPer > 0 && l.t.perIP[ip] >= l.t.maxPer {
			l.t.mu.Unlock()
			// Answering 429 would mean reading the request (and, over
			// TLS, a handshake) for a client already holding hundreds of
			// connections: closing is the cheap answer.
			l.t.refused.Add(1)
			c.Close()
			continue
		}
		tc := &trackedConn{Conn: c, t: l.t, ip: ip}
		l.t.conns[tc] = struct{}{}
		l.t.perIP[ip]++
		l.t.mu.Unlock()
		if tl, ok := c.(*tls.Conn); ok {
			return &trackedTLSConn{tc, tl}, nil
		}
		return tc, nil
	}
}

// clientIP is the address connections are counted by.
func clientIP(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	if h, _, err := net.SplitHostPort(a.String()); err == nil {
		return h
	}
	return a.String()
}

type trackedConn struct {
	net.Conn
	t      *connTracker
	ip     string
	used   atomic.Bool
	closed sync.Once
	// body is set while a handler runs: each read then gets a fresh
	// deadline of timeouts.Body, never later than until (when set).
	body  atomic.Bool
	until atomic.Int64 // unix nanos; 0: none
	// readErr records that a read failed (EOF included): the client
	// closed or stalled, so a body that "ended" may be cut short.
	readErr atomic.Bool
}

func (c *trackedConn) Read(p []byte) (int, error) {
	if c.body.Load() {
		d := time.Now().Add(c.t.timeouts.Body)
		if u := c.until.Load(); u != 0 && u < d.UnixNano() {
			d = time.Unix(0, u)
		}
		_ = c.Conn.SetReadDeadline(d)
	}
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.used.Store(true)
	}
	if err != nil {
		c.readErr.Store(true)
	}
	return n, err
}

// Write gives every write its own deadline, so a large download to a
// slow reader keeps going while one that stops reading is closed.
func (c *trackedConn) Write(p []byte) (int, error) {
	_ = c.Conn.SetWriteDeadline(time.Now().Add(c.t.timeouts.Write))
	return c.Conn.Write(p)
}

func (c *trackedConn) Close() error {
	c.closed.Do(func() {
		c.t.mu.Lock()
		delete(c.t.conns, c)
		if c.t.perIP[c.ip]--; c.t.perIP[c.ip] <= 0 {
			delete(c.t.perIP, c.ip)
		}
		c.t.mu.Unlock()
	})
	return c.Conn.Close()
}

// startBody switches reads to progress deadlines while a handler runs;
// endBody hands the deadlines back to fasthttp (idle, then header).
func (c *trackedConn) startBody() { c.until.Store(0); c.body.Store(true) }
func (c *trackedConn) endBody()   { c.body.Store(false); c.until.Store(0) }

// ReadFailed reports whether a read from the connection failed (EOF
// included): a body that ends early was cut off, not complete.
func (c *trackedConn) ReadFailed() bool { return c.readErr.Load() }

// LimitDrain caps reads at the drain timeout: a refused body is read
// and discarded for at most that long (drain, encode.go).
func (c *trackedConn) LimitDrain() { c.limitReads(c.t.timeouts.Drain) }

// limitReads caps the read deadline at d from now, until endBody.
func (c *trackedConn) limitReads(d time.Duration) {
	c.until.Store(time.Now().Add(d).UnixNano())
}

// trackedTLSConn is a tracked TLS connection. It implements fasthttp's
// connTLSer, so fasthttp runs the handshake (under TLSHandshake) and
// reports the request as TLS.
type trackedTLSConn struct {
	*trackedConn
	tls *tls.Conn
}

func (c *trackedTLSConn) Handshake() error {
	_ = c.tls.SetDeadline(time.Now().Add(c.t.timeouts.TLSHandshake))
	err := c.tls.Handshake()
	// fasthttp sets the header read deadline next; writes set their own.
	_ = c.tls.SetDeadline(time.Time{})
	return err
}

func (c *trackedTLSConn) ConnectionState() tls.ConnectionState { return c.tls.ConnectionState() }

// connOf is the tracked connection a request arrived on (nil for requests
// not served from a listener, such as app.Test).
func connOf(c *fiber.Ctx) *trackedConn {
	switch tc := c.Context().Conn().(type) {
	case *trackedConn:
		return tc
	case *trackedTLSConn:
		return tc.trackedConn
	}
	return nil
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
