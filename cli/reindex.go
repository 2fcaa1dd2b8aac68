package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"quire/config"
	"quire/index"
	"quire/index/memlimit"
	"quire/storage"
)

// reindexMemoryLimit is quire reindex's soft heap limit (index/DESIGN.md,
// "Reindex memory").
const reindexMemoryLimit = 112 << 20

// cmdReindex rebuilds the search index of a stopped server's data dir.
func cmdReindex(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("reindex", flag.ContinueOnError)
	fs.SetOutput(stderr)
	l, err := config.Load(fs, args, config.Options{Flags: []string{"data-dir"}})
	if err != nil {
		return err
	}
	dataDir := &l.DataDir
	// QUIRE_PPROF serves the profiles during the reindex, as for serve
	// (index/DESIGN.md, "Reindex memory").
	if addr := os.Getenv("QUIRE_PPROF"); addr != "" {
		go func() { _ = http.ListenAndServe(addr, nil) }()
	}
	// A soft heap limit the Bleve batches are not given headroom over:
	// without one the heap grew to twice its live size, 231 MB of
	// anonymous memory at 100,000 documents against the 150 MB goal. Set
	// before the store opens, so that everything runs under it.
	defer memlimit.Fixed(reindexMemoryLimit)()
	db, err := storage.Open(storage.Config{Dir: filepath.Join(*dataDir, "db"), Logger: newLogger(stderr, "warn", "text")})
	if err != nil {
		return fmt.Errorf("%w (is the server still running?)", err)
	}
	defer db.Close()
	dir := filepath.Join(*dataDir, "index")
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	x, err := index.Open(dir)
	if err != nil {
		return err
	}
	defer x.Close()
	total, err := db.CountDocs()
	if err != nil {
		return err
	}
	ix := index.NewIndexer(db, x, newLogger(stderr, "warn", "text"))
	p := newProgress(stderr, "reindex", int64(total), false)
	start := time.Now()
	if err := ix.Reindex(context.Background(), func(n int) { p.set(int64(n)) }); err != nil {
		return err
	}
	if err := ix.Close(); err != nil {
		return err
	}
	p.done()
	d := time.Since(start)
	fmt.Fprintf(stderr, "reindexed %d documents in %s (%.0f docs/s)\n", total, d.Round(time.Millisecond), float64(total)/max(d.Seconds(), 1e-9))
	return nil
}
