package harness

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"
)

const (
	// CreateTarget is the lowest acceptable quire docs/s / badger txn/s.
	CreateTarget = 0.5
	// uploadTarget is the lowest acceptable quire MB/s / dd MB/s.
	uploadTarget = 0.7
	// AnonTarget is the highest acceptable anonymous memory of the
	// server (RssAnon: heap, stacks), in bytes, in every phase. Mapped
	// file pages (RssFile: Badger's tables, Bleve's segments) are clean
	// page cache the kernel reclaims under pressure and are not judged;
	// the scale rows measure what the server needs inside a memory limit
	// (issue 34).
	AnonTarget = 150e6
)

// Row is one line of the report table.
type Row struct {
	Name, Quire, Baseline, Ratio, Target, Status string
}

// Report collects the results of a run.
type Report struct {
	header []string
	Rows   []Row
	Notes  []string
}

// NewReport starts a report describing cfg and the machine.
func NewReport(cfg Config) *Report {
	mode := "full"
	if cfg.Quick {
		mode = "quick"
	}
	return &Report{header: []string{
		"Quire benchmark, " + time.Now().UTC().Format(time.RFC3339),
		"host: " + hostInfo(),
		fmt.Sprintf("mode: %s; create: %d clients, %s docs, %s warm-up + %s; upload: %s",
			mode, cfg.Clients, SizeName(int64(cfg.DocSize)), cfg.Warmup, cfg.Window, SizeName(cfg.UploadSize)),
	}}
}

// Note adds a line under the table.
func (r *Report) Note(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

// AddCreate adds the creation benchmark's rows.
func (r *Report) AddCreate(cfg Config, q, b LoadResult) {
	ratio := q.Rate() / b.Rate()
	r.Rows = append(r.Rows, Row{
		Name:     fmt.Sprintf("create %s docs, %d clients", SizeName(int64(cfg.DocSize)), cfg.Clients),
		Quire:    fmt.Sprintf("%.0f docs/s", q.Rate()),
		Baseline: fmt.Sprintf("%.0f txn/s", b.Rate()),
		Ratio:    fmt.Sprintf("%.2f", ratio),
		Target:   fmt.Sprintf(">= %.1f", CreateTarget),
		Status:   Status(ratio >= CreateTarget),
	})
	for _, p := range []float64{0.50, 0.99} {
		ql, bl := q.Percentile(p), b.Percentile(p)
		r.Rows = append(r.Rows, Row{
			Name:     fmt.Sprintf("  create latency p%.0f", p*100),
			Quire:    Millis(ql),
			Baseline: Millis(bl),
			Ratio:    fmt.Sprintf("%.2f", ql.Seconds()/bl.Seconds()),
			Target:   "-",
			Status:   "info",
		})
	}
	r.Note("create: quire %d docs in %s, %d errors; badger %d txns, %d errors (baseline: Badger SyncWrites, default options, 1 txn = 4 KiB value + small key)",
		q.Ops, q.Window, q.Errors, b.Ops, b.Errors)
	if q.FirstErr != nil {
		r.Note("create: first quire error: %v", q.FirstErr)
	}
}

// AddUpload adds the streamed upload's row.
func (r *Report) AddUpload(cfg Config, up TransferResult, disk DiskResult) {
	ratio := up.Rate / disk.Rate
	r.Rows = append(r.Rows, Row{
		Name:     fmt.Sprintf("upload %s stream (PUT)", SizeName(cfg.UploadSize)),
		Quire:    fmt.Sprintf("%.1f MB/s", up.Rate),
		Baseline: fmt.Sprintf("%.1f MB/s", disk.Rate),
		Ratio:    fmt.Sprintf("%.2f", ratio),
		Target:   fmt.Sprintf(">= %.1f", uploadTarget),
		Status:   Status(ratio >= uploadTarget),
	})
	r.Note("upload: quire PUT took %s; baseline %s took %s", up.Elapsed.Round(time.Millisecond), disk.Tool, disk.Elapsed.Round(time.Millisecond))
}

// AddCeiling adds the raw-Badger content write as an info row against dd.
func (r *Report) AddCeiling(c, disk DiskResult) {
	r.Rows = append(r.Rows, Row{
		Name:     "  raw Badger content write",
		Quire:    fmt.Sprintf("%.1f MB/s", c.Rate),
		Baseline: fmt.Sprintf("%.1f MB/s", disk.Rate),
		Ratio:    fmt.Sprintf("%.2f", c.Rate/disk.Rate),
		Target:   "-",
		Status:   "info",
	})
	r.Note("raw Badger ceiling: %s took %s", c.Tool, c.Elapsed.Round(time.Millisecond))
}

// memRow judges a peak of memory (bytes) against target, beside the
// same measure at rest.
func memRow(name string, peak, idle int64, target float64) Row {
	return Row{
		Name:     name,
		Quire:    Megabytes(peak),
		Baseline: "at rest " + Megabytes(idle),
		Ratio:    fmt.Sprintf("%.2f", float64(peak)/float64(max(idle, 1))),
		Target:   fmt.Sprintf("< %s", Megabytes(target)),
		Status:   Status(float64(peak) < target),
	}
}

// AddAnon adds a row judging the server's anonymous memory (RssAnon:
// heap, stacks) at its peak against target; total RSS, which counts
// mapped file pages the kernel reclaims, is shown beside it.
func (r *Report) AddAnon(name string, idle, peak ProcStatus, target float64) {
	if peak.RSS == 0 {
		r.Rows = append(r.Rows, Row{Name: name, Quire: "n/a", Baseline: "n/a", Ratio: "-", Target: "-", Status: "info"})
		return
	}
	r.Rows = append(r.Rows, memRow(name, peak.anon, idle.anon, target))
	r.Note("%s: peaks of %s, RSS %s; at rest before: %s (RssAnon judged; RssFile is mapped files, reclaimable page cache)", name, peak.split(), Megabytes(peak.RSS), idle.split())
}

// AddRestAnon adds the server's anonymous memory at rest after a phase.
func (r *Report) AddRestAnon(name string, rest ProcStatus, settle time.Duration, target float64) {
	r.Rows = append(r.Rows, Row{
		Name: name, Quire: Megabytes(rest.anon), Baseline: "-", Ratio: "-",
		Target: fmt.Sprintf("< %s", Megabytes(target)), Status: Status(float64(rest.anon) < target),
	})
	r.Note("%s, %s after the last request: %s, RSS %s", name, settle, rest.split(), Megabytes(rest.RSS))
}

// AddVerify adds the read-back check of the upload.
func (r *Report) AddVerify(dl TransferResult, err error) {
	got := "match"
	if err != nil {
		got = "MISMATCH"
	}
	r.Rows = append(r.Rows, Row{Name: "upload read-back (size, SHA-256)", Quire: got, Baseline: "-", Ratio: "-", Target: "match", Status: Status(err == nil)})
	if err == nil {
		r.Note("read-back: download through the signed URL at %.1f MB/s (%s)", dl.Rate, dl.Elapsed.Round(time.Millisecond))
	}
}

// WriteText prints the report as an aligned table.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintln(w)
	for _, h := range r.header {
		fmt.Fprintln(w, h)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	fmt.Fprintln(tw, "benchmark\tquire\tbaseline\tratio\ttarget\tstatus")
	for _, x := range r.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", x.Name, x.Quire, x.Baseline, x.Ratio, x.Target, x.Status)
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, n := range r.Notes {
		fmt.Fprintln(w, "- "+n)
	}
	fmt.Fprintln(w, "- ratio = quire / baseline (latency and RSS: lower is better); MB = 10^6 bytes")
}

// WriteMarkdown writes the report to path as Markdown.
func WriteMarkdown(path string, r *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", r.header[0])
	for _, h := range r.header[1:] {
		fmt.Fprintf(&b, "%s  \n", h)
	}
	b.WriteString("\n| benchmark | quire | baseline | ratio | target | status |\n|---|---:|---:|---:|---|---|\n")
	for _, x := range r.Rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", strings.TrimSpace(x.Name), x.Quire, x.Baseline, x.Ratio, x.Target, x.Status)
	}
	b.WriteString("\n")
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "- %s\n", n)
	}
	b.WriteString("- ratio = quire / baseline (latency and RSS: lower is better); MB = 10^6 bytes\n")
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// Status labels a target check.
func Status(ok bool) string {
	if ok {
		return "ok"
	}
	return "MISS"
}

// Millis formats d in milliseconds.
func Millis(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

// Megabytes formats n bytes in MB (10^6 bytes).
func Megabytes[T int64 | float64](n T) string { return fmt.Sprintf("%.0f MB", float64(n)/1e6) }

// SizeName formats a power-of-two size: 4 KiB, 64 MiB, 1 GiB.
func SizeName(n int64) string {
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

// Secs formats d in seconds.
func Secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// NotMeasured adds a row that could not be measured on this server or
// machine, and why.
func (r *Report) NotMeasured(name, why string) {
	r.Rows = append(r.Rows, Row{Name: name, Quire: "not measured", Baseline: "-", Ratio: "-", Target: "-", Status: "n/a"})
	r.Note("%s: not measured: %s", strings.TrimSpace(name), why)
}
