package intake

import (
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"quire/bench/internal/harness"
)

// The scanner intake benchmark (issue 32; go run ./bench -intake-only runs
// it alone): files per second taken from a watched folder against plain
// POST /documents creates of files of the same sizes on the same server,
// in the same run.
//
// A watched folder is taken by one poller (the leader's) one file after
// another, so the baseline is one client creating one document after
// another (inline base64 content, as a script without the intake would).
// Both sides have the same number of files of the same size but
// different pseudo-random bytes, so neither finds the other's content
// chunks stored. The folder's rate is measured from the first file taken
// to the last (its throughput); the profile's stableSeconds (1 s) and the
// poll interval are a fixed delay before the first, reported in a note.
const (
	intakeFiles      = 400
	intakeFilesQuick = 100
	intakeFileSize   = 64 << 10
	intakeTarget     = 0.8 // folder files/s / API creates/s
)

// intakeBody is file i of a side's set (seed: the side).
func intakeBody(seed uint64, i int) []byte {
	r := rand.New(rand.NewPCG(seed, uint64(i)))
	b := make([]byte, intakeFileSize)
	for j := range b {
		b[j] = byte(r.Uint32())
	}
	copy(b, "%PDF-1.4\n")
	return b
}

func (s *session) intakeBench(ctx context.Context) error {
	n := intakeFiles
	if s.Cfg.Quick {
		n = intakeFilesQuick
	}
	scans := filepath.Join(s.Root, "scans")
	srv, err := harness.StartServerWith(ctx, s.Cfg.Bin, filepath.Join(s.Root, "intake"), filepath.Join(s.Root, "intake.log"),
		harness.ServerOpts{Args: []string{"--intake-folder-root", scans, "--intake-poll", "100ms"}})
	if err != nil {
		return err
	}
	defer srv.Stop()
	if err := s.intakeRun(ctx, srv, scans, n); err != nil {
		return srv.WithLog(err)
	}
	return srv.CheckAlive()
}

func (s *session) intakeRun(ctx context.Context, srv *harness.Server, scans string, n int) error {
	// The baseline: one client, one POST /documents per file.
	s.Logf("intake baseline: %d x %s files through POST /documents, one client", n, harness.SizeName(intakeFileSize))
	start := time.Now()
	for i := range n {
		body := map[string]any{"path": fmt.Sprintf("api/f%04d.pdf", i), "content": base64.StdEncoding.EncodeToString(intakeBody(1, i)),
			"isBase64": true, "contentType": "application/pdf"}
		if err := srv.DoJSON(ctx, http.MethodPost, "/documents", body, http.StatusCreated, nil); err != nil {
			return fmt.Errorf("intake baseline: %w", err)
		}
	}
	apiTook := time.Since(start)
	apiRate := float64(n) / apiTook.Seconds()
	if _, err := srv.WaitIndexed(ctx, 10*time.Minute); err != nil {
		return err
	}

	// The watched folder: a profile with no actions (the baseline has
	// none), each file a new document.
	profile := map[string]any{"intakeProfile": map[string]any{"name": "bench", "pathTemplate": "intake/{filename}", "actions": []any{},
		"duplicates": "KEEP_BOTH", "watchFolder": map[string]any{"stableSeconds": 1}}}
	if err := srv.DoJSON(ctx, http.MethodPost, "/sites/default/intakeProfiles", profile, http.StatusCreated, nil); err != nil {
		return err
	}
	dir := filepath.Join(scans, "default", "bench")
	for deadline := time.Now().Add(30 * time.Second); ; {
		if _, err := os.Stat(filepath.Join(dir, "done")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the watched folder %s was not made", dir)
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.Logf("intake: %d x %s files into a watched folder", n, harness.SizeName(intakeFileSize))
	// Each file appears whole: written under a name the poller ignores
	// (.part), then renamed, as a careful scanner does.
	for i := range n {
		name := filepath.Join(dir, fmt.Sprintf("f%04d.pdf", i))
		if err := os.WriteFile(name+".part", intakeBody(2, i), 0o644); err != nil {
			return err
		}
		if err := os.Rename(name+".part", name); err != nil {
			return err
		}
	}
	written := time.Now()
	left := func() (int, error) {
		es, err := os.ReadDir(dir)
		if err != nil {
			return 0, err
		}
		k := 0
		for _, e := range es {
			if e.Type().IsRegular() {
				k++
			}
		}
		return k, nil
	}
	var first, last time.Time
	for deadline := time.Now().Add(10 * time.Minute); ; {
		k, err := left()
		if err != nil {
			return err
		}
		now := time.Now()
		if k < n && first.IsZero() {
			first = now
		}
		if k == 0 {
			last = now
			break
		}
		if now.After(deadline) {
			return fmt.Errorf("intake: %d of %d files still in the watched folder after 10 minutes", k, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if es, err := os.ReadDir(filepath.Join(dir, "failed")); err != nil || len(es) != 0 {
		return fmt.Errorf("intake: %d files failed (%v); see the server log", len(es), err)
	}
	if es, err := os.ReadDir(filepath.Join(dir, "done")); err != nil || len(es) != n {
		return fmt.Errorf("intake: %d files in done/ (%v), want %d", len(es), err, n)
	}
	folderRate := float64(n-1) / last.Sub(first).Seconds()
	ratio := folderRate / apiRate
	s.Rep.Rows = append(s.Rep.Rows, harness.Row{
		Name:     fmt.Sprintf("intake %d x %s files, watched folder vs POST /documents (1 client)", n, harness.SizeName(intakeFileSize)),
		Quire:    fmt.Sprintf("%.0f files/s", folderRate),
		Baseline: fmt.Sprintf("%.0f files/s", apiRate),
		Ratio:    fmt.Sprintf("%.2f", ratio),
		Target:   fmt.Sprintf(">= %.1f", intakeTarget),
		Status:   harness.Status(ratio >= intakeTarget),
	})
	s.Rep.Note("intake: the watched folder took %d files in %.2fs from the first to the last (poll 100ms); %.2fs from the last file written to the last taken, stableSeconds 1 included; the baseline made %d documents in %.2fs",
		n, last.Sub(first).Seconds(), last.Sub(written).Seconds(), n, apiTook.Seconds())
	return nil
}
