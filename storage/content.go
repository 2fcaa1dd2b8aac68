package storage

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/klauspost/compress/zstd"

	"quire/guard"
)

// ChunkSize is the size of a content chunk before compression.
const ChunkSize = 1 << 20

// chunksPerPut bounds how many chunks one OpPutChunks carries on a single
// server (the applier is the *DB): up to 8 chunks and 4 MiB of stored
// values per transaction, two in flight. Fewer, larger transactions mean
// fewer value-log syncs (storage/DESIGN.md, "Content").
const (
	chunksPerPut = 8
	bytesPerPut  = chunksPerPut * ChunkSize / 2
	putsInFlight = 2
)

// Through any other applier (a cluster member replicating every command
// through its Raft log) each OpPutChunks carries one chunk: at most
// ChunkSize (1 MiB) of content, so a log entry, a forwarded request and a
// follower's apply stay small. More commands are kept in flight instead,
// so the leader's log pipelines them (cluster/DESIGN.md, "Limits").
const replicatedPutsInFlight = 4

// putShape returns how WriteContent batches chunks for the applier a: the
// most chunks and stored bytes of one OpPutChunks and how many are in
// flight at once.
func putShape(a Applier) (maxChunks, maxBytes, inFlight int) {
	if _, local := a.(*DB); local {
		return chunksPerPut, bytesPerPut, putsInFlight
	}
	return 1, ChunkSize + 1, replicatedPutsInFlight
}

// Chunk codecs, stored as the first byte of a chunk value.
const (
	codecRaw  byte = 0
	codecZstd byte = 1
)

// Chunk is one encoded piece of content, addressed by the SHA-256 of its
// raw bytes so identical content is stored once.
type Chunk struct {
	SHA  string `json:"sha"`
	Size int64  `json:"size"` // raw size
	// Value is the stored form: a codec byte (codecRaw or codecZstd)
	// followed by the encoded bytes, so it is written without a copy.
	Value []byte `json:"value"`
}

// ChunkRef is a manifest's reference to a chunk.
type ChunkRef struct {
	SHA  string `json:"sha"`
	Size int64  `json:"size"`
}

// Manifest describes a whole content object: its chunks in order, its size
// and its SHA-256. Manifests are shared between documents with identical
// content and reference-counted.
type Manifest struct {
	SHA256 string     `json:"sha256"`
	Size   int64      `json:"size"`
	Chunks []ChunkRef `json:"chunks"`
	Refs   uint64     `json:"refs,omitempty"`
}

var (
	zenc, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true))
	zdec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderLowmem(true))
)

// EncodeChunk hashes raw and compresses it with zstd when that saves at
// least an eighth; otherwise it is stored as is. raw is copied.
func EncodeChunk(raw []byte) Chunk { return encodeChunk(raw, nil) }

// encodeChunk is EncodeChunk writing the value into dst's memory when it
// is large enough.
func encodeChunk(raw, dst []byte) Chunk {
	sum := sha256.Sum256(raw)
	c := Chunk{SHA: hex.EncodeToString(sum[:]), Size: int64(len(raw))}
	if len(raw) >= 512 && compressible(raw) {
		if dst == nil {
			dst = make([]byte, 0, 1+len(raw)/2)
		}
		z := zenc.EncodeAll(raw, append(dst[:0], codecZstd))
		if len(z)-1 < len(raw)-len(raw)/8 {
			c.Value = z
			return c
		}
	}
	if cap(dst) < 1+len(raw) {
		dst = make([]byte, 0, 1+len(raw))
	}
	c.Value = append(append(dst[:0], codecRaw), raw...)
	return c
}

// valueBufs recycles the chunk values WriteContent builds. Apply is done
// with a command's values when it returns: Badger has copied them into its
// value log (and a replicated command has been encoded), so the memory can
// take the next chunks instead of being collected — a gigabyte upload
// would otherwise allocate a gigabyte.
var valueBufs = sync.Pool{New: func() any { b := make([]byte, 0, ChunkSize+1); return &b }}

func releaseValues(chunks []Chunk) {
	for i := range chunks {
		if v := chunks[i].Value; cap(v) == ChunkSize+1 {
			v = v[:0]
			valueBufs.Put(&v)
		}
		chunks[i].Value = nil
	}
}

// sampleSize is how much of a large chunk compressible tries first.
const sampleSize = 64 << 10

var sampleBufs = sync.Pool{New: func() any { b := make([]byte, 0, sampleSize+sampleSize/8); return &b }}

// compressible tells from a sample whether compressing raw is worth trying:
// scanned PDFs, JPEGs and ZIP-based Office files are already compressed,
// and trying zstd on every MiB of them halves upload throughput.
func compressible(raw []byte) bool {
	if len(raw) <= 2*sampleSize {
		return true
	}
	s := raw[len(raw)/2-sampleSize/2:][:sampleSize] // the middle skips headers
	bp := sampleBufs.Get().(*[]byte)
	z := zenc.EncodeAll(s, (*bp)[:0])
	ok := len(z) < len(s)-len(s)/8
	if cap(z) == cap(*bp) {
		sampleBufs.Put(bp)
	}
	return ok
}

func decodeChunk(val []byte, dst []byte) ([]byte, error) {
	if len(val) == 0 {
		return nil, errors.New("empty chunk value")
	}
	switch val[0] {
	case codecRaw:
		return append(dst[:0], val[1:]...), nil
	case codecZstd:
		return zdec.DecodeAll(val[1:], dst[:0])
	default:
		return nil, fmt.Errorf("unknown chunk codec %d", val[0])
	}
}

// PutChunks is the payload of OpPutChunks.
type PutChunks struct {
	Chunks []Chunk `json:"chunks"`
}

func (PutChunks) inMemory() {}

func applyPutChunks(t *tx, c *Command) (any, error) {
	p, err := decode[PutChunks](c)
	if err != nil {
		return nil, err
	}
	return nil, putChunks(t, p.Chunks)
}

func putChunks(t *tx, chunks []Chunk) error {
	for _, ch := range chunks {
		ok, err := t.exists(chunkKey(ch.SHA))
		if err != nil {
			return err
		}
		if ok {
			continue
		}
		if len(ch.Value) == 0 {
			return fmt.Errorf("chunk %s has no value", ch.SHA)
		}
		if err := t.set(chunkKey(ch.SHA), ch.Value); err != nil {
			return err
		}
	}
	return nil
}

// attachManifest takes a reference on m, creating it (and taking references
// on its chunks) when it is new. Every chunk must already exist.
func attachManifest(t *tx, m Manifest) error {
	var cur Manifest
	err := t.getJSON(manifestKey(m.SHA256), &cur)
	if err == nil {
		cur.Refs++
		return t.setJSON(manifestKey(m.SHA256), cur)
	}
	if !errors.Is(err, ErrNotFound) {
		return err
	}
	for _, ch := range m.Chunks {
		n, err := chunkRefs(t, ch.SHA)
		if err != nil {
			return err
		}
		if n == 0 {
			ok, err := t.exists(chunkKey(ch.SHA))
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("%w %s", ErrMissingChunk, ch.SHA)
			}
		}
		if err := t.set(chunkRefsKey(ch.SHA), encodeUint64(n+1)); err != nil {
			return err
		}
	}
	m.Refs = 1
	return t.setJSON(manifestKey(m.SHA256), m)
}

// releaseManifest drops a reference on the manifest sha and deletes it, and
// chunks nobody references any more, when it was the last.
func releaseManifest(t *tx, sha string) error {
	if sha == "" {
		return nil
	}
	var m Manifest
	if err := t.getJSON(manifestKey(sha), &m); err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		return err
	}
	if m.Refs > 1 {
		m.Refs--
		return t.setJSON(manifestKey(sha), m)
	}
	if err := t.del(manifestKey(sha)); err != nil {
		return err
	}
	for _, ch := range m.Chunks {
		n, err := chunkRefs(t, ch.SHA)
		if err != nil {
			return err
		}
		if n > 1 {
			if err := t.set(chunkRefsKey(ch.SHA), encodeUint64(n-1)); err != nil {
				return err
			}
			continue
		}
		if err := t.del(chunkRefsKey(ch.SHA)); err != nil {
			return err
		}
		if err := t.del(chunkKey(ch.SHA)); err != nil {
			return err
		}
	}
	return nil
}

func chunkRefs(t *tx, sha string) (uint64, error) {
	b, err := t.getRaw(chunkRefsKey(sha))
	if errors.Is(err, ErrNotFound) {
		return 0, nil
	}
	return decodeUint64(b), err
}

// SweepChunks is the payload of OpSweepChunks: chunks that had no
// references when the caller looked.
type SweepChunks struct {
	SHAs []string `json:"shas"`
}

func applySweepChunks(t *tx, c *Command) (any, error) {
	p, err := decode[SweepChunks](c)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, sha := range p.SHAs {
		refs, err := chunkRefs(t, sha)
		if err != nil {
			return nil, err
		}
		if refs > 0 {
			continue
		}
		if err := t.del(chunkKey(sha)); err != nil {
			return nil, err
		}
		n++
	}
	return n, nil
}

// UnreferencedChunks lists chunks that no manifest references: leftovers of
// uploads that were interrupted before their commit. Only call it when no
// upload is in flight (at start), or the caller may sweep a chunk that an
// upload is about to commit.
func (d *DB) UnreferencedChunks(limit int) ([]string, error) {
	var out []string
	err := d.view(func(t *tx) error {
		// One pass over the chunks beside one over the reference counts,
		// both in sha order: a Get per chunk took 45 s at a million
		// documents, before a single server answered its first request.
		copts := badger.DefaultIteratorOptions
		copts.PrefetchValues = false
		copts.Prefix = []byte(pfxChunk)
		chunks := t.txn.NewIterator(copts)
		defer chunks.Close()
		ropts := badger.DefaultIteratorOptions
		ropts.PrefetchValues = false
		ropts.Prefix = []byte(pfxChunkRefs)
		refs := t.txn.NewIterator(ropts)
		defer refs.Close()
		refs.Rewind()
		for chunks.Rewind(); chunks.Valid(); chunks.Next() {
			sha := chunks.Item().Key()[len(pfxChunk):]
			for refs.Valid() && bytes.Compare(refs.Item().Key()[len(pfxChunkRefs):], sha) < 0 {
				refs.Next()
			}
			var n uint64
			if refs.Valid() && bytes.Equal(refs.Item().Key()[len(pfxChunkRefs):], sha) {
				if err := refs.Item().Value(func(v []byte) error { n = decodeUint64(v); return nil }); err != nil {
					return err
				}
			}
			if n == 0 {
				out = append(out, string(sha))
				if len(out) >= limit {
					return nil
				}
			}
		}
		return nil
	})
	return out, err
}

// Applier applies commands: *DB itself, or a cluster node that replicates
// them first.
type Applier interface {
	Apply(ctx context.Context, c *Command) (Result, error)
}

// ErrTooLarge is returned by WriteContent when the content exceeds the limit.
var ErrTooLarge = errors.New("content too large")

// WriteContent streams r into content chunks through a and returns the
// manifest. At most limit bytes are accepted (limit <= 0: no limit). To
// save a transaction on small content, up to one chunk is not written but
// returned as tail: the caller must include it in the command that attaches
// the manifest. Memory use is bounded by a few chunks, whatever the size.
//
// onChunk, when not nil, is called with each chunk's hash before the chunk
// is written, so the caller can protect it from a concurrent sweep.
func WriteContent(ctx context.Context, a Applier, r io.Reader, limit int64, onChunk func(sha string)) (Manifest, []Chunk, error) {
	type item struct {
		ch  Chunk
		err error
	}
	// Chunk puts run on the caller's context, not on the one a failure
	// cancels: fail waits for every put in flight to finish, so that the
	// caller's sweep of the chunks comes after them. A put cut off instead
	// could still reach the leader and be applied after the sweep, its
	// chunk left behind until the leader's grace sweep.
	putCtx := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// One goroutine reads, hashes and compresses chunks while another
	// hashes the whole content and this one writes, so CPU work overlaps
	// with the fsync of the previous batch.
	ch := make(chan item, 2)
	gate, _ := a.(interface{ WriteState() WriteState })
	var size int64
	var whole []byte
	var wg sync.WaitGroup
	wg.Add(2)
	toHash := make(chan *[]byte, 2)
	free := make(chan *[]byte, 3)
	for range 3 {
		free <- chunkBufs.Get().(*[]byte)
	}
	go func() {
		defer wg.Done()
		h := sha256.New()
		for bp := range toHash {
			h.Write(*bp)
			free <- bp
		}
		whole = h.Sum(nil)
	}()
	go func() {
		defer wg.Done()
		defer close(ch)
		defer close(toHash)
		// r is the client's body: a panic in it fails this upload only.
		// held is the buffer taken from free and not handed on, to give
		// back then (the buffers are counted at the end).
		var held *[]byte
		err := guard.Run(nil, guard.Storage, func() error {
			for {
				// A closed write gate (a full disk) stops the upload
				// before the next chunk is read, not at the next put.
				if gate != nil {
					if st := gate.WriteState(); !st.Writable {
						return &WriteRefusedError{Kind: st.Kind, Reason: st.Reason}
					}
				}
				bp := <-free
				held = bp
				buf := (*bp)[:ChunkSize]
				n, err := io.ReadFull(r, buf)
				if n > 0 {
					size += int64(n)
					if limit > 0 && size > limit {
						return ErrTooLarge
					}
					*bp = buf[:n]
					held = nil
					toHash <- bp
					select {
					case ch <- item{ch: encodeChunk(buf[:n], *valueBufs.Get().(*[]byte))}:
					case <-ctx.Done():
						return nil
					}
				}
				if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
					return nil
				}
				if err != nil {
					return err
				}
			}
		})
		if held != nil {
			free <- held
		}
		if err != nil {
			ch <- item{err: err}
		}
	}()
	defer func() {
		// Both goroutines have exited (wg.Wait ran on every path); return
		// the buffers.
		for range 3 {
			bp := <-free
			*bp = (*bp)[:cap(*bp)]
			chunkBufs.Put(bp)
		}
	}()
	var m Manifest
	var batch []Chunk
	var batchBytes int
	maxChunks, maxBytes, inFlight := putShape(a)
	// Up to two PutChunks are in flight on a single server, so Badger
	// copies one batch into its value log while the previous one is being
	// synced; more in a cluster, where each carries one chunk.
	var (
		puts    sync.WaitGroup
		putMu   sync.Mutex
		putErr  error
		putSlot = make(chan struct{}, inFlight)
	)
	putFailed := func() error {
		putMu.Lock()
		defer putMu.Unlock()
		return putErr
	}
	fail := func(err error) (Manifest, []Chunk, error) {
		cancel()
		for range ch { //nolint:revive // drain so the reader goroutine exits
		}
		wg.Wait()
		puts.Wait()
		return Manifest{}, nil, err
	}
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := putFailed(); err != nil {
			return err
		}
		chunks := batch
		cmd, err := NewCommand(OpPutChunks, "", "", zeroTime, PutChunks{Chunks: chunks})
		if err != nil {
			return err
		}
		batch, batchBytes = nil, 0
		putSlot <- struct{}{}
		puts.Add(1)
		go func() {
			defer puts.Done()
			defer func() { <-putSlot }()
			err := applyPut(putCtx, a, cmd)
			releaseValues(chunks)
			if err != nil {
				putMu.Lock()
				if putErr == nil {
					putErr = fmt.Errorf("put chunks: %w", err)
				}
				putMu.Unlock()
			}
		}()
		return nil
	}
	for it := range ch {
		if it.err != nil {
			return fail(it.err)
		}
		// Stop at the first chunk after a refused put: the rest of the
		// body would only be read to be thrown away.
		if err := putFailed(); err != nil {
			return fail(err)
		}
		if onChunk != nil {
			onChunk(it.ch.SHA)
		}
		// A full batch is written when the next chunk arrives, so the
		// last chunk always stays for the caller's commit command (the
		// tail) when it is alone.
		if len(batch) >= maxChunks || batchBytes >= maxBytes {
			if err := flush(); err != nil {
				return fail(err)
			}
		}
		m.Chunks = append(m.Chunks, ChunkRef{SHA: it.ch.SHA, Size: it.ch.Size})
		batch = append(batch, it.ch)
		batchBytes += len(it.ch.Value)
	}
	wg.Wait()
	m.Size = size
	m.SHA256 = hex.EncodeToString(whole)
	var tail []Chunk
	if len(batch) == 1 {
		tail = batch
	} else if err := flush(); err != nil {
		puts.Wait()
		return Manifest{}, nil, err
	}
	puts.Wait()
	if err := putFailed(); err != nil {
		return Manifest{}, nil, err
	}
	return m, tail, nil
}

// putRetryFor bounds how long a replicated chunk command is sent again
// after a failure whose outcome is unknown (a leader lost its leadership
// while committing it, the connection to the leader broke).
const putRetryFor = 20 * time.Second

// applyPut applies one OpPutChunks. Through a replicating applier a failure
// that is not a refusal is retried until putRetryFor: the command is
// idempotent (a chunk already stored is skipped), so sending it again,
// to the same or a new leader, is safe and lets an upload outlive a
// leader change. The single server fails at once.
func applyPut(ctx context.Context, a Applier, cmd *Command) error {
	_, local := a.(*DB)
	deadline := time.Now().Add(putRetryFor)
	for attempt := 1; ; attempt++ {
		err := guard.Run(nil, guard.Storage, func() error { _, err := a.Apply(ctx, cmd); return err })
		if err == nil || local || !retryablePut(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(min(attempt, 10)) * 100 * time.Millisecond):
		}
	}
}

// retryablePut tells failures whose outcome is unknown from answers: a
// refused write (full disk, no leader within the applier's own wait), a
// validation error, a closed store or an ended context are final.
func retryablePut(err error) bool {
	var (
		wr *WriteRefusedError
		ve *ValidationError
		ou *OutcomeUnknownError
	)
	switch {
	case errors.As(err, &ou): // before wr, which it unwraps to: chunks are idempotent
		return true
	case errors.As(err, &wr), errors.As(err, &ve), errors.Is(err, ErrClosed), errors.Is(err, ErrTooLarge),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false
	}
	return true
}

// SmallContent builds the manifest of content of at most one chunk without
// writing anything: the chunk is returned for the command that attaches it.
// Larger content goes through WriteContent.
func SmallContent(raw []byte) (Manifest, []Chunk, bool) {
	if len(raw) > ChunkSize {
		return Manifest{}, nil, false
	}
	m := Manifest{Size: int64(len(raw))}
	if len(raw) == 0 {
		sum := sha256.Sum256(nil)
		m.SHA256 = hex.EncodeToString(sum[:])
		return m, nil, true
	}
	ch := EncodeChunk(raw)
	m.SHA256 = ch.SHA // one chunk: the content's hash is the chunk's
	m.Chunks = []ChunkRef{{SHA: ch.SHA, Size: ch.Size}}
	return m, []Chunk{ch}, true
}

// chunkBufs recycles WriteContent's read buffers.
var chunkBufs = sync.Pool{New: func() any { b := make([]byte, ChunkSize); return &b }}

// ContentReader reads a document's content chunk by chunk. It implements
// io.ReadSeeker so HTTP range requests can be served.
type ContentReader struct {
	db     *DB
	chunks []ChunkRef
	size   int64
	off    int64  // logical read offset
	cur    int    // index of the chunk in buf, -1 when none
	curOff int64  // logical offset of buf[0]
	buf    []byte // decoded current chunk
}

// Size returns the content length.
func (r *ContentReader) Size() int64 { return r.size }

// Read implements io.Reader.
func (r *ContentReader) Read(p []byte) (int, error) {
	if r.off >= r.size {
		return 0, io.EOF
	}
	if r.cur < 0 || r.off < r.curOff || r.off >= r.curOff+int64(len(r.buf)) {
		if err := r.load(); err != nil {
			return 0, err
		}
	}
	n := copy(p, r.buf[r.off-r.curOff:])
	r.off += int64(n)
	return n, nil
}

// Seek implements io.Seeker.
func (r *ContentReader) Seek(offset int64, whence int) (int64, error) {
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = r.off + offset
	case io.SeekEnd:
		abs = r.size + offset
	default:
		return 0, errors.New("seek: invalid whence")
	}
	if abs < 0 {
		return 0, errors.New("seek: negative position")
	}
	r.off = abs
	return abs, nil
}

// Close releases the reader's buffers.
func (r *ContentReader) Close() error {
	r.buf = nil
	return nil
}

func (r *ContentReader) load() error {
	var start int64
	for i, ch := range r.chunks {
		if r.off < start+ch.Size {
			if err := r.db.badgerView(func(txn *badger.Txn) error { return r.loadIn(txn, i) }); err != nil {
				return err
			}
			r.cur, r.curOff = i, start
			return nil
		}
		start += ch.Size
	}
	return io.EOF
}

// loadIn decodes chunk i into buf, reading it in txn.
func (r *ContentReader) loadIn(txn *badger.Txn, i int) error {
	ch := r.chunks[i]
	item, err := txn.Get(chunkKey(ch.SHA))
	if err != nil {
		return fmt.Errorf("read chunk %s: %w", ch.SHA, err)
	}
	r.db.touched(int(item.ValueSize()))
	// Decode straight out of Badger's value: it is valid until the
	// transaction ends, and decoding copies it.
	err = item.Value(func(val []byte) error {
		r.buf, err = decodeChunk(val, r.buf)
		if err != nil {
			return fmt.Errorf("decode chunk %s: %w", ch.SHA, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if int64(len(r.buf)) != ch.Size {
		return fmt.Errorf("chunk %s: size %d, want %d", ch.SHA, len(r.buf), ch.Size)
	}
	return nil
}

// ReadAllSmall reads content of at most max bytes into memory; it is used
// for inline content responses and content type detection only.
func ReadAllSmall(r io.Reader, max int64) ([]byte, error) {
	var b bytes.Buffer
	if _, err := io.Copy(&b, io.LimitReader(r, max)); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
