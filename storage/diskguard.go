package storage

import (
	"cmp"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"time"

	"quire/guard"
)

// The write gate. A full disk must stop writes before it stops the
// process: Badger writes its value log and memtables through mmap, and a
// page the file system cannot back is a SIGBUS, not an error. So Quire
// keeps a reserve of free space that only Badger's own housekeeping
// (memtable flushes, compactions), the index and deletes may use, and
// refuses new writes while free space is under it. An I/O error from a
// commit closes the gate for good: after a failed fsync the page cache no
// longer says what is on disk (PostgreSQL's lesson), so the node keeps
// serving reads and waits for an operator.

// Write gate kinds, from the mildest: a stronger kind is never replaced by
// a milder one, and allowWrites only clears its own kind.
const (
	KindLowSpace     = "low-space"      // free space under the reserve; reopens by itself
	KindReadOnlyOpen = "read-only-open" // opened read-only on a full disk; reopens by itself
	KindIOError      = "io-error"       // a write failed with an I/O error; needs a restart
)

var kindRank = map[string]int{"": 0, KindLowSpace: 1, KindReadOnlyOpen: 2, KindIOError: 3}

// Defaults of the reserve: the larger of the two is kept free.
const (
	DefaultMinFreeBytes   = 1 << 30
	DefaultMinFreePercent = 2.0
)

// diskCheckEvery is how often the watcher looks at free space. Apply looks
// itself, too, whenever the last look is not recent or space is near the
// reserve, so a burst of uploads cannot overrun the reserve between ticks.
const diskCheckEvery = time.Second

// statFresh is how old the last statfs may be before an Apply looks again.
const statFresh = 100 * time.Millisecond

// WriteState says whether the store takes writes, and why not.
type WriteState struct {
	Writable bool
	Kind     string // "" when writable, else one of the Kind constants
	Reason   string // for humans: the API's message, /readyz, doctor
	// Free is the space available on the data file system at the last
	// look; Reserve is what Quire keeps free (0: not watched).
	Free, Reserve uint64
	Since         time.Time // when the gate last changed
}

// WriteRefusedError is returned by Apply while the gate is closed, and by
// the write that hit an I/O error. The server answers it with 507 (space)
// or 503 (an I/O error).
type WriteRefusedError struct {
	Kind, Reason string
	Err          error // the I/O error, for KindIOError
}

func (e *WriteRefusedError) Error() string { return e.Reason }
func (e *WriteRefusedError) Unwrap() error { return e.Err }

// IsIOError tells an error of the disk (the device failed, the file system
// is full or turned read-only, a sync failed) from every other error Apply
// returns: validation, conflicts, a closed store. It is the one place that
// decides which errors latch the gate.
func IsIOError(err error) bool {
	if err == nil {
		return false
	}
	var re *WriteRefusedError
	if errors.As(err, &re) {
		return false // already classified
	}
	for _, e := range []error{syscall.EIO, syscall.ENOSPC, syscall.EROFS, syscall.EDQUOT} {
		if errors.Is(err, e) {
			return true
		}
	}
	// Badger wraps some file errors in plain strings ("while syncing ...",
	// "Unable to sync ..."): a sync failure is an I/O error whatever caused it.
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "fsync") || strings.Contains(msg, "while syncing") || strings.Contains(msg, "unable to sync")
}

// diskGuard holds the gate and what the watcher last saw.
type diskGuard struct {
	mu       sync.Mutex
	state    WriteState
	free     uint64    // at statAt
	statAt   time.Time // zero: never looked (in-memory store: never does)
	inflight uint64    // bytes admitted and not yet committed
	resCfg   Config    // its MinFreeBytes and MinFreePercent make the reserve
	diskFree func(dir string) (free, total uint64, err error)
	every    time.Duration // between two looks of the watcher
	// fault, when set (tests only), is asked before every commit and may
	// fail it in its place.
	fault func(*Command) error
}

// startDiskGuard opens the gate and, for a store on disk, starts the
// watcher (stopped by Close).
func (d *DB) startDiskGuard(cfg Config) {
	d.disk.init(cfg)
	if !cfg.InMemory {
		d.wg.Add(1)
		go d.watchDisk()
	}
}

func (g *diskGuard) init(cfg Config) {
	if g.state.Kind == "" { // the read-only open may have closed it already
		g.state = WriteState{Writable: true, Since: time.Now()}
	}
	g.every = cmp.Or(cfg.DiskCheckEvery, diskCheckEvery)
	g.resCfg = Config{MinFreeBytes: cfg.MinFreeBytes, MinFreePercent: cfg.MinFreePercent}
	g.diskFree = cfg.diskFree
	if g.diskFree == nil {
		g.diskFree = DiskFree
	}
}

// reserveSettings resolves cfg's reserve fields (0: the default,
// negative: none).
func reserveSettings(cfg Config) (minBytes uint64, minPct float64) {
	minBytes, minPct = DefaultMinFreeBytes, DefaultMinFreePercent
	if cfg.MinFreeBytes != 0 {
		minBytes = uint64(max(cfg.MinFreeBytes, 0))
	}
	if cfg.MinFreePercent != 0 {
		minPct = max(cfg.MinFreePercent, 0)
	}
	return minBytes, minPct
}

// Reserve is the free space a store configured with cfg keeps on a file
// system of total bytes (quire doctor asks it too).
func Reserve(cfg Config, total uint64) uint64 {
	b, p := reserveSettings(cfg)
	return max(b, uint64(float64(total)*p/100))
}

// look runs statfs and recomputes the reserve (g.mu held).
func (g *diskGuard) look(dir string) error {
	free, total, err := g.diskFree(dir)
	if err != nil {
		g.statAt = time.Now() // a failing statfs is retried at the next tick, not on every write
		return err
	}
	g.free, g.statAt = free, time.Now()
	g.state.Free = free
	g.state.Reserve = Reserve(g.resCfg, total)
	return nil
}

// reopenAt is the free space at which a gate closed for space opens again:
// a quarter of the reserve above it, so that the writes the reopening lets
// in do not close it again at once.
func (g *diskGuard) reopenAt() uint64 { return g.state.Reserve + g.state.Reserve/4 }

// WriteState reports the gate.
func (d *DB) WriteState() WriteState {
	d.disk.mu.Lock()
	defer d.disk.mu.Unlock()
	return d.disk.state
}

// refuseWrites closes the gate with kind, unless a stronger kind holds it.
func (d *DB) refuseWrites(kind, reason string) {
	g := &d.disk
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.state.Writable && kindRank[kind] < kindRank[g.state.Kind] {
		return
	}
	if g.state.Kind != kind {
		g.state.Since = time.Now()
		d.log.Warn("refusing writes", "kind", kind, "reason", reason, "free", g.state.Free, "reserve", g.state.Reserve)
	}
	g.state.Writable, g.state.Kind, g.state.Reason = false, kind, reason
}

// allowWrites opens the gate if kind closed it.
func (d *DB) allowWrites(kind string) {
	g := &d.disk
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state.Writable || g.state.Kind != kind {
		return
	}
	g.state = WriteState{Writable: true, Free: g.state.Free, Reserve: g.state.Reserve, Since: time.Now()}
	d.log.Info("accepting writes again", "after", kind, "free", g.state.Free)
}

// OnWritable registers fn to run, in the watcher, when free space is back
// above the reserve while the gate is closed for space.
func (d *DB) OnWritable(fn func()) {
	d.disk.mu.Lock()
	d.onWritable = append(d.onWritable, fn)
	d.disk.mu.Unlock()
}

// SetCommitFault makes every commit ask fn first; an error from fn fails
// the commit in its place, nothing written, as a failing disk would. For
// fault-injection tests only.
func (d *DB) SetCommitFault(fn func(*Command) error) {
	d.disk.mu.Lock()
	d.disk.fault = fn
	d.disk.mu.Unlock()
	d.group.faulty.Store(fn != nil)
}

// lowSpaceReason is the message of a refusal for space.
func lowSpaceReason(free, reserve uint64) string {
	return fmt.Sprintf("insufficient storage: %s free on the data disk, %s are kept in reserve; writes resume when space is freed",
		mib(free), mib(reserve))
}

func mib(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// freesSpace lists the ops allowed while space is low: they free space (in
// the end: Badger drops deleted values at its next GC), and an operator
// must be able to delete documents to get out of a full disk. Their own
// few bytes come out of the reserve.
var freesSpace = map[Op]bool{OpDeleteDocument: true, OpSweepChunks: true}

// admit lets a write of about n bytes in, or refuses it. A write that
// would take free space under the reserve is refused and closes the gate;
// bytes admitted but not yet committed
// count as used, so concurrent uploads cannot overrun the reserve between
// two looks. release gives the bytes back.
func (d *DB) admit(c *Command, n uint64) error {
	g := &d.disk
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.state.Writable && !(g.state.Kind == KindLowSpace && freesSpace[c.Op]) {
		return &WriteRefusedError{Kind: g.state.Kind, Reason: g.state.Reason}
	}
	if d.dir == "" || freesSpace[c.Op] {
		return nil // in memory, or a delete
	}
	if time.Since(g.statAt) > statFresh || g.free < g.state.Reserve+g.inflight+n+64<<20 {
		if err := g.look(d.dir); err != nil {
			d.log.Warn("statfs", "dir", d.dir, "err", err)
		}
	}
	if g.free < g.state.Reserve+g.inflight+n {
		// The gate closes at the first write that does not fit, not only
		// once free space is under the reserve: otherwise small writes
		// would creep down to it while every upload is refused, and the
		// gate would flap around the edge. It reopens with hysteresis.
		reason := lowSpaceReason(g.free, g.state.Reserve)
		g.state.Writable, g.state.Kind, g.state.Reason, g.state.Since = false, KindLowSpace, reason, time.Now()
		d.log.Warn("refusing writes", "kind", KindLowSpace, "free", g.free, "reserve", g.state.Reserve, "write", n)
		return &WriteRefusedError{Kind: KindLowSpace, Reason: reason}
	}
	g.inflight += n
	return nil
}

func (d *DB) release(c *Command, n uint64) {
	if d.dir == "" || freesSpace[c.Op] {
		return
	}
	d.disk.mu.Lock()
	d.disk.inflight -= n
	d.disk.mu.Unlock()
}

// writeSize estimates what applying c writes: its payload, plus a margin
// for keys and records.
func writeSize(c *Command) uint64 {
	n := uint64(len(c.Data)) + 4<<10
	if p, ok := c.local.(PutChunks); ok {
		for _, ch := range p.Chunks {
			n += uint64(len(ch.Value)) + 128
		}
	}
	return n
}

// failedWrite turns an I/O error of a commit into the request's error and
// latches the gate: nothing more is written until a restart.
func (d *DB) failedWrite(err error) error {
	reason := "storage failed: " + err.Error()
	d.refuseWrites(KindIOError, reason+" (restart Quire once the disk is fixed)")
	return &WriteRefusedError{Kind: KindIOError, Reason: reason, Err: err}
}

// commitFault asks the test hook, if any.
func (d *DB) commitFault(c *Command) error {
	d.disk.mu.Lock()
	f := d.disk.fault
	d.disk.mu.Unlock()
	if f == nil {
		return nil
	}
	return f(c)
}

// watchDisk looks at free space every diskCheckEvery and opens or closes
// the gate for space, with hysteresis.
func (d *DB) watchDisk() {
	defer d.wg.Done()
	t := time.NewTicker(d.disk.every)
	defer t.Stop()
	for {
		guard.Do(d.log, guard.Storage, d.checkDisk)
		select {
		case <-d.stop:
			return
		case <-t.C:
		}
	}
}

// checkDisk is one look of the watcher.
func (d *DB) checkDisk() {
	g := &d.disk
	g.mu.Lock()
	if err := g.look(d.dir); err != nil {
		g.mu.Unlock()
		d.log.Warn("statfs", "dir", d.dir, "err", err)
		return
	}
	// Bytes admitted but not yet written are as good as used: without
	// them a gate closed by a burst of uploads would reopen at once.
	free, reserve, reopen := g.free-min(g.free, g.inflight), g.state.Reserve, g.reopenAt()
	kind := g.state.Kind
	hooks := d.onWritable
	g.mu.Unlock()
	switch {
	case free < reserve:
		d.refuseWrites(KindLowSpace, lowSpaceReason(free, reserve))
	case free >= reopen && (kind == KindLowSpace || kind == KindReadOnlyOpen):
		// The hooks run first: a store opened read-only reopens, then
		// clears its own kind.
		for _, h := range hooks {
			h()
		}
		d.allowWrites(KindLowSpace)
	}
}
