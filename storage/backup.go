package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/pb"
	"google.golang.org/protobuf/proto"
)

// backupListBytes is roughly how much one KVList of a backup holds before
// it is written: small records are grouped, a content chunk goes alone.
const backupListBytes = 1 << 20

// Backup writes a consistent snapshot of the store to w in Badger's load
// format (size-prefixed KVLists; Restore reads it). It walks one read
// transaction and holds one value at a time: Badger's own Stream-based
// backup buffers up to 32 batches of 16 MiB when the writer is slower
// than the disk (a network client), which a small appliance cannot spare.
// Writers are not held up. It returns the number of keys and the
// snapshot's version. A node's replication state (the rf/ keys: the Raft
// index it applied) is left out: a restored store starts a new cluster,
// whose log counts from 1 again and would otherwise be skipped.
func (d *DB) Backup(w io.Writer) (keys int, version uint64, err error) {
	d.rlock()
	defer d.bmu.RUnlock()
	txn := d.bdb.NewTransaction(false)
	defer txn.Discard()
	version = txn.ReadTs()
	keys, err = d.writeKVs(txn, w, func(k []byte) bool { return bytes.HasPrefix(k, []byte(pfxRaft)) })
	return keys, version, err
}

// writeKVs writes every live key of txn but those skip refuses to w, in
// the format of Backup, holding one value at a time.
func (d *DB) writeKVs(txn *badger.Txn, w io.Writer, skip func(key []byte) bool) (keys int, err error) {
	it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: false})
	defer it.Close()
	list := &pb.KVList{}
	size := 0
	var buf []byte
	flush := func() error {
		if len(list.Kv) == 0 {
			return nil
		}
		b, err := proto.MarshalOptions{}.MarshalAppend(buf[:0], list)
		if err != nil {
			return err
		}
		buf = b
		var hdr [8]byte
		binary.LittleEndian.PutUint64(hdr[:], uint64(len(b)))
		if _, err := w.Write(hdr[:]); err != nil {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
		d.touched(len(b))
		list.Kv, size = list.Kv[:0], 0
		return nil
	}
	for it.Rewind(); it.Valid(); it.Next() {
		item := it.Item()
		if item.IsDeletedOrExpired() || (skip != nil && skip(item.Key())) {
			continue
		}
		val, err := item.ValueCopy(nil)
		if err != nil {
			return keys, fmt.Errorf("backup: read %q: %w", item.Key(), err)
		}
		list.Kv = append(list.Kv, &pb.KV{
			Key:       item.KeyCopy(nil),
			Value:     val,
			UserMeta:  []byte{item.UserMeta()},
			Version:   item.Version(),
			ExpiresAt: item.ExpiresAt(),
		})
		keys++
		size += len(val) + len(item.Key())
		if size >= backupListBytes {
			if err := flush(); err != nil {
				return keys, err
			}
		}
	}
	return keys, flush()
}

// Restore loads a backup written by Backup into a new store in dir (which
// must not hold one) and syncs it to disk.
func Restore(dir string, r io.Reader) error {
	if _, err := os.Stat(filepath.Join(dir, "MANIFEST")); err == nil {
		return errors.New("restore: the store directory already holds a database")
	}
	opts := badger.DefaultOptions(dir).
		WithLogger(nil).
		WithValueThreshold(valueThreshold).
		WithValueLogFileSize(256 << 20).
		WithMemTableSize(8 << 20).
		WithNumMemtables(3).
		WithBlockCacheSize(16 << 20).
		WithIndexCacheSize(8 << 20).
		WithMetricsEnabled(false)
	bdb, err := badger.Open(opts)
	if err != nil {
		return err
	}
	if err := bdb.Load(r, 16); err != nil {
		bdb.Close()
		return fmt.Errorf("restore: %w", err)
	}
	if err := bdb.Sync(); err != nil {
		bdb.Close()
		return err
	}
	if err := bdb.Close(); err != nil {
		return err
	}
	return syncDir(dir)
}

// syncDir fsyncs every file of dir and dir itself. On Windows a file is
// flushed through a handle that may write (FlushFileBuffers refuses a
// read-only one: "Access denied"), and a directory cannot be flushed.
func syncDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		flag := os.O_RDONLY
		if runtime.GOOS == "windows" {
			flag = os.O_RDWR
		}
		f, err := os.OpenFile(filepath.Join(dir, e.Name()), flag, 0)
		if err != nil {
			return err
		}
		err = f.Sync()
		f.Close()
		if err != nil {
			return err
		}
	}
	if runtime.GOOS == "windows" {
		return nil
	}
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// Size reports the bytes of the LSM tree and the value log on disk (backup
// estimates, metrics). Badger's own Size is refreshed once a minute; this
// reads the directory.
func (d *DB) Size() (lsm, vlog int64) {
	entries, err := os.ReadDir(d.dir)
	if d.dir == "" || err != nil {
		d.rlock()
		defer d.bmu.RUnlock()
		return d.bdb.Size()
	}
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			continue
		}
		switch filepath.Ext(e.Name()) {
		case ".sst", ".mem":
			lsm += diskUsage(fi)
		case ".vlog":
			vlog += diskUsage(fi)
		}
	}
	return lsm, vlog
}
