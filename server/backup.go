package server

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"quire/backup"
	"quire/guard"
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

// handleGetBackup serves GET /system/backup (admin route): a consistent
// backup archive of the store and the data dir's keys, streamed while
// clients keep writing. X-Quire-Backup-Estimate carries the approximate
// size for progress bars. An error mid-stream cuts the archive short,
// which `quire backup` and restore detect (no end frame).
func (s *Server) handleGetBackup(r *reqCtx) error {
	if s.deps.DataDir == "" {
		return errStatus(http.StatusNotFound, "backup is not available on this server")
	}
	if r.Method() == http.MethodHead {
		// fiber answers HEAD with the GET handler; a body stream writer
		// would put bytes after a HEAD response and break the connection.
		serveStored(r.Ctx, storedFile{ContentType: "application/octet-stream"})
		return nil
	}
	conn := r.Context().Conn()
	if !s.backups.begin(conn) {
		return errStatus(http.StatusServiceUnavailable, errShuttingDown.Error())
	}
	name := "quire-" + s.now().UTC().Format("20060102-150405") + ".qbk"
	serveStored(r.Ctx, storedFile{ContentType: "application/octet-stream", Name: name})
	r.Set("X-Quire-Backup-Estimate", strconv.FormatInt(backup.Estimate(s.db), 10))
	id := requestID(r.Ctx)
	r.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		defer s.backups.done(conn)
		start := time.Now()
		// The stream is written after the handler returned, outside the
		// recover middleware.
		var info backup.Info
		err := guard.Run(s.log, guard.Backup, func() (err error) {
			info, err = backup.Write(stopWriter{w, s.backups.stop}, s.db, s.deps.DataDir, s.deps.Version, nil)
			return err
		}, "requestId", id)
		if err == nil {
			err = w.Flush()
		}
		if err != nil {
			s.log.Warn("backup failed", "requestId", id, "err", err)
			return
		}
		s.log.Info("backup written", "requestId", id, "keys", info.Keys, "storeBytes", info.StoreBytes, "seconds", time.Since(start).Seconds())
	})
	return nil
}
