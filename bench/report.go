package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"
)

const (
	// createTarget is the lowest acceptable quire docs/s / badger txn/s.
	createTarget = 0.5
	// uploadTarget is the lowest acceptable quire MB/s / dd MB/s.
	uploadTarget = 0.7
	// anonTarget is the highest acceptable anonymous memory of the
	// server (RssAnon: heap, stacks), in bytes, in every phase. Mapped
	// file pages (RssFile: Badger's tables, Bleve's segments) are clean
	// page cache the kernel reclaims under pressure and are not judged;
	// the scale rows measure what the server needs inside a memory limit
	// (issue 34).
	anonTarget = 150e6
)

// row is one line of the report table.
type row struct {
	name, quire, baseline, ratio, target, status string
}

// report collects the results of a run.
type report struct {
	header []string
	rows   []row
	notes  []string
}

// newReport starts a report describing cfg and the machine.
func newReport(cfg config) *report {
	mode := "full"
	if cfg.quick {
		mode = "quick"
	}
	return &report{header: []string{
		"Quire benchmark, " + time.Now().UTC().Format(time.RFC3339),
		"host: " + hostInfo(),
		fmt.Sprintf("mode: %s; create: %d clients, %s docs, %s warm-up + %s; upload: %s",
			mode, cfg.clients, sizeName(int64(cfg.docSize)), cfg.warmup, cfg.window, sizeName(cfg.uploadSize)),
	}}
}

// note adds a line under the table.
func (r *report) note(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

// addCreate adds the creation benchmark's rows.
func (r *report) addCreate(cfg config, q, b loadResult) {
	ratio := q.rate() / b.rate()
	r.rows = append(r.rows, row{
		name:     fmt.Sprintf("create %s docs, %d clients", sizeName(int64(cfg.docSize)), cfg.clients),
		quire:    fmt.Sprintf("%.0f docs/s", q.rate()),
		baseline: fmt.Sprintf("%.0f txn/s", b.rate()),
		ratio:    fmt.Sprintf("%.2f", ratio),
		target:   fmt.Sprintf(">= %.1f", createTarget),
		status:   status(ratio >= createTarget),
	})
	for _, p := range []float64{0.50, 0.99} {
		ql, bl := q.percentile(p), b.percentile(p)
		r.rows = append(r.rows, row{
			name:     fmt.Sprintf("  create latency p%.0f", p*100),
			quire:    millis(ql),
			baseline: millis(bl),
			ratio:    fmt.Sprintf("%.2f", ql.Seconds()/bl.Seconds()),
			target:   "-",
			status:   "info",
		})
	}
	r.note("create: quire %d docs in %s, %d errors; badger %d txns, %d errors (baseline: Badger SyncWrites, default options, 1 txn = 4 KiB value + small key)",
		q.ops, q.window, q.errors, b.ops, b.errors)
	if q.firstErr != nil {
		r.note("create: first quire error: %v", q.firstErr)
	}
}

// addUpload adds the streamed upload's row.
func (r *report) addUpload(cfg config, up transferResult, disk diskResult) {
	ratio := up.rate / disk.rate
	r.rows = append(r.rows, row{
		name:     fmt.Sprintf("upload %s stream (PUT)", sizeName(cfg.uploadSize)),
		quire:    fmt.Sprintf("%.1f MB/s", up.rate),
		baseline: fmt.Sprintf("%.1f MB/s", disk.rate),
		ratio:    fmt.Sprintf("%.2f", ratio),
		target:   fmt.Sprintf(">= %.1f", uploadTarget),
		status:   status(ratio >= uploadTarget),
	})
	r.note("upload: quire PUT took %s; baseline %s took %s", up.elapsed.Round(time.Millisecond), disk.tool, disk.elapsed.Round(time.Millisecond))
}

// addCeiling adds the raw-Badger content write as an info row against dd.
func (r *report) addCeiling(c, disk diskResult) {
	r.rows = append(r.rows, row{
		name:     "  raw Badger content write",
		quire:    fmt.Sprintf("%.1f MB/s", c.rate),
		baseline: fmt.Sprintf("%.1f MB/s", disk.rate),
		ratio:    fmt.Sprintf("%.2f", c.rate/disk.rate),
		target:   "-",
		status:   "info",
	})
	r.note("raw Badger ceiling: %s took %s", c.tool, c.elapsed.Round(time.Millisecond))
}

// memRow judges a peak of memory (bytes) against target, beside the
// same measure at rest.
func memRow(name string, peak, idle int64, target float64) row {
	return row{
		name:     name,
		quire:    megabytes(peak),
		baseline: "at rest " + megabytes(idle),
		ratio:    fmt.Sprintf("%.2f", float64(peak)/float64(max(idle, 1))),
		target:   fmt.Sprintf("< %s", megabytes(target)),
		status:   status(float64(peak) < target),
	}
}

// addAnon adds a row judging the server's anonymous memory (RssAnon:
// heap, stacks) at its peak against target; total RSS, which counts
// mapped file pages the kernel reclaims, is shown beside it.
func (r *report) addAnon(name string, idle, peak procStatus, target float64) {
	if peak.rss == 0 {
		r.rows = append(r.rows, row{name: name, quire: "n/a", baseline: "n/a", ratio: "-", target: "-", status: "info"})
		return
	}
	r.rows = append(r.rows, memRow(name, peak.anon, idle.anon, target))
	r.note("%s: peaks of %s, RSS %s; at rest before: %s (RssAnon judged; RssFile is mapped files, reclaimable page cache)", name, peak.split(), megabytes(peak.rss), idle.split())
}

// addRestAnon adds the server's anonymous memory at rest after a phase.
func (r *report) addRestAnon(name string, rest procStatus, settle time.Duration, target float64) {
	r.rows = append(r.rows, row{
		name: name, quire: megabytes(rest.anon), baseline: "-", ratio: "-",
		target: fmt.Sprintf("< %s", megabytes(target)), status: status(float64(rest.anon) < target),
	})
	r.note("%s, %s after the last request: %s, RSS %s", name, settle, rest.split(), megabytes(rest.rss))
}

// addVerify adds the read-back check of the upload.
func (r *report) addVerify(dl transferResult, err error) {
	got := "match"
	if err != nil {
		got = "MISMATCH"
	}
	r.rows = append(r.rows, row{name: "upload read-back (size, SHA-256)", quire: got, baseline: "-", ratio: "-", target: "match", status: status(err == nil)})
	if err == nil {
		r.note("read-back: download through the signed URL at %.1f MB/s (%s)", dl.rate, dl.elapsed.Round(time.Millisecond))
	}
}

// writeText prints the report as an aligned table.
func (r *report) writeText(w io.Writer) {
	fmt.Fprintln(w)
	for _, h := range r.header {
		fmt.Fprintln(w, h)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	fmt.Fprintln(tw, "benchmark\tquire\tbaseline\tratio\ttarget\tstatus")
	for _, x := range r.rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", x.name, x.quire, x.baseline, x.ratio, x.target, x.status)
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, n := range r.notes {
		fmt.Fprintln(w, "- "+n)
	}
	fmt.Fprintln(w, "- ratio = quire / baseline (latency and RSS: lower is better); MB = 10^6 bytes")
}

// writeMarkdown writes the report to path as Markdown.
func writeMarkdown(path string, r *report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", r.header[0])
	for _, h := range r.header[1:] {
		fmt.Fprintf(&b, "%s  \n", h)
	}
	b.WriteString("\n| benchmark | quire | baseline | ratio | target | status |\n|---|---:|---:|---:|---|---|\n")
	for _, x := range r.rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", strings.TrimSpace(x.name), x.quire, x.baseline, x.ratio, x.target, x.status)
	}
	b.WriteString("\n")
	for _, n := range r.notes {
		fmt.Fprintf(&b, "- %s\n", n)
	}
	b.WriteString("- ratio = quire / baseline (latency and RSS: lower is better); MB = 10^6 bytes\n")
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// status labels a target check.
func status(ok bool) string {
	if ok {
		return "ok"
	}
	return "MISS"
}

// millis formats d in milliseconds.
func millis(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

// megabytes formats n bytes in MB (10^6 bytes).
func megabytes[T int64 | float64](n T) string { return fmt.Sprintf("%.0f MB", float64(n)/1e6) }

// sizeName formats a power-of-two size: 4 KiB, 64 MiB, 1 GiB.
func sizeName(n int64) string {
	for _, u := range []struct {
		shift int
		name  string
	}{{30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d %s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%d B", n)
}

// secs formats d in seconds.
func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// notMeasured adds a row that could not be measured on this server or
// machine, and why.
func (r *report) notMeasured(name, why string) {
	r.rows = append(r.rows, row{name: name, quire: "not measured", baseline: "-", ratio: "-", target: "-", status: "n/a"})
	r.note("%s: not measured: %s", strings.TrimSpace(name), why)
}
