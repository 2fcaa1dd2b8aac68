package storage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/badger/v4"

	"quire/guard"
	"quire/mapadvice"
)

// Config configures a DB.
type Config struct {
	// Dir is the Badger directory. Required.
	Dir string
	// Logger receives Badger's and storage's logs. Default: slog.Default().
	Logger *slog.Logger
	// InMemory runs Badger without disk, for unit tests only.
	InMemory bool
	// MinFreeBytes and MinFreePercent make the reserve of free space on
	// the data file system, the larger of the two; writes are refused
	// while less is free (see diskguard.go). 0: the default (1 GiB, 2%);
	// negative: none.
	MinFreeBytes   int64
	MinFreePercent float64
	// DiskCheckEvery is how often free space is looked at (0: 1 s).
	DiskCheckEvery time.Duration
	// diskFree replaces statfs in tests.
	diskFree func(dir string) (free, total uint64, err error)
}

// DB is Quire's store. It is safe for concurrent use.
type DB struct {
	// bdb is replaced when a read-only open turns read-write
	// (reopenWritable): readers hold bmu's read lock while they use it;
	// Apply and the value-log GC are held off by writeMu and gcMu.
	bdb         *badger.DB
	bmu         sync.RWMutex
	readOnly    atomic.Bool  // bdb was opened read-only (full disk)
	draining    atomic.Bool  // a reopen waits for readers (rlock)
	reopenAfter atomic.Int64 // Unix ns before which no reopen is tried

	log    *slog.Logger
	mu     sync.RWMutex // guards hooks and closed
	hooks  []func(*Command, Result)
	closed bool
	stop   chan struct{}
	wg     sync.WaitGroup

	// writeMu is held shared by every Apply and exclusively by a trim;
	// gcMu is held by the value-log GC and by a trim. Together they make
	// sure no value-log file is remapped while it is being trimmed.
	writeMu  sync.RWMutex
	gcMu     sync.Mutex
	serialMu sync.Mutex // see serialAfterConflicts

	dir      string
	mapped   atomic.Int64  // value-log bytes touched since the last trim
	trimKick chan struct{} // wakes trimLoop
	unadvise func()        // ends mapadvice.Random on the tables

	disk diskGuard // the write gate (diskguard.go)

	siteCfg siteConfigCache // SiteConfig answers (siteconfig.go)
	group   groupQueue      // group commit (group.go)
	// onWritable runs (in the disk watcher, under disk.mu's protection)
	// when space is back while the gate is closed for space: the
	// read-only open reopens the store read-write.
	onWritable []func()
}

// trimEvery is how many value-log bytes a process writes or reads before
// it asks the kernel to take the mapped pages back (see trimMappedFiles).
const trimEvery = 8 << 20

// touched records n value-log bytes written or read through the mapping.
func (d *DB) touched(n int) {
	if d.mapped.Add(int64(n)) >= trimEvery {
		select {
		case d.trimKick <- struct{}{}:
		default:
		}
	}
}

func (d *DB) trimLoop() {
	defer d.wg.Done()
	for {
		select {
		case <-d.stop:
			return
		case <-d.trimKick:
		}
		d.mapped.Store(0)
		guard.Do(d.log, guard.Storage, func() {
			d.gcMu.Lock()
			defer d.gcMu.Unlock()
			d.writeMu.Lock()
			defer d.writeMu.Unlock()
			trimMappedFiles(d.dir)
		})
		select { // at most a few trims a second
		case <-d.stop:
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// maxConflictRetries bounds how often Apply retries a transaction that lost
// an optimistic-concurrency race with another Apply.
const maxConflictRetries = 100

// serialAfterConflicts is how many conflicts a command suffers before it
// retries under serialMu.
const serialAfterConflicts = 2

// Open opens (or creates) the store in cfg.Dir. Writes are synchronous: when
// Apply returns nil the transaction is on disk.
func Open(cfg Config) (*DB, error) {
	if cfg.Dir == "" && !cfg.InMemory {
		return nil, errors.New("storage: dir is required")
	}
	lg := cfg.Logger
	if lg == nil {
		lg = slog.Default()
	}
	lg = lg.With("component", "storage")
	// A store of a format this build does not know is refused before
	// Badger touches it (format.go).
	var found int
	var existed bool
	if !cfg.InMemory {
		var err error
		if found, err = readFormat(cfg.Dir); err != nil {
			return nil, err
		}
		existed = hasStore(cfg.Dir)
	}
	bdb, readOnly, reason, err := openBadger(cfg, badgerLogger{lg})
	if err != nil {
		return nil, fmt.Errorf("open badger %s: %w", cfg.Dir, err)
	}
	d := &DB{bdb: bdb, log: lg, stop: make(chan struct{}), dir: cfg.Dir, trimKick: make(chan struct{}, 1)}
	d.readOnly.Store(readOnly)
	if !cfg.InMemory {
		if err := d.upgradeFormat(found, existed); err != nil {
			bdb.Close()
			return nil, err
		}
	}
	if reason != "" {
		lg.Warn("storage opened with too little free space: writes are refused until space returns", "reason", reason)
		d.refuseWrites(readOnlyOpenKind, reason)
		d.OnWritable(d.retryWritable)
	}
	if !cfg.InMemory {
		if !readOnly {
			d.ensureBallast()
		}
		d.wg.Add(2)
		go d.gcLoop()
		go d.trimLoop()
		d.adviseTables(cfg.Dir)
	}
	d.group.wake = make(chan struct{}, 1)
	d.wg.Add(1)
	go d.groupLoop()
	d.startDiskGuard(cfg)
	return d, nil
}

// adviseTables advises random access on Badger's tables when the disk
// reads ahead a large window around every page fault (mapadvice): a
// point read of a 4 KiB block would otherwise read, and keep in the page
// cache, up to that window, pushing out what the next reads need.
func (d *DB) adviseTables(dir string) {
	ra, _, ok := mapadvice.Readahead(dir)
	if !ok || ra <= mapadvice.RandomAboveKiB {
		return
	}
	d.unadvise = mapadvice.Random(dir, ".sst")
	d.log.Debug("the data disk reads ahead a large window on every page fault: the store's tables are advised random access; lower it for the search index too (quire doctor)", "readaheadKiB", ra)
}

// Close stops background work and closes Badger.
func (d *DB) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	d.mu.Unlock()
	close(d.stop)
	d.wg.Wait()
	// No read, and no reopen, may use bdb once it is closed; a read that
	// outlasts the HTTP shutdown is not waited for forever.
	if err := d.lockOut(5 * time.Second); err != nil {
		d.log.Warn("closing the store under a read", "err", err)
	} else {
		defer d.bmu.Unlock()
	}
	d.closeRoom()
	err := d.bdb.Close()
	if d.unadvise != nil {
		d.unadvise()
	}
	return err
}

// OnCommit registers fn to run after every successfully applied command, in
// the applying goroutine. The index and the pipeline use it to learn about
// changes; fn must not block for long.
func (d *DB) OnCommit(fn func(*Command, Result)) {
	d.mu.Lock()
	d.hooks = append(d.hooks, fn)
	d.mu.Unlock()
}

// applyFunc applies one command inside a transaction. It returns the op's
// result value, or an error that discards the transaction.
type applyFunc func(t *tx, c *Command) (any, error)

// Apply applies c in one Badger transaction. A domain error (validation,
// not found, conflict) leaves nothing written and is returned as is.
func (d *DB) Apply(ctx context.Context, c *Command) (Result, error) {
	fn, err := d.precheck(c)
	if err != nil {
		return Result{}, err
	}
	// The gate is asked before the transaction opens: a refused write
	// costs nothing and leaves nothing behind.
	size := writeSize(c)
	if err := d.admit(c, size); err != nil {
		return Result{}, err
	}
	defer d.release(c, size)
	// Under concurrent Applies, small commands are committed in groups
	// (group.go): one sync for many.
	if d.group.applying.Add(1) > 1 && d.groupable(c, size) {
		res, ok, err := d.applyGrouped(ctx, c, fn, size)
		if ok {
			d.group.applying.Add(-1)
			return res, err
		}
	}
	defer d.group.applying.Add(-1)
	return d.applyTxn(ctx, c, fn, 0)
}

// precheck is what Apply checks before it asks the gate: the op exists,
// the command is well formed and the store is open.
func (d *DB) precheck(c *Command) (applyFunc, error) {
	fn, ok := appliers[c.Op]
	if !ok {
		return nil, fmt.Errorf("apply: unknown op %q", c.Op)
	}
	if err := checkDefinition(c); err != nil {
		return nil, err
	}
	if c.Site != "" && !CheckSiteID(c.Site) {
		return nil, Invalid("siteId", "invalid siteId")
	}
	d.mu.RLock()
	closed := d.closed
	d.mu.RUnlock()
	if closed {
		return nil, ErrClosed
	}
	return fn, nil
}

// applyTxn runs fn for c in one transaction, retrying lost races. A
// raftIndex above 0 is written as the applied index (replica.go) in the
// same transaction.
func (d *DB) applyTxn(ctx context.Context, c *Command, fn applyFunc, raftIndex uint64) (Result, error) {
	var val any
	var err error
	replayed := false
	for attempt := 0; ; attempt++ {
		if err = ctx.Err(); err != nil {
			return Result{}, err
		}
		// A command that keeps losing races (many documents taking the
		// same sequence counter) runs serialized after a few tries, so it
		// makes progress instead of burning its retries.
		serial := attempt >= serialAfterConflicts
		if serial {
			d.serialMu.Lock()
		}
		d.writeMu.RLock()
		var t *tx
		err = d.update(c, func(txn *badger.Txn) error {
			t = &tx{txn: txn}
			v, err := runApplier(t, c, fn)
			val = v
			if err == nil && raftIndex > 0 {
				err = setAppliedIndex(txn, raftIndex)
			}
			return err
		})
		if err == nil {
			// Hooks run before the write lock is released, so Quiesce
			// sees every committed command's hooks done.
			replayed = t.replayed
			res := Result{Value: val, Replayed: replayed, Events: t.events}
			for r := range t.touched {
				res.Touched = append(res.Touched, r)
			}
			for r, at := range t.queued {
				res.Queued = append(res.Queued, QueuedDoc{r, at})
			}
			if c.Op == OpSetSiteConfig {
				d.siteCfg.clear()
			}
			d.runHooks(c, res)
		}
		d.writeMu.RUnlock()
		if serial {
			d.serialMu.Unlock()
		}
		if errors.Is(err, badger.ErrConflict) && attempt < maxConflictRetries {
			continue
		}
		if errors.Is(err, badger.ErrTxnTooBig) {
			return Result{}, errTxnTooBig
		}
		if IsIOError(err) {
			return Result{}, d.failedWrite(err)
		}
		if err != nil {
			return Result{}, d.refusedByReadOnly(err)
		}
		break
	}
	if p, ok := c.local.(PutChunks); ok {
		n := 0
		for _, ch := range p.Chunks {
			n += len(ch.Value)
		}
		d.touched(n)
	}
	return Result{Value: val, Replayed: replayed}, nil
}

func (d *DB) runHooks(c *Command, res Result) {
	d.mu.RLock()
	hooks := d.hooks
	d.mu.RUnlock()
	for _, h := range hooks {
		h(c, res)
	}
}

// Quiesce runs fn while no command is being applied: every command that
// committed before has had its hooks run, and none commits during fn.
func (d *DB) Quiesce(fn func()) {
	d.writeMu.Lock()
	defer d.writeMu.Unlock()
	fn()
}

// MaxVersion is the newest Badger commit version.
func (d *DB) MaxVersion() uint64 {
	d.rlock()
	defer d.bmu.RUnlock()
	return d.bdb.MaxVersion()
}

func decode[T any](c *Command) (*T, error) {
	if p, ok := c.local.(T); ok {
		return &p, nil
	}
	var v T
	if len(c.Data) == 0 {
		return &v, nil
	}
	if err := json.Unmarshal(c.Data, &v); err != nil {
		// A command that cannot be decoded was built wrongly by this
		// binary: report it, never half-apply it.
		return nil, fmt.Errorf("decode %s payload: %w", c.Op, err)
	}
	return &v, nil
}

// update is badger.DB.Update with the commit made the one place where a
// test can inject a disk fault (SetCommitFault).
func (d *DB) update(c *Command, fn func(txn *badger.Txn) error) error {
	if d.bdb.IsClosed() {
		return badger.ErrDBClosed
	}
	txn := d.bdb.NewTransaction(true)
	defer txn.Discard()
	if err := fn(txn); err != nil {
		return err
	}
	if err := d.commitFault(c); err != nil {
		return err
	}
	return txn.Commit()
}

// view runs fn in a read-only transaction.
func (d *DB) view(fn func(t *tx) error) error {
	return d.badgerView(func(txn *badger.Txn) error { return fn(&tx{txn: txn}) })
}

// badgerView runs fn in a Badger read transaction, holding off a reopen
// (reopenWritable) until it returns.
func (d *DB) badgerView(fn func(txn *badger.Txn) error) error {
	d.rlock()
	defer d.bmu.RUnlock()
	return d.bdb.View(fn)
}

func (d *DB) gcLoop() {
	defer d.wg.Done()
	t := time.NewTicker(5 * time.Minute)
	defer t.Stop()
	for {
		select {
		case <-d.stop:
			return
		case <-t.C:
			// Reclaim value-log space left by deleted content; stop when a
			// run finds nothing worth rewriting.
			if !d.gcHasRoom() {
				continue
			}
			guard.Do(d.log, guard.Storage, func() {
				d.gcMu.Lock()
				defer d.gcMu.Unlock()
				for i := 0; i < 10; i++ {
					if d.bdb.RunValueLogGC(0.5) != nil {
						break
					}
				}
			})
		}
	}
}

// tx wraps a Badger transaction with JSON helpers. It notes the
// documents whose record, tags or attributes change, for the index.
type tx struct {
	txn     *badger.Txn
	touched map[DocRef]struct{}
	queued  map[DocRef]time.Time
	// system is set while the pipeline's follow-up commands of an action
	// are applied (FinishAction): only then may system tags be written.
	system bool
	// trail, parts and before serve the activity trail (activity.go).
	trail bool
	// replayed: the command's Idempotency-Key answered a recorded
	// result (requests.go).
	replayed bool
	parts    map[DocRef]uint8
	before   map[DocRef][]byte
	// events counts the document events written (events.go).
	events int
	// afterTrail is work of the command's transaction that follows its
	// activity trail (runOp): the events of default actions recorded
	// COMPLETE by the write itself (defaultactions.go), so that a
	// subscriber hears of a document before it hears of its actions.
	afterTrail []func() error
	// scans caches scanCached's reads by prefix.
	scans map[string][]kv
	// fresh holds, per prefix of a document this command created (its
	// actions, tags and attributes: markFresh), the keys written under it
	// by this command; each reads them instead of opening an iterator.
	fresh map[string]map[string][]byte
	// rules are the applier rules of the command applied (Command.Rules;
	// a command applied within another carries the other's), for
	// helpers that take no command (putDoc's pending thumbnail).
	rules int
}

// kv is one key and value read by scanCached.
type kv struct{ key, val []byte }

// queue notes that r has an action to run from at (for the pipeline).
func (t *tx) queue(r DocRef, at time.Time) {
	if t.queued == nil {
		t.queued = map[DocRef]time.Time{}
	}
	t.queued[r] = at
}

// DocRef names a document of a site.
type DocRef struct{ Site, ID string }

// docPrefixes are the key prefixes whose writes change what the index
// holds of a document: "<prefix><site>/<doc>[/...]".
var docPrefixes = []string{pfxDoc, pfxTag, pfxDocAttr}

func (t *tx) touch(key []byte) { t.touchKey(key, false) }

// touchKey notes a document whose record, tags or attributes a key
// belongs to; write says the key is about to be written.
func (t *tx) touchKey(key []byte, write bool) {
	for _, p := range docPrefixes {
		if len(key) <= len(p) || string(key[:len(p)]) != p {
			continue
		}
		rest := key[len(p):]
		i := bytes.IndexByte(rest, '/')
		if i < 0 {
			return
		}
		id := rest[i+1:]
		if j := bytes.IndexByte(id, '/'); j >= 0 {
			id = id[:j]
		}
		if t.touched == nil {
			t.touched = map[DocRef]struct{}{}
		}
		ref := DocRef{Site: siteOfKey(string(rest[:i])), ID: string(id)}
		t.touched[ref] = struct{}{}
		t.noteWrite(ref, p, key, write)
		return
	}
}

func (t *tx) getJSON(key []byte, v any) error {
	item, err := t.txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return ErrNotFound
	}
	if err != nil {
		return err
	}
	return item.Value(func(b []byte) error { return json.Unmarshal(b, v) })
}

func (t *tx) getRaw(key []byte) ([]byte, error) {
	item, err := t.txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return item.ValueCopy(nil)
}

func (t *tx) exists(key []byte) (bool, error) {
	_, err := t.txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return false, nil
	}
	return err == nil, err
}

func (t *tx) setJSON(key []byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return t.set(key, b)
}

func (t *tx) set(key, val []byte) error {
	if len(key) > maxStoredKeyBytes {
		return errKeyTooLong
	}
	t.touchKey(key, true)
	t.dropCaches(key)
	if keys := t.freshOf(key); keys != nil {
		keys[string(key)] = val
	}
	return t.txn.Set(key, val)
}

func (t *tx) del(key []byte) error {
	t.touchKey(key, true)
	t.dropCaches(key)
	if keys := t.freshOf(key); keys != nil {
		delete(keys, string(key))
	}
	return t.txn.Delete(key)
}

// Fresh prefixes. Every iterator a read-write Badger transaction opens
// first copies and sorts all of the transaction's pending writes
// (newPendingWritesIterator), and a group commit runs up to hundreds of
// commands in one transaction: the creates late in a group sorted the
// writes of all the creates before them, several times each (reading a
// new document's actions to queue them, its tags and attributes to
// bound their size), in the committer every write waits for. Under a
// prefix that holds only keys of a document created by this command no
// committed key and no earlier command's write can exist (the document
// did not exist: a deleted document's keys go with its record, and a
// soft-deleted one keeps its record), so the keys this command wrote
// there are all there is, and each reads them from fresh. Reads of
// pending writes add nothing to Badger's read set either, so conflict
// detection is unchanged.

// markFresh notes that the document doc of site is created by this
// command: nothing is stored under its action, tag and attribute
// prefixes yet.
func (t *tx) markFresh(site, doc string) {
	if t.fresh == nil {
		t.fresh = map[string]map[string][]byte{}
	}
	for _, p := range [][]byte{actionPrefix(site, doc), tagPrefix(site, doc), docAttrPrefix(site, doc)} {
		t.fresh[string(p)] = map[string][]byte{}
	}
}

// freshOf returns the keys written under the fresh prefix key falls
// under, nil when there is none. Fresh prefixes end in "/": each of the
// key's leading parts up to a "/" is looked up.
func (t *tx) freshOf(key []byte) map[string][]byte {
	if len(t.fresh) == 0 {
		return nil
	}
	for i, c := range key {
		if c != '/' {
			continue
		}
		if keys, ok := t.fresh[string(key[:i+1])]; ok {
			return keys
		}
	}
	return nil
}

// dropCaches forgets the cached scans a write to key changes.
func (t *tx) dropCaches(key []byte) {
	for p := range t.scans {
		if bytes.HasPrefix(key, []byte(p)) {
			delete(t.scans, p)
		}
	}
}

// scanCached is each for the small configuration prefixes a command
// reads once per document it touches (sequences, rulesets, event
// subscriptions): the first call reads them, later calls in the same
// transaction reuse that read until the transaction writes under the
// prefix. Every iterator a Badger transaction opens first copies and
// sorts all the transaction's pending writes, so a command creating a
// hundred documents spent most of its time sorting (BenchmarkAddDocuments).
// The keys read the first time are in the transaction's read set, so
// conflict detection is unchanged.
func (t *tx) scanCached(prefix []byte, fn func(key, val []byte) error) error {
	rows, ok := t.scans[string(prefix)]
	if !ok {
		rows = []kv{}
		if err := t.each(prefix, func(k, v []byte) error {
			rows = append(rows, kv{bytes.Clone(k), bytes.Clone(v)})
			return nil
		}); err != nil {
			return err
		}
		if t.scans == nil {
			t.scans = map[string][]kv{}
		}
		t.scans[string(prefix)] = rows
	}
	for _, r := range rows {
		if err := fn(r.key, r.val); err != nil {
			return err
		}
	}
	return nil
}

// keys returns the keys under prefix (values are not read).
func (t *tx) keys(prefix []byte) [][]byte { return t.keysFrom(prefix, prefix) }

// count returns how many keys are under prefix, without copying them
// (len(keys) over a million documents held about 100 MB at once).
func (t *tx) count(prefix []byte) int { return t.countMax(prefix, 0) }

// countMax counts the keys under prefix, reading keys only, and stops at
// limit (limit <= 0: no limit).
func (t *tx) countMax(prefix []byte, limit int) int {
	opts := badger.DefaultIteratorOptions
	opts.PrefetchValues = false
	opts.Prefix = prefix
	it := t.txn.NewIterator(opts)
	defer it.Close()
	n := 0
	for it.Seek(prefix); it.ValidForPrefix(prefix) && (limit <= 0 || n < limit); it.Next() {
		n++
	}
	return n
}

// firstKey returns the first key under prefix, nil when there is none.
func (t *tx) firstKey(prefix []byte) []byte {
	opts := badger.DefaultIteratorOptions
	opts.PrefetchValues = false
	opts.Prefix = prefix
	it := t.txn.NewIterator(opts)
	defer it.Close()
	it.Seek(prefix)
	if !it.ValidForPrefix(prefix) {
		return nil
	}
	return it.Item().KeyCopy(nil)
}

// each calls fn for every key/value under prefix, in key order.
func (t *tx) each(prefix []byte, fn func(key, val []byte) error) error {
	if keys := t.freshOf(prefix); keys != nil {
		return eachFresh(keys, prefix, fn)
	}
	opts := badger.DefaultIteratorOptions
	opts.Prefix = prefix
	it := t.txn.NewIterator(opts)
	defer it.Close()
	for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
		item := it.Item()
		if err := item.Value(func(v []byte) error { return fn(item.Key(), v) }); err != nil {
			return err
		}
	}
	return nil
}

// eachFresh calls fn for every key/value of keys under prefix, in key
// order.
func eachFresh(keys map[string][]byte, prefix []byte, fn func(key, val []byte) error) error {
	under := make([]string, 0, len(keys))
	for k := range keys {
		if strings.HasPrefix(k, string(prefix)) {
			under = append(under, k)
		}
	}
	slices.Sort(under)
	for _, k := range under {
		if err := fn([]byte(k), keys[k]); err != nil {
			return err
		}
	}
	return nil
}

type badgerLogger struct{ l *slog.Logger }

func (b badgerLogger) Errorf(f string, a ...any)   { b.l.Error(fmt.Sprintf(f, a...)) }
func (b badgerLogger) Warningf(f string, a ...any) { b.l.Warn(fmt.Sprintf(f, a...)) }
func (b badgerLogger) Infof(f string, a ...any)    { b.l.Debug(fmt.Sprintf(f, a...)) }
func (b badgerLogger) Debugf(f string, a ...any)   { b.l.Debug(fmt.Sprintf(f, a...)) }
