package backup

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"time"

	"quire/bench/internal/harness"
)

// backupBench takes an online backup of srv (which holds the creation
// load's documents and the large upload), restores it into a new data
// dir, and compares both with dd copying the archive; it also times
// /metrics scrapes at this size.
func (s *session) backupBench(ctx context.Context, srv *harness.Server) error {
	archive := filepath.Join(s.Root, "backup.qbk")
	defer os.Remove(archive)
	s.Logf("online backup")
	before := srv.RSS.Current()
	srv.RSS.ResetPeak()
	t0 := time.Now()
	if out, err := exec.CommandContext(ctx, s.Cfg.Bin, "backup", "--url", srv.Base, "--token", srv.Token, "--out", archive).CombinedOutput(); err != nil {
		return fmt.Errorf("backup: %v: %s", err, out)
	}
	backupTook := time.Since(t0)
	peak := srv.RSS.ResetPeak()
	fi, err := os.Stat(archive)
	if err != nil {
		return err
	}
	size := fi.Size()

	s.Logf("disk baseline for the archive (%s)", harness.Megabytes(size))
	copyDst := filepath.Join(s.Root, "archive.copy")
	disk, err := harness.DiskBaseline(ctx, archive, copyDst, size)
	os.Remove(copyDst)
	if err != nil {
		return err
	}

	s.Logf("restore")
	restored := filepath.Join(s.Root, "restored")
	defer os.RemoveAll(restored)
	t0 = time.Now()
	if out, err := exec.CommandContext(ctx, s.Cfg.Bin, "restore", "--in", archive, "--data-dir", restored).CombinedOutput(); err != nil {
		return fmt.Errorf("restore: %v: %s", err, out)
	}
	restoreTook := time.Since(t0)
	for _, r := range []struct {
		name string
		took time.Duration
	}{{"online backup (archive " + harness.Megabytes(size) + ")", backupTook}, {"restore into a new data dir", restoreTook}} {
		rate := harness.Mbps(size, r.took)
		s.Rep.Rows = append(s.Rep.Rows, harness.Row{
			Name: r.name, Quire: fmt.Sprintf("%.1f MB/s", rate), Baseline: fmt.Sprintf("%.1f MB/s", disk.Rate),
			Ratio: fmt.Sprintf("%.2f", rate/disk.Rate), Target: "-", Status: "info",
		})
	}
	s.Rep.AddAnon("server peak anonymous memory, online backup", before, peak, harness.AnonTarget)
	s.Rep.Note("backup: %s, restore: %s; baseline %s copying the archive: %s", backupTook.Round(time.Millisecond),
		restoreTook.Round(time.Millisecond), disk.Tool, disk.Elapsed.Round(time.Millisecond))
	return s.metricsScrape(ctx, srv)
}

// metricsScrape times GET /metrics: the first scrape counts every
// document and action record, later ones within 30 s reuse the count.
func (s *session) metricsScrape(ctx context.Context, srv *harness.Server) error {
	var times []time.Duration
	var body []byte
	for i := 0; i < 11; i++ {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.Base+"/metrics", nil)
		t0 := time.Now()
		resp, err := srv.Client.Do(req)
		if err != nil {
			return err
		}
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return fmt.Errorf("metrics: %d %v", resp.StatusCode, err)
		}
		times = append(times, time.Since(t0))
	}
	docs := "?"
	for _, l := range bytes.Split(body, []byte("\n")) {
		if bytes.HasPrefix(l, []byte(`quire_documents{site="default"} `)) {
			docs = string(bytes.TrimPrefix(l, []byte(`quire_documents{site="default"} `)))
		}
	}
	first, rest := times[0], times[1:]
	sort.Slice(rest, func(i, j int) bool { return rest[i] < rest[j] })
	s.Rep.Note("GET /metrics with %s documents: first scrape (counts every record) %s, cached p50 %s",
		docs, first.Round(time.Microsecond), rest[len(rest)/2].Round(time.Microsecond))
	return nil
}
