package server

import (
	"errors"
	"io"
	"net"
	"sync"
)

// backups tracks running online backups: Shutdown stops them (the client
// sees an archive without its end frame, which restore refuses) and waits
// for them before the store closes.
type backups struct {
	mu    sync.Mutex
	stop  chan struct{}
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

func newBackups() *backups { return &backups{stop: make(chan struct{}), conns: map[net.Conn]bool{}} }

// begin registers a backup sent over conn; false once shutdown began.
func (b *backups) begin(conn net.Conn) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-b.stop:
		return false
	default:
	}
	b.conns[conn] = true
	b.wg.Add(1)
	return true
}

func (b *backups) done(conn net.Conn) {
	b.mu.Lock()
	delete(b.conns, conn)
	b.mu.Unlock()
	b.wg.Done()
}

// close stops running backups and waits for them. Their connections are
// closed too: a backup blocked writing to a client that stopped reading
// would otherwise hold shutdown forever.
func (b *backups) close() {
	b.mu.Lock()
	select {
	case <-b.stop:
	default:
		close(b.stop)
	}
	for c := range b.conns {
		c.Close()
	}
	b.mu.Unlock()
	b.wg.Wait()
}

var errShuttingDown = errors.New("server is shutting down")

// stopWriter fails writes once shutdown began.
type stopWriter struct {
	w    io.Writer
	stop <-chan struct{}
}

func (s stopWriter) Write(p []byte) (int, error) {
	select {
	case <-s.stop:
		return 0, errShuttingDown
	default:
	}
	return s.w.Write(p)
}
