package main

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
)

// backupBench takes an online backup of srv (which holds the creation
// load's documents and the large upload), restores it into a new data
// dir, and compares both with dd copying the archive; it also times
// /metrics scrapes at this size.
func (s *session) backupBench(ctx context.Context, srv *server) error {
	archive := filepath.Join(s.root, "backup.qbk")
	defer os.Remove(archive)
	s.logf("online backup")
	before := srv.rss.current()
	srv.rss.resetPeak()
	t0 := time.Now()
	if out, err := exec.CommandContext(ctx, s.cfg.bin, "backup", "--url", srv.base, "--token", srv.token, "--out", archive).CombinedOutput(); err != nil {
		return fmt.Errorf("backup: %v: %s", err, out)
	}
	backupTook := time.Since(t0)
	peak := srv.rss.resetPeak()
	fi, err := os.Stat(archive)
	if err != nil {
		return err
	}
	size := fi.Size()

	s.logf("disk baseline for the archive (%s)", megabytes(size))
	copyDst := filepath.Join(s.root, "archive.copy")
	disk, err := diskBaseline(ctx, archive, copyDst, size)
	os.Remove(copyDst)
	if err != nil {
		return err
	}

	s.logf("restore")
	restored := filepath.Join(s.root, "restored")
	defer os.RemoveAll(restored)
	t0 = time.Now()
	if out, err := exec.CommandContext(ctx, s.cfg.bin, "restore", "--in", archive, "--data-dir", restored).CombinedOutput(); err != nil {
		return fmt.Errorf("restore: %v: %s", err, out)
	}
	restoreTook := time.Since(t0)
	for _, r := range []struct {
		name string
		took time.Duration
	}{{"online backup (archive " + megabytes(size) + ")", backupTook}, {"restore into a new data dir", restoreTook}} {
		rate := mbps(size, r.took)
		s.rep.rows = append(s.rep.rows, row{
			name: r.name, quire: fmt.Sprintf("%.1f MB/s", rate), baseline: fmt.Sprintf("%.1f MB/s", disk.rate),
			ratio: fmt.Sprintf("%.2f", rate/disk.rate), target: "-", status: "info",
		})
	}
	s.rep.addAnon("server peak anonymous memory, online backup", before, peak, anonTarget)
	s.rep.note("backup: %s, restore: %s; baseline %s copying the archive: %s", backupTook.Round(time.Millisecond),
		restoreTook.Round(time.Millisecond), disk.tool, disk.elapsed.Round(time.Millisecond))
	return s.metricsScrape(ctx, srv)
}

// metricsScrape times GET /metrics: the first scrape counts every
// document and action record, later ones within 30 s reuse the count.
func (s *session) metricsScrape(ctx context.Context, srv *server) error {
	var times []time.Duration
	var body []byte
	for i := 0; i < 11; i++ {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.base+"/metrics", nil)
		t0 := time.Now()
		resp, err := srv.client.Do(req)
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
	s.rep.note("GET /metrics with %s documents: first scrape (counts every record) %s, cached p50 %s",
		docs, first.Round(time.Microsecond), rest[len(rest)/2].Round(time.Microsecond))
	return nil
}
