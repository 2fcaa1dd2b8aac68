package search

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"quire/storage"

	"quire/bench/internal/harness"
)

// scaleDigest measures what a verification of the replicas costs each
// member at the scale corpus's size (cluster/DESIGN.md, "Replicas proven
// equal"): the digest walk of the store at one applied index, against
// the baseline of a Raft snapshot stream of the same store (the walk
// every snapshot and every catch-up of a member already pays), both on
// one read transaction of the corpus's store in the same run. The store
// of a single server is the same as a member's: the digest reads every
// record and the content's keys and sizes, never its bytes. The row has
// no goal: it says what a verification costs, which decides how often
// cluster.verify_interval can run on a large store.
func (s *session) scaleDigest(ctx context.Context, dataDir string, n int) error {
	db, err := storage.Open(storage.Config{Dir: filepath.Join(dataDir, "db")})
	if err != nil {
		return err
	}
	defer db.Close()
	snap, err := db.OpenSnapshot()
	if err != nil {
		return err
	}
	defer snap.Release()
	d, err := snap.Digest(ctx)
	if err != nil {
		return err
	}
	start := time.Now()
	bytes, err := snap.WriteTo(io.Discard)
	if err != nil {
		return err
	}
	stream := time.Since(start)
	ratio := d.Took.Seconds() / stream.Seconds()
	s.Rep.Rows = append(s.Rep.Rows, harness.Row{Name: fmt.Sprintf("replica digest walk of one member, %dk docs (vs a Raft snapshot stream of the store)", n/1000),
		Quire: harness.Millis(d.Took), Baseline: harness.Millis(stream), Ratio: fmt.Sprintf("%.2f", ratio), Target: "-", Status: "info"})
	s.Rep.Note("replica digest at %dk docs: %d documents, %d versions, %d tags, %d attributes, %d chunks, %d keys in %s (%.0f keys/s); the snapshot stream of the same read transaction: %d bytes in %s; a verification walks every member at once, in the background, every cluster.verify_interval (default 10m)",
		n/1000, d.Documents, d.Versions, d.Tags, d.Attributes, d.Chunks, d.Keys, d.Took.Round(time.Millisecond), float64(d.Keys)/d.Took.Seconds(), bytes, stream.Round(time.Millisecond))
	return nil
}
