package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"quire/backup"
	"quire/config"
)

// cmdRestore unpacks an archive into a new data dir.
//
//	quire restore --in FILE|- --data-dir D
func cmdRestore(args []string, stdin io.Reader, stderr io.Writer) error {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	in := fs.String("in", "", "archive to restore, or - for stdin (required)")
	l, err := config.Load(fs, args, config.Options{Flags: []string{"data-dir"}})
	if err != nil {
		return err
	}
	if *in == "" {
		return errors.New("restore: --in is required (a file, or - for stdin)")
	}
	r, total := stdin, int64(0)
	if *in != "-" {
		f, err := os.Open(*in)
		if err != nil {
			return err
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil {
			total = fi.Size()
		}
		r = f
	}
	start := time.Now()
	p := newProgress(stderr, "restore", total, true)
	info, err := backup.Restore(r, l.DataDir, p.set)
	p.done()
	switch {
	case errors.Is(err, backup.ErrNotEmpty):
		return fmt.Errorf("%w; nothing in it was changed", err)
	case err != nil:
		return fmt.Errorf("restore into %s failed and left nothing behind: %w", l.DataDir, err)
	}
	fmt.Fprintf(stderr, "restored %d keys and %d files into %s in %s (backup of %s, Quire %s); the search index is rebuilt at the first start\n",
		info.Keys, len(info.Files), l.DataDir, time.Since(start).Round(time.Millisecond), info.Created.Format(time.RFC3339), info.QuireVersion)
	return nil
}
