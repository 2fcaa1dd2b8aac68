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

	"github.com/dgraph-io/badger/v4"
	"github.com/klauspost/compress/zstd"
)

// ChunkSize is the size of a content chunk before compression.
const ChunkSize = 1 << 20

// chunksPerPut bounds how many chunks one OpPutChunks carries, so that a
// command (and a Raft entry) stays around a few MiB.
const chunksPerPut = 4

// Chunk codecs, stored as the first byte of a chunk value.
const (
	codecRaw  byte = 0
	codecZstd byte = 1
)

// Chunk is one encoded piece of content, addressed by the SHA-256 of its
// raw bytes so identical content is stored once.
type Chunk struct {
	SHA   string `json:"sha"`
	Size  int64  `json:"size"`  // raw size
	Codec byte   `json:"codec"` // codecRaw or codecZstd
	Data  []byte `json:"data"`  // encoded bytes
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
func EncodeChunk(raw []byte) Chunk {
	sum := sha256.Sum256(raw)
	c := Chunk{SHA: hex.EncodeToString(sum[:]), Size: int64(len(raw))}
	if len(raw) >= 512 {
		z := zenc.EncodeAll(raw, make([]byte, 0, len(raw)/2))
		if len(z) < len(raw)-len(raw)/8 {
			c.Codec, c.Data = codecZstd, z
			return c
		}
	}
	c.Codec, c.Data = codecRaw, append([]byte(nil), raw...)
	return c
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
		v := make([]byte, 0, len(ch.Data)+1)
		v = append(v, ch.Codec)
		v = append(v, ch.Data...)
		if err := t.set(chunkKey(ch.SHA), v); err != nil {
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
		for _, k := range t.keys([]byte(pfxChunk)) {
			sha := string(k[len(pfxChunk):])
			n, err := chunkRefs(t, sha)
			if err != nil {
				return err
			}
			if n == 0 {
				out = append(out, sha)
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
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// One goroutine reads, hashes and compresses while this one writes, so
	// CPU work overlaps with the fsync of the previous batch.
	ch := make(chan item, chunksPerPut)
	whole := sha256.New()
	var size int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(ch)
		buf := make([]byte, ChunkSize)
		for {
			n, err := io.ReadFull(r, buf)
			if n > 0 {
				size += int64(n)
				if limit > 0 && size > limit {
					ch <- item{err: ErrTooLarge}
					return
				}
				whole.Write(buf[:n])
				select {
				case ch <- item{ch: EncodeChunk(buf[:n])}:
				case <-ctx.Done():
					return
				}
			}
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return
			}
			if err != nil {
				ch <- item{err: err}
				return
			}
		}
	}()
	var m Manifest
	var batch []Chunk
	var batchBytes int
	fail := func(err error) (Manifest, []Chunk, error) {
		cancel()
		for range ch { //nolint:revive // drain so the reader goroutine exits
		}
		wg.Wait()
		return Manifest{}, nil, err
	}
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		cmd, err := NewCommand(OpPutChunks, "", "", zeroTime, PutChunks{Chunks: batch})
		if err != nil {
			return err
		}
		if _, err := a.Apply(ctx, cmd); err != nil {
			return fmt.Errorf("put chunks: %w", err)
		}
		batch, batchBytes = nil, 0
		return nil
	}
	for it := range ch {
		if it.err != nil {
			return fail(it.err)
		}
		if onChunk != nil {
			onChunk(it.ch.SHA)
		}
		m.Chunks = append(m.Chunks, ChunkRef{SHA: it.ch.SHA, Size: it.ch.Size})
		batch = append(batch, it.ch)
		batchBytes += len(it.ch.Data)
		if len(batch) >= chunksPerPut || batchBytes >= chunksPerPut*ChunkSize/2 {
			if err := flush(); err != nil {
				return fail(err)
			}
		}
	}
	wg.Wait()
	m.Size = size
	m.SHA256 = hex.EncodeToString(whole.Sum(nil))
	if len(batch) == 1 {
		return m, batch, nil
	}
	if err := flush(); err != nil {
		return Manifest{}, nil, err
	}
	return m, nil, nil
}

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
	raw    []byte
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
	r.buf, r.raw = nil, nil
	return nil
}

func (r *ContentReader) load() error {
	var start int64
	for i, ch := range r.chunks {
		if r.off < start+ch.Size {
			err := r.db.bdb.View(func(txn *badger.Txn) error {
				item, err := txn.Get(chunkKey(ch.SHA))
				if err != nil {
					return fmt.Errorf("read chunk %s: %w", ch.SHA, err)
				}
				r.raw, err = item.ValueCopy(r.raw[:0])
				return err
			})
			if err != nil {
				return err
			}
			r.buf, err = decodeChunk(r.raw, r.buf)
			if err != nil {
				return fmt.Errorf("decode chunk %s: %w", ch.SHA, err)
			}
			if int64(len(r.buf)) != ch.Size {
				return fmt.Errorf("chunk %s: size %d, want %d", ch.SHA, len(r.buf), ch.Size)
			}
			r.cur, r.curOff = i, start
			return nil
		}
		start += ch.Size
	}
	return io.EOF
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
