package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/dgraph-io/badger/v4"
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
func badgerCreate(ctx context.Context, dir string, cfg config) (loadResult, error) {
	db, err := badger.Open(badger.DefaultOptions(dir).WithSyncWrites(true).WithLogger(nil))
	if err != nil {
		return loadResult{}, err
	}
	defer db.Close()
	op := badgerOp(db, cfg)
	res := runLoad(ctx, cfg.clients, cfg.warmup, cfg.window, op)
	if err := ctx.Err(); err != nil {
		return res, err
	}
	return res, res.err()
}

// quireCreate is the creation benchmark: cfg.clients HTTP clients POST
// /documents with cfg.docSize bytes of inline text and a path each.
func quireCreate(ctx context.Context, srv *server, cfg config) (loadResult, error) {
	op := createOp(srv, cfg, "c", nil, nil)
	res := runLoad(ctx, cfg.clients, cfg.warmup, cfg.window, op)
	if err := ctx.Err(); err != nil {
		return res, err
	}
	return res, res.err()
}

// badgerBaseline runs the baseline of the creation benchmark.
func (s *session) badgerBaseline(ctx context.Context) (loadResult, error) {
	s.logf("badger baseline: %d goroutines, %s", s.cfg.clients, s.cfg.window)
	dir := filepath.Join(s.root, "badger")
	defer os.RemoveAll(dir)
	cpu := startCPU(os.Getpid())
	base, err := badgerCreate(ctx, dir, s.cfg)
	if err != nil {
		return base, fmt.Errorf("badger baseline: %w", err)
	}
	s.rep.note("CPU, badger baseline: %.2f cores", cpu.cores()[0])
	return base, nil
}

// create runs the creation benchmark against srv; idle is the server's
// memory before it.
func (s *session) create(ctx context.Context, srv *server, base loadResult, idle procStatus) error {
	s.logf("quire create: %d clients, %s", s.cfg.clients, s.cfg.window)
	srv.rss.resetPeak()
	cpu := startCPU(srv.pid(), os.Getpid())
	q, err := quireCreate(ctx, srv, s.cfg)
	if err != nil {
		return fmt.Errorf("quire create: %w", err)
	}
	c := cpu.cores()
	s.rep.addCreate(s.cfg, q, base)
	s.rep.addAnon("server peak anonymous memory, create", idle, srv.rss.resetPeak(), anonTarget)
	s.rep.note("CPU, quire create: server %.2f cores, benchmark clients %.2f cores", c[0], c[1])
	return nil
}

// upload runs the streamed-upload benchmark and its baseline, then checks
// the uploaded content.
func (s *session) upload(ctx context.Context, srv *server) error {
	size := s.cfg.uploadSize
	seed := uploadSeed()
	src, dst := filepath.Join(s.root, "source.bin"), filepath.Join(s.root, "dd.out")
	s.logf("writing %s source file for the disk baseline", sizeName(size))
	sum, err := writeSource(src, size, seed)
	if err != nil {
		return fmt.Errorf("source file: %w", err)
	}
	s.logf("disk baseline")
	disk, err := diskBaseline(ctx, src, dst, size)
	var ceil diskResult
	if err == nil {
		s.logf("badger value-log ceiling")
		ceil, err = badgerVlogCeiling(src, filepath.Join(s.root, "badger-vlog"))
	}
	// Free the space now; removing root catches anything left.
	os.Remove(src)
	os.Remove(dst)
	if err != nil {
		return fmt.Errorf("disk baseline: %w", err)
	}

	s.logf("quire upload: %s", sizeName(size))
	before := srv.rss.current()
	srv.rss.resetPeak()
	cpu := startCPU(srv.pid(), os.Getpid())
	up, err := quireUpload(ctx, srv, size, seed)
	if err != nil {
		return fmt.Errorf("quire upload: %w", err)
	}
	c := cpu.cores()
	s.rep.addUpload(s.cfg, up, disk)
	s.rep.addCeiling(ceil, disk)
	s.rep.addAnon("server peak anonymous memory, upload", before, srv.rss.resetPeak(), anonTarget)
	s.rep.note("CPU, quire upload: server %.2f cores, benchmark client %.2f cores", c[0], c[1])

	s.logf("verifying the upload")
	dl, err := verifyUpload(ctx, srv, up.documentID, size, sum)
	s.rep.addVerify(dl, err)
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
func badgerVlogCeiling(src, dir string) (diskResult, error) {
	defer os.RemoveAll(dir)
	db, err := badger.Open(badger.DefaultOptions(dir).WithSyncWrites(true).WithLogger(nil).WithValueThreshold(8 << 10))
	if err != nil {
		return diskResult{}, err
	}
	defer db.Close()
	f, err := os.Open(src)
	if err != nil {
		return diskResult{}, err
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
			return diskResult{}, err
		}
	}
	d := time.Since(t0)
	return diskResult{tool: "raw Badger, 1 MiB values, 8 per synced txn", elapsed: d, rate: mbps(total, d)}, nil
}
