// Package backup writes and restores Quire backup archives: a consistent
// snapshot of the store plus the data dir's keys and certificate, framed
// so that a truncated or damaged archive is detected before it is used.
//
// Layout: the magic "QUIREBK1", then frames of one kind byte, a big-endian
// uint32 length and the payload:
//
//	'H' header (JSON Info: format, creation time, Quire version)
//	'F' a data dir file: uint16 name length, name, uint32 mode, content
//	'D' the next piece of the store's snapshot (storage.Backup's stream)
//	'E' end (JSON: keys, snapshot version, store bytes, SHA-256 of every
//	    byte before this frame, and the SHA-256 of this JSON without it)
//
// The store snapshot is not indexed: the search index is derived and is
// rebuilt when a restored data dir first starts.
package backup

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"quire/guard"
	"quire/safepath"
	"quire/storage"
)

const (
	magic        = "QUIREBK1"
	format       = 1
	maxFrame     = 4 << 20
	dataFrameLen = 1 << 20
)

// dirs are the data dir folders an archive carries besides the store: the
// token and URL signing keys (tokens and signed URLs stay valid) and the
// self-signed certificate (clients that pinned it keep working).
var dirs = []string{"keys", "tls"}

// Info describes an archive.
type Info struct {
	Format       int       `json:"format"`
	Created      time.Time `json:"created"`
	QuireVersion string    `json:"quireVersion"`
	// StoreFormat is the format of the store the snapshot was taken of
	// (storage.StoreFormat); archives written before it was recorded
	// have none, and hold format 1.
	StoreFormat int `json:"storeFormat,omitempty"`
	// Set from the end frame:
	Keys       int      `json:"keys,omitempty"`
	Version    uint64   `json:"version,omitempty"`
	StoreBytes int64    `json:"storeBytes,omitempty"`
	Files      []string `json:"files,omitempty"`
}

type end struct {
	Keys       int    `json:"keys"`
	Version    uint64 `json:"version"`
	StoreBytes int64  `json:"storeBytes"`
	SHA256     string `json:"sha256"`
	// Sum is the SHA-256 of the frame's JSON without Sum: the checksum
	// covers only what comes before the end frame. Archives written
	// before it was added have none.
	Sum string `json:"sum,omitempty"`
}

// sum returns e's Sum.
func (e end) sum() string {
	e.Sum = ""
	b, _ := json.Marshal(e)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Estimate is roughly how many bytes an archive of db will have (progress
// bars): the store's size on disk.
func Estimate(db *storage.DB) int64 {
	lsm, vlog := db.Size()
	return lsm + vlog
}

// Write streams an archive of db and the data dir's keys to w. progress,
// when set, is called with the bytes written so far.
func Write(w io.Writer, db *storage.DB, dataDir, quireVersion string, progress func(int64)) (Info, error) {
	fw := &frameWriter{w: w, h: sha256.New(), progress: progress}
	info := Info{Format: format, Created: time.Now().UTC(), QuireVersion: quireVersion, StoreFormat: storage.StoreFormat}
	if err := fw.raw([]byte(magic)); err != nil {
		return info, err
	}
	hdr, _ := json.Marshal(info)
	if err := fw.frame('H', hdr); err != nil {
		return info, err
	}
	for _, d := range dirs {
		entries, err := os.ReadDir(filepath.Join(dataDir, d))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return info, err
		}
		for _, e := range entries {
			if !e.Type().IsRegular() {
				continue
			}
			name := d + "/" + e.Name()
			b, err := os.ReadFile(filepath.Join(dataDir, d, e.Name()))
			if err != nil {
				return info, err
			}
			fi, err := e.Info()
			if err != nil {
				return info, err
			}
			p := make([]byte, 0, 2+len(name)+4+len(b))
			p = binary.BigEndian.AppendUint16(p, uint16(len(name)))
			p = append(p, name...)
			p = binary.BigEndian.AppendUint32(p, uint32(fi.Mode().Perm()))
			p = append(p, b...)
			if err := fw.frame('F', p); err != nil {
				return info, err
			}
			info.Files = append(info.Files, name)
		}
	}
	dw := &dataWriter{fw: fw, buf: make([]byte, 0, dataFrameLen)}
	keys, version, err := db.Backup(dw)
	if err == nil {
		err = dw.flush()
	}
	if err != nil {
		return info, err
	}
	info.Keys, info.Version, info.StoreBytes = keys, version, dw.total
	e := end{Keys: keys, Version: version, StoreBytes: dw.total, SHA256: hex.EncodeToString(fw.h.Sum(nil))}
	e.Sum = e.sum()
	b, _ := json.Marshal(e)
	return info, fw.frame('E', b)
}

type frameWriter struct {
	w        io.Writer
	h        hash.Hash
	n        int64
	progress func(int64)
}

func (f *frameWriter) raw(b []byte) error {
	f.h.Write(b)
	_, err := f.w.Write(b)
	f.n += int64(len(b))
	if f.progress != nil {
		f.progress(f.n)
	}
	return err
}

func (f *frameWriter) frame(kind byte, p []byte) error {
	var hdr [5]byte
	hdr[0] = kind
	binary.BigEndian.PutUint32(hdr[1:], uint32(len(p)))
	if err := f.raw(hdr[:]); err != nil {
		return err
	}
	return f.raw(p)
}

// dataWriter cuts the store's stream into 'D' frames.
type dataWriter struct {
	fw    *frameWriter
	buf   []byte
	total int64
}

func (d *dataWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		k := min(len(p), cap(d.buf)-len(d.buf))
		d.buf = append(d.buf, p[:k]...)
		p = p[k:]
		if len(d.buf) == cap(d.buf) {
			if err := d.flush(); err != nil {
				return 0, err
			}
		}
	}
	d.total += int64(n)
	return n, nil
}

func (d *dataWriter) flush() error {
	if len(d.buf) == 0 {
		return nil
	}
	err := d.fw.frame('D', d.buf)
	d.buf = d.buf[:0]
	return err
}

// ErrCorrupt is an archive that is truncated, damaged or not an archive.
var ErrCorrupt = errors.New("backup archive is damaged or incomplete")

// ErrNotEmpty is a restore into a data dir that holds files: refused
// before anything is written, so the directory is as it was.
var ErrNotEmpty = errors.New("restore refused")

// Restore unpacks an archive into dataDir, which must not exist or be
// empty. On any error (a damaged or truncated archive included) what was
// created is removed again. progress, when set, gets the bytes read.
func Restore(r io.Reader, dataDir string, progress func(int64)) (info Info, err error) {
	entries, statErr := os.ReadDir(dataDir)
	if statErr == nil && len(entries) > 0 {
		return info, fmt.Errorf("%w: data dir %s is not empty: restore into a new one", ErrNotEmpty, dataDir)
	}
	created := errors.Is(statErr, fs.ErrNotExist)
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return info, err
	}
	// A failed restore leaves nothing behind: a directory it made is
	// removed, one that was there (empty) is emptied again.
	defer func() {
		if err == nil {
			return
		}
		if created {
			err = errors.Join(err, os.RemoveAll(dataDir))
		} else {
			err = errors.Join(err, removeContents(dataDir))
		}
	}()
	// The store loads in its own goroutine from a pipe fed with 'D'
	// frames, so it never needs the whole snapshot in memory.
	pr, pw := io.Pipe()
	loaded := make(chan error, 1)
	go func() {
		err := guard.Run(nil, guard.Backup, func() error { return storage.Restore(filepath.Join(dataDir, "db"), pr) })
		pr.CloseWithError(err)
		loaded <- err
	}()
	info, err = read(r, progress, func(p []byte, info *Info) error { return writeFile(dataDir, p, info) }, func(p []byte) error {
		_, err := pw.Write(p)
		return err
	})
	if err != nil {
		pw.CloseWithError(err)
		<-loaded
		return info, err
	}
	pw.Close()
	if err := <-loaded; err != nil {
		return info, err
	}
	// The restored store is of the format it was backed up in; the first
	// start migrates it when that is older than this release's.
	return info, storage.MarkFormat(filepath.Join(dataDir, "db"), max(info.StoreFormat, 1))
}

// Verify reads a whole archive and checks its structure and checksum
// without unpacking it (quire backup checks what it received).
func Verify(r io.Reader, progress func(int64)) (Info, error) {
	return read(r, progress, func(p []byte, info *Info) error {
		name, _, _, _, err := parseFile(p)
		if err == nil {
			info.Files = append(info.Files, name)
		}
		return err
	}, func([]byte) error { return nil })
}

// read walks an archive's frames, handing files and store data to the
// callbacks, and checks the end frame's checksum.
func read(r io.Reader, progress func(int64), onFile func([]byte, *Info) error, onData func([]byte) error) (Info, error) {
	var info Info
	fr := &frameReader{r: bufio.NewReaderSize(r, 64<<10), h: sha256.New(), progress: progress}
	m := make([]byte, len(magic))
	if err := fr.read(m); err != nil || string(m) != magic {
		return info, fmt.Errorf("%w: not a Quire backup", ErrCorrupt)
	}
	kind, p, err := fr.next()
	if err != nil || kind != 'H' || json.Unmarshal(p, &info) != nil {
		return info, fmt.Errorf("%w: no header", ErrCorrupt)
	}
	if info.Format != format {
		return info, fmt.Errorf("backup format %d is not supported by this Quire (wants %d)", info.Format, format)
	}
	if info.StoreFormat > storage.StoreFormat {
		return info, fmt.Errorf("the backup holds a store of format %d, made by Quire %s; this release reads format %d at most: restore it with that release or a newer one",
			info.StoreFormat, info.QuireVersion, storage.StoreFormat)
	}
	var storeBytes int64
	for {
		sum := fr.h.Sum(nil)
		kind, p, err := fr.next()
		if err != nil {
			return info, fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		switch kind {
		case 'F':
			if err := onFile(p, &info); err != nil {
				return info, err
			}
		case 'D':
			storeBytes += int64(len(p))
			if err := onData(p); err != nil {
				return info, err
			}
		case 'E':
			// The checksum covers what comes before the end frame; the end
			// frame must be exactly as Write encodes it, and its own Sum
			// must match, so that no damage to its counts goes unnoticed.
			var e end
			canon, _ := json.Marshal(e)
			if json.Unmarshal(p, &e) == nil {
				canon, _ = json.Marshal(e)
			}
			if !bytes.Equal(canon, p) || e.Sum != "" && e.Sum != e.sum() ||
				e.SHA256 != hex.EncodeToString(sum) || e.StoreBytes != storeBytes {
				return info, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
			}
			info.Keys, info.Version, info.StoreBytes = e.Keys, e.Version, e.StoreBytes
			return info, nil
		default:
			return info, fmt.Errorf("%w: unknown frame %q", ErrCorrupt, kind)
		}
	}
}

// parseFile reads a file frame: the file's name (as archived), its folder
// and base name (local separators) and mode; the content follows at body.
func parseFile(p []byte) (name, dir, base string, mode os.FileMode, err error) {
	if len(p) < 2 {
		return "", "", "", 0, fmt.Errorf("%w: short file frame", ErrCorrupt)
	}
	n := int(binary.BigEndian.Uint16(p))
	if len(p) < 2+n+4 {
		return "", "", "", 0, fmt.Errorf("%w: short file frame", ErrCorrupt)
	}
	name = string(p[2 : 2+n])
	mode = os.FileMode(binary.BigEndian.Uint32(p[2+n:])) & 0o777
	dir, base = filepath.Split(filepath.FromSlash(name))
	ok := false
	for _, d := range dirs {
		ok = ok || filepath.Clean(dir) == d
	}
	// The name becomes a file of the data dir: one safe segment on every
	// OS (safepath; issue 43), in one of dirs.
	if !ok || safepath.CheckSegment(base) != nil {
		return "", "", "", 0, fmt.Errorf("%w: unexpected file %q", ErrCorrupt, name)
	}
	return name, dir, base, mode, nil
}

func writeFile(dataDir string, p []byte, info *Info) error {
	name, dir, base, mode, err := parseFile(p)
	if err != nil {
		return err
	}
	body := p[2+len(name)+4:]
	fn, err := safepath.Join(dataDir, filepath.Clean(dir), base)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if err := os.MkdirAll(filepath.Dir(fn), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(fn, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, err = f.Write(body)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	info.Files = append(info.Files, name)
	return err
}

type frameReader struct {
	r        *bufio.Reader
	h        hash.Hash
	n        int64
	progress func(int64)
	buf      []byte
}

func (f *frameReader) read(b []byte) error {
	if _, err := io.ReadFull(f.r, b); err != nil {
		if errors.Is(err, io.EOF) {
			return io.ErrUnexpectedEOF
		}
		return err
	}
	f.h.Write(b)
	f.n += int64(len(b))
	if f.progress != nil {
		f.progress(f.n)
	}
	return nil
}

// next reads one frame; the payload is valid until the next call.
func (f *frameReader) next() (byte, []byte, error) {
	var hdr [5]byte
	if err := f.read(hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if n > maxFrame {
		return 0, nil, fmt.Errorf("frame of %d bytes", n)
	}
	if cap(f.buf) < int(n) {
		f.buf = make([]byte, n)
	}
	p := f.buf[:n]
	return hdr[0], p, f.read(p)
}

// removeContents empties dir (a failed restore leaves nothing behind).
func removeContents(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		errs = append(errs, os.RemoveAll(filepath.Join(dir, e.Name())))
	}
	return errors.Join(errs...)
}
