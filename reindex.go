package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"quire/config"
	"quire/index"
	"quire/storage"
)

// cmdReindex rebuilds the search index of a stopped server's data dir.
func cmdReindex(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("reindex", flag.ContinueOnError)
	fs.SetOutput(stderr)
	l, err := config.Load(fs, args, config.Options{Flags: []string{"data-dir"}})
	if err != nil {
		return err
	}
	dataDir := &l.DataDir
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
	p := newProgress(stderr, "reindex", total)
	start := time.Now()
	if err := ix.Reindex(context.Background(), p.set); err != nil {
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

// progress draws a progress bar on a terminal and plain lines otherwise.
type progress struct {
	w          io.Writer
	name       string
	total      int
	tty        bool
	last       time.Time
	lastPct    int
	lastDrawnN int
}

func newProgress(w io.Writer, name string, total int) *progress {
	tty := false
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return &progress{w: w, name: name, total: total, tty: tty, lastPct: -1}
}

func (p *progress) set(n int) {
	pct := 100
	if p.total > 0 {
		pct = min(100, n*100/p.total)
	}
	if p.tty {
		if time.Since(p.last) < 100*time.Millisecond && n < p.total {
			return
		}
		p.last = time.Now()
		const width = 30
		fill := pct * width / 100
		fmt.Fprintf(p.w, "\r%s [%s%s] %3d%% %d/%d", p.name, bar(fill, '#'), bar(width-fill, '.'), pct, n, p.total)
		p.lastDrawnN = n
		return
	}
	if pct/10 != p.lastPct/10 {
		p.lastPct = pct
		fmt.Fprintf(p.w, "%s: %d%% (%d/%d)\n", p.name, pct, n, p.total)
	}
}

func (p *progress) done() {
	if p.tty {
		fmt.Fprintln(p.w)
	}
}

func bar(n int, c byte) string {
	b := make([]byte, max(n, 0))
	for i := range b {
		b[i] = c
	}
	return string(b)
}
