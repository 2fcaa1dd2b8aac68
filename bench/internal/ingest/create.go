package ingest

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/dgraph-io/badger/v4"

	"quire/bench/internal/harness"
)

// badgerCreate is the baseline of the creation benchmark: raw Badger in
// dir, SyncWrites and otherwise default options, doing the durable work of
// one document per transaction (a 4 KiB record and a small index key) from
// as many goroutines as Quire gets clients.
//
// Its rate is not flat: with SyncWrites Badger msyncs the whole memtable
// mapping on every commit, so commits slow down as the 64 MiB memtable
// fills and speed up again after each flush. The 10 s window covers most
// of a cycle; the 3 s window of -quick sees only the fast start, which
// flatters the baseline.
func badgerCreate(ctx context.Context, dir string, cfg harness.Config) (harness.LoadResult, error) {
	db, err := badger.Open(badger.DefaultOptions(dir).WithSyncWrites(true).WithLogger(nil))
	if err != nil {
		return harness.LoadResult{}, err
	}
	defer db.Close()
	op := harness.BadgerOp(db, cfg)
	res := harness.RunLoad(ctx, cfg.Clients, cfg.Warmup, cfg.Window, op)
	if err := ctx.Err(); err != nil {
		return res, err
	}
	return res, res.Err()
}

// quireCreate is the creation benchmark: cfg.clients HTTP clients POST
// /documents with cfg.DocSize bytes of inline text and a path each.
func quireCreate(ctx context.Context, srv *harness.Server, cfg harness.Config) (harness.LoadResult, error) {
	op := harness.CreateOp(srv, cfg, "c", nil, nil)
	res := harness.RunLoad(ctx, cfg.Clients, cfg.Warmup, cfg.Window, op)
	if err := ctx.Err(); err != nil {
		return res, err
	}
	return res, res.Err()
}

// badgerBaseline runs the baseline of the creation benchmark.
func (s *session) badgerBaseline(ctx context.Context) (harness.LoadResult, error) {
	s.Logf("badger baseline: %d goroutines, %s", s.Cfg.Clients, s.Cfg.Window)
	dir := filepath.Join(s.Root, "badger")
	defer os.RemoveAll(dir)
	cpu := harness.StartCPU(os.Getpid())
	base, err := badgerCreate(ctx, dir, s.Cfg)
	if err != nil {
		return base, fmt.Errorf("badger baseline: %w", err)
	}
	s.Rep.Note("CPU, badger baseline: %.2f cores", cpu.Cores()[0])
	return base, nil
}

// create runs the creation benchmark against srv; idle is the server's
// memory before it.
func (s *session) create(ctx context.Context, srv *harness.Server, base harness.LoadResult, idle harness.ProcStatus) error {
	s.Logf("quire create: %d clients, %s", s.Cfg.Clients, s.Cfg.Window)
	srv.RSS.ResetPeak()
	cpu := harness.StartCPU(srv.PID(), os.Getpid())
	q, err := quireCreate(ctx, srv, s.Cfg)
	if err != nil {
		return fmt.Errorf("quire create: %w", err)
	}
	c := cpu.Cores()
	s.Rep.AddCreate(s.Cfg, q, base)
	s.Rep.AddAnon("server peak anonymous memory, create", idle, srv.RSS.ResetPeak(), harness.AnonTarget)
	s.Rep.Note("CPU, quire create: server %.2f cores, benchmark clients %.2f cores", c[0], c[1])
	return nil
}

// upload runs the streamed-upload benchmark and its baseline, then checks
// the uploaded content.
func (s *session) upload(ctx context.Context, srv *harness.Server) error {
	size := s.Cfg.UploadSize
	seed := harness.UploadSeed()
	src, dst := filepath.Join(s.Root, "source.bin"), filepath.Join(s.Root, "dd.out")
	s.Logf("writing %s source file for the disk baseline", harness.SizeName(size))
	sum, err := harness.WriteSource(src, size, seed)
	if err != nil {
		return fmt.Errorf("source file: %w", err)
	}
	s.Logf("disk baseline")
	disk, err := harness.DiskBaseline(ctx, src, dst, size)
	var ceil harness.DiskResult
	if err == nil {
		s.Logf("badger value-log ceiling")
		ceil, err = badgerVlogCeiling(src, filepath.Join(s.Root, "badger-vlog"))
	}
	// Free the space now; removing root catches anything left.
	os.Remove(src)
	os.Remove(dst)
	if err != nil {
		return fmt.Errorf("disk baseline: %w", err)
	}

	s.Logf("quire upload: %s", harness.SizeName(size))
	before := srv.RSS.Current()
	srv.RSS.ResetPeak()
	cpu := harness.StartCPU(srv.PID(), os.Getpid())
	up, err := harness.QuireUpload(ctx, srv, size, seed)
	if err != nil {
		return fmt.Errorf("quire upload: %w", err)
	}
	c := cpu.Cores()
	s.Rep.AddUpload(s.Cfg, up, disk)
	s.Rep.AddCeiling(ceil, disk)
	s.Rep.AddAnon("server peak anonymous memory, upload", before, srv.RSS.ResetPeak(), harness.AnonTarget)
	s.Rep.Note("CPU, quire upload: server %.2f cores, benchmark client %.2f cores", c[0], c[1])

	s.Logf("verifying the upload")
	dl, err := harness.VerifyUpload(ctx, srv, up.DocumentID, size, sum)
	s.Rep.AddVerify(dl, err)
	if err != nil {
		return fmt.Errorf("verify upload: %w", err)
	}
	return nil
}

// badgerVlogCeiling writes src into a raw Badger in dir the way Quire
// stores content, without Quire: 1 MiB values (raw, no hashing or
// compression), 8 per SyncWrites transaction. Badger copies values into an
// mmapped value log and msyncs it on every commit, which bounds what any
// Badger-backed upload can reach on this disk; the report shows it beside
// dd so a low upload ratio can be told apart from a slow Quire.
func badgerVlogCeiling(src, dir string) (harness.DiskResult, error) {
	defer os.RemoveAll(dir)
	db, err := badger.Open(badger.DefaultOptions(dir).WithSyncWrites(true).WithLogger(nil).WithValueThreshold(8 << 10))
	if err != nil {
		return harness.DiskResult{}, err
	}
	defer db.Close()
	f, err := os.Open(src)
	if err != nil {
		return harness.DiskResult{}, err
	}
	defer f.Close()
	const chunk, perTxn = 1 << 20, 8
	bufs := make([][]byte, perTxn)
	for i := range bufs {
		bufs[i] = make([]byte, chunk)
	}
	var total int64
	t0 := time.Now()
	for n := 0; ; n += perTxn {
		var vals [][]byte
		for i := range bufs {
			k, err := io.ReadFull(f, bufs[i])
			if k > 0 {
				vals = append(vals, bufs[i][:k])
				total += int64(k)
			}
			if err != nil {
				break
			}
		}
		if len(vals) == 0 {
			break
		}
		err := db.Update(func(txn *badger.Txn) error {
			for i, v := range vals {
				if err := txn.Set(fmt.Appendf(nil, "c/%012d", n+i), v); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return harness.DiskResult{}, err
		}
	}
	d := time.Since(t0)
	return harness.DiskResult{Tool: "raw Badger, 1 MiB values, 8 per synced txn", Elapsed: d, Rate: harness.Mbps(total, d)}, nil
}
