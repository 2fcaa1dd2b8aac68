package storage

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// Replica digests (cluster/DESIGN.md, "Replicas proven equal"): the
// leader proposes OpDigestMark; every member, when it applies the mark,
// pins a read transaction at exactly that index (the FSM applies entries
// one at a time around a mark) and hashes it in the background. Members
// that applied the same log prefix hold the same state, so their digests
// at one mark are equal; one that differs holds other data.

// OpDigestMark is a log entry that changes nothing but the applied
// index: the point at which every member takes its digest. Its payload
// is empty. A release that does not know it fails it deterministically
// (unknown op) and records the index: the log stays compatible.
const OpDigestMark Op = "DigestMark"

func applyDigestMark(*tx, *Command) (any, error) { return nil, nil }

// DigestVersion names the algorithm Snapshot.Digest computes. Raise it
// with any change to what the walk hashes or how (the keys it skips, the
// chunk rule, the length framing, the kinds and their prefixes): the
// leader compares only digests of its own version
// (cluster.VerifyReport.Judge), so during a rolling upgrade that changes
// the algorithm, members still on the other version are reported as not
// comparable instead of divergent, and nobody is demoted. The release
// that brought versions kept the algorithm unchanged, so a digest
// without a version (a release before them) is of version 1.
const DigestVersion = 1

// Digest sums a member's state at an applied index.
type Digest struct {
	// Index is the applied index the digest was taken at (the mark's).
	Index uint64 `json:"index"`
	// Version is the algorithm's (DigestVersion of the code that took
	// it; 0 from a release before versions: see AlgorithmVersion).
	Version int `json:"version"`
	// SHA256 covers every key and value in key order but the restore
	// marker; a content chunk counts by its key (which names the SHA-256
	// of its content) and its stored size, so a digest never reads the
	// content itself.
	SHA256 string `json:"sha256"`
	// Counts by kind, to say where two digests differ.
	Documents  int `json:"documents"`
	Versions   int `json:"versions"`
	Tags       int `json:"tags"`
	Attributes int `json:"attributes"`
	Chunks     int `json:"chunks"`
	Keys       int `json:"keys"`
	// Kinds holds a SHA-256 per kind (documents, versions, tags,
	// attributes, content, other) to say which kind differs.
	Kinds map[string]string `json:"kinds"`
	// Took is how long the walk took.
	Took time.Duration `json:"took"`
}

// digestKinds maps a key prefix to the kind it counts under.
var digestKinds = map[string]string{
	pfxDoc: "documents", pfxVersion: "versions", pfxTag: "tags", pfxDocAttr: "attributes",
	pfxChunk: "content", pfxManifest: "content", pfxChunkRefs: "content",
}

func digestKind(key []byte) string {
	for i := 1; i < len(key) && i <= 4; i++ {
		if key[i-1] == '/' {
			if k, ok := digestKinds[string(key[:i])]; ok {
				return k
			}
			break
		}
	}
	return "other"
}

// Digest walks the snapshot's view (a read transaction at its applied
// index) and sums it. It reads every value but the content chunks'; it
// holds one value at a time, and stops when ctx ends (the node closes).
func (s *Snapshot) Digest(ctx context.Context) (Digest, error) {
	start := time.Now()
	d := Digest{Index: s.applied, Version: DigestVersion, Kinds: map[string]string{}}
	all := sha256.New()
	kinds := map[string]interface {
		Write([]byte) (int, error)
		Sum([]byte) []byte
	}{}
	for _, k := range []string{"documents", "versions", "tags", "attributes", "content", "other"} {
		kinds[k] = sha256.New()
	}
	opts := badger.DefaultIteratorOptions
	opts.PrefetchValues = false
	it := s.txn.NewIterator(opts)
	defer it.Close()
	var lb [8]byte
	write := func(k string, b []byte) {
		binary.BigEndian.PutUint64(lb[:], uint64(len(b)))
		all.Write(lb[:])
		all.Write(b)
		kinds[k].Write(lb[:])
		kinds[k].Write(b)
	}
	for it.Rewind(); it.Valid(); it.Next() {
		if d.Keys%4096 == 0 && ctx.Err() != nil {
			return Digest{}, fmt.Errorf("digest: %w", ctx.Err())
		}
		item := it.Item()
		key := item.Key()
		if string(key) == string(restoringKey) {
			continue
		}
		kind := digestKind(key)
		write(kind, key)
		d.Keys++
		switch {
		case len(key) > len(pfxChunk) && string(key[:len(pfxChunk)]) == pfxChunk:
			d.Chunks++
			binary.BigEndian.PutUint64(lb[:], uint64(item.ValueSize()))
			write(kind, lb[:])
			continue
		case kind == "documents":
			d.Documents++
		case kind == "versions":
			d.Versions++
		case kind == "tags":
			d.Tags++
		case kind == "attributes":
			d.Attributes++
		}
		if err := item.Value(func(v []byte) error { write(kind, v); return nil }); err != nil {
			return Digest{}, fmt.Errorf("digest: %w", err)
		}
	}
	d.SHA256 = hex.EncodeToString(all.Sum(nil))
	for k, h := range kinds {
		d.Kinds[k] = hex.EncodeToString(h.Sum(nil))
	}
	d.Took = time.Since(start)
	return d, nil
}

// AlgorithmVersion is the version of the algorithm that took d: its
// Version, or 1 for a digest of a release before versions (which
// computed version 1's algorithm).
func (d Digest) AlgorithmVersion() int {
	if d.Version == 0 {
		return 1
	}
	return d.Version
}

// DifferingKinds names the kinds whose sums differ between a and b.
func DifferingKinds(a, b Digest) []string {
	var out []string
	for _, k := range []string{"documents", "versions", "tags", "attributes", "content", "other"} {
		if a.Kinds[k] != b.Kinds[k] {
			out = append(out, k)
		}
	}
	return out
}
