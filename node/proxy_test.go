package node_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"quire/cluster"
	"quire/node"
	"quire/quiretest"
)

// cutMode is what a cut link does with a new connection.
type cutMode int

const (
	linkOpen cutMode = iota
	// linkBlackhole accepts the connection, reads and drops what arrives
	// and never answers (a cable pulled: the sender waits for timeouts).
	linkBlackhole
	// linkRefuse closes the proxy's listener: a connection is refused
	// (a peer that is down).
	linkRefuse
)

// proxy is a loopback TCP proxy the test controls: it listens on
// 127.0.0.1:0 and forwards every connection to target until it is cut.
// Dial (not net.Dial) connects through it: a dial succeeds only once
// the proxy reached target (it sends one byte first, which Dial reads),
// so a dead target is refused and a blackholed link times out at
// connect time, as over a real network.
type proxy struct {
	addr, target string

	mu    sync.Mutex
	ln    net.Listener // nil while refusing
	mode  cutMode
	gen   int // bumped by every Cut and Heal
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

func newProxy(target string, mode cutMode) (*proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &proxy{addr: ln.Addr().String(), target: target, ln: ln, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.acceptLoop(ln)
	if mode != linkOpen {
		p.set(mode)
	}
	return p, nil
}

// Addr is the address to dial instead of target.
func (p *proxy) Addr() string { return p.addr }

// Cut drops every open connection; new ones are blackholed or refused.
func (p *proxy) Cut(mode cutMode) { p.set(mode) }

// Heal drops the blackholed connections (their peers see them break and
// dial again) and forwards new connections.
func (p *proxy) Heal() { p.set(linkOpen) }

func (p *proxy) set(mode cutMode) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mode = mode
	p.gen++
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
	switch {
	case mode == linkRefuse && p.ln != nil:
		p.ln.Close()
		p.ln = nil
	case mode != linkRefuse && p.ln == nil:
		// The same port again (Go sets SO_REUSEADDR); peers know it.
		ln, err := net.Listen("tcp", p.addr)
		if err != nil {
			panic(fmt.Sprintf("proxy: listen again on %s: %v", p.addr, err))
		}
		p.ln = ln
		p.wg.Add(1)
		go p.acceptLoop(ln)
	}
}

// Close stops the proxy and drops its connections.
func (p *proxy) Close() {
	p.set(linkRefuse)
	p.wg.Wait()
}

func (p *proxy) acceptLoop(ln net.Listener) {
	defer p.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.serve(c)
		}()
	}
}

// Dial connects to target through the proxy: a connection whose far
// end is target, or an error of Op "dial" (refused, or ctx ended).
func (p *proxy) Dial(ctx context.Context, network string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, p.addr)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { c.SetReadDeadline(time.Now()) })
	var b [1]byte
	_, err = io.ReadFull(c, b[:])
	if !stop() || err != nil {
		c.Close()
		if ctx.Err() != nil {
			err = ctx.Err()
		} else {
			err = syscall.ECONNREFUSED
		}
		return nil, &net.OpError{Op: "dial", Net: network, Addr: c.RemoteAddr(), Err: err}
	}
	return c, nil
}

// track registers conns as belonging to generation gen; false (and the
// conns closed) when a Cut or Heal came in between.
func (p *proxy) track(gen int, conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gen != gen {
		for _, c := range conns {
			c.Close()
		}
		return false
	}
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *proxy) serve(c net.Conn) {
	p.mu.Lock()
	mode, gen := p.mode, p.gen
	p.mu.Unlock()
	switch mode {
	case linkRefuse: // accepted just before the listener closed
		c.Close()
	case linkBlackhole:
		if p.track(gen, c) {
			io.Copy(io.Discard, c) // until the proxy drops it
		}
	default:
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close() // Dial reports the refusal
			return
		}
		if !p.track(gen, c, up) {
			return
		}
		if _, err := c.Write([]byte{1}); err != nil {
			c.Close()
			up.Close()
			return
		}
		done := make(chan struct{}, 2)
		pipe := func(dst, src net.Conn) {
			io.Copy(dst, src)
			done <- struct{}{}
		}
		go pipe(up, c)
		go pipe(c, up)
		<-done
		c.Close()
		up.Close()
		<-done
	}
}

// fabric routes every node's connections to its peers' cluster ports
// (Raft and write forwarding) through one proxy per ordered pair, so a
// test cuts any link: a node dials a peer's advertised Raft address, and
// its dial function (cluster.Config.Dial) connects to the proxy for that
// pair instead. Proxies are made on first use.
type fabric struct {
	t *testing.T

	mu      sync.Mutex
	owner   map[string]string // a node's real Raft address → its id
	proxies map[[2]string]*proxy
	modes   map[[2]string]cutMode
}

func newFabric(t *testing.T) *fabric {
	f := &fabric{t: t, owner: map[string]string{}, proxies: map[[2]string]*proxy{}, modes: map[[2]string]cutMode{}}
	t.Cleanup(func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, p := range f.proxies {
			p.Close()
		}
	})
	return f
}

// register names the node listening on the Raft address addr; a node
// dials only registered peers.
func (f *fabric) register(id, addr string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.owner[addr] = id
}

func (f *fabric) proxyFor(from, addr string) (*proxy, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	to, ok := f.owner[addr]
	if !ok {
		return nil, fmt.Errorf("fabric: no node registered at %s", addr)
	}
	k := [2]string{from, to}
	if p := f.proxies[k]; p != nil {
		return p, nil
	}
	p, err := newProxy(addr, f.modes[k])
	if err != nil {
		return nil, err
	}
	f.proxies[k] = p
	return p, nil
}

// dialer is node from's dial function.
func (f *fabric) dialer(from string) cluster.DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		p, err := f.proxyFor(from, addr)
		if err != nil {
			return nil, err
		}
		return p.Dial(ctx, network)
	}
}

// setLink sets the link from → to (one direction).
func (f *fabric) setLink(from, to string, mode cutMode) {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := [2]string{from, to}
	f.modes[k] = mode
	if p := f.proxies[k]; p != nil {
		if mode == linkOpen {
			p.Heal()
		} else {
			p.Cut(mode)
		}
	}
}

// isolate cuts every link to and from node id.
func (f *fabric) isolate(id string, mode cutMode) {
	for _, other := range f.ids() {
		if other != id {
			f.setLink(id, other, mode)
			f.setLink(other, id, mode)
		}
	}
}

// healAll opens every link.
func (f *fabric) healAll() {
	ids := f.ids()
	for _, a := range ids {
		for _, b := range ids {
			if a != b {
				f.setLink(a, b, linkOpen)
			}
		}
	}
}

func (f *fabric) ids() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ids []string
	for _, id := range f.owner {
		ids = append(ids, id)
	}
	return ids
}

// viaFabric makes a quiretest server a cluster member whose peer
// connections go through f.
func viaFabric(f *fabric, id string, bootstrap bool) quiretest.Option {
	return func(c *quiretest.Config) {
		c.Cluster = node.ClusterConfig{NodeID: id, RaftListen: "127.0.0.1:0", Bootstrap: bootstrap,
			Tune: func(cc *cluster.Config) { cc.Dial = f.dialer(id) }}
	}
}

// viaFabricAt is viaFabric for a member restarting on its Raft address.
func viaFabricAt(f *fabric, id, raftAddr string) quiretest.Option {
	return func(c *quiretest.Config) {
		c.Cluster = node.ClusterConfig{NodeID: id, RaftListen: raftAddr,
			Tune: func(cc *cluster.Config) { cc.Dial = f.dialer(id) }}
	}
}

// startFabricCluster starts three nodes whose cluster traffic crosses
// f (formCluster: n1 bootstraps, n2 and n3 join).
func startFabricCluster(t *testing.T, f *fabric) []*quiretest.Server {
	t.Helper()
	return formCluster(t, []string{"n1", "n2", "n3"}, func(id string, bootstrap bool) []quiretest.Option {
		return []quiretest.Option{viaFabric(f, id, bootstrap)}
	}, func(id string, s *quiretest.Server) { f.register(id, s.Node.Cluster.Addr()) })
}

// TestProxy_CutAndHeal checks the proxy itself: forwarding, a blackholed
// and a refused link, existing connections dropped, healing.
func TestProxy_CutAndHeal(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	p, err := newProxy(echo.Addr().String(), linkOpen)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	roundTrip := func(c net.Conn) error {
		c.SetDeadline(time.Now().Add(300 * time.Millisecond))
		if _, err := c.Write([]byte("ping")); err != nil {
			return err
		}
		b := make([]byte, 4)
		if _, err := io.ReadFull(c, b); err != nil {
			return err
		}
		if string(b) != "ping" {
			return fmt.Errorf("echo %q", b)
		}
		return nil
	}
	dial := func() (net.Conn, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		c, err := p.Dial(ctx, "tcp")
		if err == nil {
			t.Cleanup(func() { c.Close() })
		}
		return c, err
	}
	open, err := dial()
	if err != nil {
		t.Fatal(err)
	}
	if err := roundTrip(open); err != nil {
		t.Fatalf("open link: %v", err)
	}
	p.Cut(linkBlackhole)
	if err := roundTrip(open); err == nil {
		t.Fatal("a connection open before the cut still works")
	}
	if _, err := dial(); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a dial over a blackholed link should time out, got %v", err)
	}
	p.Cut(linkRefuse)
	if _, err := dial(); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("a dial over a refused link: %v", err)
	}
	p.Heal()
	healed, err := dial()
	if err != nil {
		t.Fatalf("healed link: %v", err)
	}
	if err := roundTrip(healed); err != nil {
		t.Fatalf("healed link: %v", err)
	}
	// A target that is down is refused through an open link.
	echo.Close()
	if _, err := dial(); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("a dial to a closed target: %v", err)
	}
}
