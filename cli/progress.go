package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// progress draws a progress bar on a terminal and plain lines otherwise
// (a log file, journald, a pipe). A total <= 0 is unknown: only the count
// is shown.
type progress struct {
	w       io.Writer
	name    string
	total   int64
	bytes   bool // count bytes (shown as MiB)
	tty     bool
	last    time.Time
	lastPct int64
	start   time.Time
}

func newProgress(w io.Writer, name string, total int64, bytes bool) *progress {
	tty := false
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return &progress{w: w, name: name, total: total, bytes: bytes, tty: tty, lastPct: -1, start: time.Now()}
}

func (p *progress) count(n int64) string {
	if p.bytes {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprint(n)
}

func (p *progress) set(n int64) {
	if p.total <= 0 || n > p.total {
		// Unknown or underestimated total: counts, every 2 s on a
		// terminal, every 30 s otherwise.
		every := 30 * time.Second
		if p.tty {
			every = 2 * time.Second
		}
		if time.Since(p.last) < every {
			return
		}
		p.last = time.Now()
		if p.tty {
			fmt.Fprintf(p.w, "\r%s %s   ", p.name, p.count(n))
		} else {
			fmt.Fprintf(p.w, "%s: %s\n", p.name, p.count(n))
		}
		return
	}
	pct := min(100, n*100/p.total)
	if p.tty {
		if time.Since(p.last) < 100*time.Millisecond && n < p.total {
			return
		}
		p.last = time.Now()
		const width = 30
		fill := int(pct) * width / 100
		fmt.Fprintf(p.w, "\r%s [%s%s] %3d%% %s/%s", p.name, strings.Repeat("#", fill), strings.Repeat(".", width-fill), pct, p.count(n), p.count(p.total))
		return
	}
	if pct/10 != p.lastPct/10 {
		p.lastPct = pct
		fmt.Fprintf(p.w, "%s: %d%% (%s/%s)\n", p.name, pct, p.count(n), p.count(p.total))
	}
}

func (p *progress) done() {
	if p.tty {
		fmt.Fprintln(p.w)
	}
}
