package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// Badger writes its write-ahead logs (.mem), value log (.vlog), tables
// (.sst) and DISCARD file through a shared writable mmap of a file it has
// just grown with ftruncate, so the file is sparse: the first store into a
// page makes the file system allocate a block, and when it has none the
// kernel answers with SIGBUS, which kills the process (Go cannot turn a
// fault in Badger's goroutines into an error). Badger v4 has no option to
// write with write(2) instead. Quire therefore makes sure the blocks exist
// when Badger needs them: the write gate (diskguard) refuses writes while
// free space is under MinReserve, an open with less than that is read-only
// (Badger then creates and writes nothing), and a preallocated ballast file
// gives a close or a crash recovery on a disk that something else filled
// the room to flush the memtables. See DESIGN.md, "Full disk".

// valueThreshold is the size from which Badger keeps a value in the value
// log, written once, instead of in the LSM tree, where every compaction
// rewrites it. Records (a document's is about 400 bytes) stay in the
// tree. 8 KiB until 2026-11-27 kept the content of small documents (a
// 4 KiB text, 2–3 KiB once compressed) in the tree: under a sustained
// creation load Badger's compactions then held 90 MB of table builders,
// the heap passed the soft limit and the collector took half the CPU for
// seconds at a time. 1 KiB, alternating A/B with the 8 KiB build
// (-ingest-only, 30,000 documents of 4 KiB): 426–486 against 311–352
// creates/s, create p99 0.73–0.97 against 1.24–1.45 s, peak RssAnon
// 130–133 against 139–147 MB. A single client's create syncs the value
// log too and takes a tenth longer (p50 2.0 against 1.85 ms) (storage/
// DESIGN.md, "Value threshold").
const valueThreshold = 1 << 10

// badgerOptions are Quire's Badger settings; MinReserve derives from them.
func badgerOptions(dir string, inMemory bool) badger.Options {
	opts := badger.DefaultOptions(dir).
		WithInMemory(inMemory).
		WithSyncWrites(true).
		// Small caches keep the server's footprint low; records are small and
		// content chunks are read sequentially once.
		WithMemTableSize(8 << 20).
		WithNumMemtables(3).
		WithBlockCacheSize(16 << 20).
		WithIndexCacheSize(8 << 20).
		WithNumCompactors(2).
		WithNumLevelZeroTables(3).
		WithNumLevelZeroTablesStall(8).
		// Content chunks go to the value log, records stay in the LSM tree
		// (valueThreshold).
		WithValueThreshold(valueThreshold).
		WithValueLogFileSize(256 << 20).
		WithMetricsEnabled(false)
	if inMemory {
		opts.Dir, opts.ValueDir = "", ""
	}
	return opts
}

// maxApplyBytes bounds what commands admitted before the gate closed may
// still append: WriteContent keeps two 8 MiB batches in flight per upload,
// and the server caps concurrent uploads far below this many.
const maxApplyBytes = 64 << 20

// MinReserve is the free space, in bytes, under which the store must stop
// taking writes so that everything Badger may still write through its
// mappings has blocks to land in: the memtables still to be flushed (each
// becomes a table of about its size), an L0→L1 compaction at the L0 stall
// limit (its output is at most its input: the L0 tables plus the base
// level), the writes already admitted, the DISCARD file and the ballast
// (recreated when writes resume). With Quire's settings this is about
// 180 MiB; the gate takes the larger of it and the configured floor.
func MinReserve() uint64 {
	o := badgerOptions("", false)
	flush := int64(o.NumMemtables) * o.MemTableSize
	compaction := int64(o.NumLevelZeroTablesStall)*o.MemTableSize + o.BaseLevelSize
	return uint64(flush + compaction + maxApplyBytes + 1<<20 + ballastSize(o))
}

// ballastName is a preallocated file in the Badger directory that Quire
// deletes to make room when the disk is full: before a close (the memtable
// flush writes tables through mmap) and before an open that must replay
// write-ahead logs a crash left behind. Badger ignores files it does not
// know.
const ballastName = "QUIRE-RESERVE"

// ballastSize covers flushing every memtable plus the new WAL an open
// creates.
func ballastSize(o badger.Options) int64 { return int64(o.NumMemtables+1) * o.MemTableSize }

// ensureBallast creates the ballast when it is missing and there is room
// for it on top of MinReserve.
func (d *DB) ensureBallast() {
	p := filepath.Join(d.dir, ballastName)
	if _, err := os.Stat(p); err == nil {
		return
	}
	size := ballastSize(badgerOptions("", false))
	if free, _, err := diskFree(d.dir); err != nil || free < MinReserve()+uint64(size) {
		return
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	err = preallocate(f, size)
	if err == nil {
		err = f.Sync()
	}
	f.Close()
	if err != nil {
		os.Remove(p)
		d.log.Warn("cannot create the storage ballast", "err", err)
	}
}

// dropBallast deletes the ballast, giving its blocks back to the file
// system; it reports whether there was one.
func dropBallast(dir string) bool {
	return os.Remove(filepath.Join(dir, ballastName)) == nil
}

// openBadger opens Badger in cfg.Dir read-write, or read-only with the
// write gate closed when the file system has too little free space for
// what a read-write Badger writes through its mappings.
func openBadger(cfg Config, lg badgerLogger) (bdb *badger.DB, readOnly bool, reason string, err error) {
	opts := badgerOptions(cfg.Dir, cfg.InMemory).WithLogger(lg)
	if cfg.InMemory || runtime.GOOS == "windows" {
		// Badger's read-only mode does not exist on Windows.
		bdb, err = badger.Open(opts)
		return bdb, false, "", err
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, false, "", err
	}
	free, _, ferr := diskFree(cfg.Dir)
	if ferr != nil || free >= MinReserve() {
		bdb, err = badger.Open(opts)
		return bdb, false, "", err
	}
	reason = fmt.Sprintf("the data file system has %d MiB free, storage needs at least %d MiB to take writes", free>>20, MinReserve()>>20)
	walBytes := openNeed(cfg.Dir)
	if walBytes == openPages {
		// A clean close leaves no write-ahead log: read-only Badger
		// opens without writing anything.
		bdb, err = badger.Open(opts.WithReadOnly(true))
		if err != nil {
			// A store that does not exist yet has nothing to read.
			return nil, false, "", fmt.Errorf("%s, and opening read-only failed: %w", reason, err)
		}
		return bdb, true, reason, nil
	}
	// A crash left write-ahead logs, which read-only Badger refuses (they
	// must be truncated and flushed) and whose replay reads past their end
	// (on tmpfs even reading a hole takes a block). That needs a
	// read-write open, in the ballast's room; the gate stays closed.
	dropBallast(cfg.Dir)
	free, _, _ = diskFree(cfg.Dir)
	if free < walBytes {
		return nil, false, "", fmt.Errorf("write-ahead logs left by a crash need %d MiB free to be replayed, the file system has %d MiB", walBytes>>20, free>>20)
	}
	lg.l.Warn("replaying write-ahead logs on a nearly full disk, in the ballast's room")
	bdb, err = badger.Open(opts)
	return bdb, false, reason, err
}

// openPages is what a read-write open writes through mmap besides the
// replay: the new WAL's and value log's first pages and the DISCARD file.
const openPages = 2 << 20

// openNeed is what a read-write open writes through mmap before the gate
// can refuse anything: a table per write-ahead log left behind (at most
// its allocated size, plus a page of the hole its replay reads) and
// openPages.
func openNeed(dir string) uint64 {
	need := uint64(openPages)
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".mem" {
			continue
		}
		if fi, err := e.Info(); err == nil {
			need += uint64(diskUsage(fi)) + 64<<10
		}
	}
	return need
}

// readOnlyOpenKind is the gate's kind while Badger is open read-only.
const readOnlyOpenKind = "read-only-open"

// retryWritable is the space-back hook: it reopens Badger read-write
// when it was opened read-only. Errors are logged; the next space-back
// event tries again.
func (d *DB) retryWritable() {
	if time.Now().UnixNano() < d.reopenAfter.Load() {
		return
	}
	if err := d.reopenWritable(); errors.Is(err, errReadsBusy) {
		// A long read (a backup) holds the store: do not stall every
		// other read again at the next event.
		d.reopenAfter.Store(time.Now().Add(30 * time.Second).UnixNano())
		d.log.Warn("storage stays read-only for now", "err", err)
	} else if err != nil {
		d.log.Warn("storage stays read-only", "err", err)
	}
}

// errReadsBusy: reads did not let a reopen (or a close) through in time.
var errReadsBusy = errors.New("reads kept the store busy; retrying later")

// lockOut takes bmu exclusively for a swap or a close: new readers hold
// back (rlock) while the current ones finish. TryLock and not Lock: a
// reader may take the read lock twice (a read inside a read), which a
// waiting Lock would deadlock; the bounded wait on both sides turns that
// case into a retry.
func (d *DB) lockOut(wait time.Duration) error {
	d.draining.Store(true)
	defer d.draining.Store(false)
	deadline := time.Now().Add(wait)
	for !d.bmu.TryLock() {
		if time.Now().After(deadline) {
			return errReadsBusy
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// reopenWritable replaces a read-only Badger by a read-write one, without
// a restart, once free space is back at MinReserve. It holds every Apply,
// the value-log GC and every read off while it swaps (readers wait at most
// the open's duration), then opens the gate.
func (d *DB) reopenWritable() error {
	if free, _, err := diskFree(d.dir); err != nil || free < MinReserve() {
		return err
	}
	if !d.readOnly.Load() {
		// Opened read-write in the ballast's room (WALs left by a crash).
		d.ensureBallast()
		d.allowWrites(readOnlyOpenKind)
		return nil
	}
	d.gcMu.Lock()
	defer d.gcMu.Unlock()
	d.writeMu.Lock()
	defer d.writeMu.Unlock()
	if err := d.lockOut(reopenWait); err != nil {
		return err
	}
	defer d.bmu.Unlock()
	d.mu.RLock()
	closed := d.closed
	d.mu.RUnlock()
	if closed || !d.readOnly.Load() {
		return nil
	}
	if err := d.bdb.Close(); err != nil {
		return fmt.Errorf("close read-only badger: %w", err)
	}
	opts := badgerOptions(d.dir, false).WithLogger(badgerLogger{d.log})
	bdb, err := badger.Open(opts)
	if err != nil {
		// Back to serving reads as before.
		ro, rerr := badger.Open(opts.WithReadOnly(true))
		if rerr != nil {
			return fmt.Errorf("reopen read-write: %w; reopen read-only: %v", err, rerr)
		}
		d.bdb = ro
		return fmt.Errorf("reopen read-write: %w", err)
	}
	d.bdb = bdb
	d.readOnly.Store(false)
	d.ensureBallast()
	d.allowWrites(readOnlyOpenKind)
	d.log.Info("free space is back: storage reopened read-write")
	return nil
}

// reopenWait bounds how long a reopen waits for reads to finish, and
// how long a new read waits for a reopen.
const reopenWait = 2 * time.Second

// rlock takes bmu's read lock for a use of bdb, after letting a pending
// reopen go first.
func (d *DB) rlock() {
	for start := time.Now(); d.draining.Load() && time.Since(start) < reopenWait; {
		time.Sleep(time.Millisecond)
	}
	d.bmu.RLock()
}

// refusedByReadOnly turns Badger's refusal of a write on a read-only
// open into the gate's error.
func (d *DB) refusedByReadOnly(err error) error {
	if errors.Is(err, badger.ErrReadOnlyTxn) && d.readOnly.Load() {
		if st := d.WriteState(); !st.Writable {
			return &WriteRefusedError{Kind: st.Kind, Reason: st.Reason}
		}
		return &WriteRefusedError{Kind: readOnlyOpenKind, Reason: "storage is read-only: the disk was full when it opened"}
	}
	return err
}

// closeRoom makes room for Close's memtable flush: when free space is
// under what flushing every memtable needs, the ballast goes.
func (d *DB) closeRoom() {
	if d.dir == "" || d.readOnly.Load() {
		return
	}
	o := badgerOptions("", false)
	need := uint64(int64(o.NumMemtables)*o.MemTableSize) + 1<<20
	if free, _, err := diskFree(d.dir); err == nil && free < need && dropBallast(d.dir) {
		d.log.Warn("disk nearly full at close: released the storage ballast for the memtable flush", "free", free)
	}
}

// writeZeros writes n zero bytes to f, which allocates its blocks.
func writeZeros(f *os.File, n int64) error {
	buf := make([]byte, 1<<20)
	for n > 0 {
		k := min(n, int64(len(buf)))
		if _, err := f.Write(buf[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// gcHasRoom reports whether a value-log GC may run: it rewrites up to a
// whole value-log file's live entries into the current one (through the
// mapping) before it deletes the old file, so it needs that much free
// space on top of MinReserve.
func (d *DB) gcHasRoom() bool {
	free, _, err := diskFree(d.dir)
	return err != nil || free >= MinReserve()+uint64(badgerOptions("", false).ValueLogFileSize)
}

// diskFree is DiskFree; tests replace it to play a full disk.
var diskFree = DiskFree
