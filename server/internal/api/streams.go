package api

import (
	"errors"
	"io"
	"net"
	"sync"
)

// Backups tracks running online backups: Shutdown stops them (the client
// sees an archive without its end frame, which restore refuses) and waits
// for them before the store closes.
type Backups struct {
	mu    sync.Mutex
	Stop  chan struct{}
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

func NewBackups() *Backups { return &Backups{Stop: make(chan struct{}), conns: map[net.Conn]bool{}} }

// Begin registers a backup sent over conn; false once shutdown began.
func (b *Backups) Begin(conn net.Conn) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-b.Stop:
		return false
	default:
	}
	b.conns[conn] = true
	b.wg.Add(1)
	return true
}

func (b *Backups) Done(conn net.Conn) {
	b.mu.Lock()
	delete(b.conns, conn)
	b.mu.Unlock()
	b.wg.Done()
}

// Shutdown stops running backups and waits for them. Their connections are
// closed too: a backup blocked writing to a client that stopped reading
// would otherwise hold shutdown forever.
func (b *Backups) Shutdown() {
	b.mu.Lock()
	select {
	case <-b.Stop:
	default:
		close(b.Stop)
	}
	for c := range b.conns {
		c.Close()
	}
	b.mu.Unlock()
	b.wg.Wait()
}

var ErrShuttingDown = errors.New("server is shutting down")

// StopWriter fails writes once shutdown began.
type StopWriter struct {
	W    io.Writer
	Stop <-chan struct{}
}

func (s StopWriter) Write(p []byte) (int, error) {
	select {
	case <-s.Stop:
		return 0, ErrShuttingDown
	default:
	}
	return s.W.Write(p)
}
