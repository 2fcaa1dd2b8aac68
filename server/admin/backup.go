package admin

import (
	"bufio"
	"net/http"
	"strconv"
	"time"

	"quire/backup"
	"quire/guard"
	"quire/server/internal/api"
)

// HandleGetBackup serves GET /system/backup (admin route): a consistent
// backup archive of the store and the data dir's keys, streamed while
// clients keep writing. X-Quire-Backup-Estimate carries the approximate
// size for progress bars. An error mid-stream cuts the archive short,
// which `quire backup` and restore detect (no end frame).
func (s *Handlers) HandleGetBackup(r *api.Request) error {
	if s.Deps.DataDir == "" {
		return api.ErrStatus(http.StatusNotFound, "backup is not available on this server")
	}
	if r.Method() == http.MethodHead {
		// fiber answers HEAD with the GET handler; a body stream writer
		// would put bytes after a HEAD response and break the connection.
		api.ServeStored(r.Ctx, api.StoredFile{ContentType: "application/octet-stream"})
		return nil
	}
	conn := r.Context().Conn()
	if !s.Backups.Begin(conn) {
		return api.ErrStatus(http.StatusServiceUnavailable, api.ErrShuttingDown.Error())
	}
	name := "quire-" + s.Now().UTC().Format("20060102-150405") + ".qbk"
	api.ServeStored(r.Ctx, api.StoredFile{ContentType: "application/octet-stream", Name: name})
	r.Set("X-Quire-Backup-Estimate", strconv.FormatInt(backup.Estimate(s.DB), 10))
	id := api.RequestID(r.Ctx)
	r.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		defer s.Backups.Done(conn)
		start := time.Now()
		// The stream is written after the handler returned, outside the
		// recover middleware.
		var info backup.Info
		err := guard.Run(s.Log, guard.Backup, func() (err error) {
			info, err = backup.Write(api.StopWriter{W: w, Stop: s.Backups.Stop}, s.DB, s.Deps.DataDir, s.Deps.Version, nil)
			return err
		}, "requestId", id)
		if err == nil {
			err = w.Flush()
		}
		if err != nil {
			s.Log.Warn("backup failed", "requestId", id, "err", err)
			return
		}
		s.Log.Info("backup written", "requestId", id, "keys", info.Keys, "storeBytes", info.StoreBytes, "seconds", time.Since(start).Seconds())
	})
	return nil
}
