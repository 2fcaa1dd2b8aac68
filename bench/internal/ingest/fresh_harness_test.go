package ingest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"quire/bench/internal/harness"
)

// BenchmarkFreshnessProcessing is a scaled-down freshness row for
// engineers who may not run the bench (the shared machine): a fresh
// server (the binary at $QUIRE_BIN, default the repository's bin/quire)
// per variant, its site's default processing off and then on, 64 clients
// creating 4 KiB text documents for $QUIRE_HARNESS_SECS (default 15) with
// the freshness sampler of the bench's rows. Per variant it reports the create rate,
// the server's CPU per create, freshness p50/p99 and the time the index
// took to empty. With $QUIRE_HARNESS_PROFILE set to a directory, a CPU
// profile of the middle of each load is written there (QUIRE_PPROF).
// Each b.N iteration runs both variants once, off first in the first,
// on first in the second, and so on.
//
//	go test -run '^$' -bench BenchmarkFreshnessProcessing -benchtime 2x ./bench/internal/ingest/
//
// or, to run one binary against others, build it once and run it from
// anywhere with $QUIRE_BIN set:
//
//	go test -c -o freshness.test ./bench/internal/ingest/
//	QUIRE_BIN=$PWD/bin/quire QUIRE_HARNESS_SECS=20 ./freshness.test -test.run '^$' -test.bench BenchmarkFreshnessProcessing -test.benchtime 2x
func BenchmarkFreshnessProcessing(b *testing.B) {
	bin := os.Getenv("QUIRE_BIN")
	if bin == "" {
		bin = filepath.Join("..", "..", "..", "bin", "quire") // from bench/internal/ingest
	}
	dur := 15 * time.Second
	if s := os.Getenv("QUIRE_HARNESS_SECS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatalf("QUIRE_HARNESS_SECS: %v", err)
		}
		dur = time.Duration(n) * time.Second
	}
	profDir := os.Getenv("QUIRE_HARNESS_PROFILE")
	cfg := harness.Config{Bin: bin, Clients: 64, DocSize: 4096}
	type variant struct {
		name string
		want []string
	}
	vs := []variant{{"off", []string{}}, {"on", processingOn}}
	sum := map[string][]float64{}
	for i := 0; i < b.N; i++ {
		if i > 0 {
			slices.Reverse(vs) // off first, then on first, ...
		}
		for _, v := range vs {
			m, err := harnessRun(b.Context(), b.TempDir(), cfg, v.want, dur, profDir, fmt.Sprintf("%s-%d", v.name, i))
			if err != nil {
				b.Fatalf("%s: %v", v.name, err)
			}
			b.Logf("run %d %s: %s", i, v.name, m)
			for k, x := range m.values() {
				sum[v.name+"_"+k] = append(sum[v.name+"_"+k], x)
			}
		}
	}
	for k, xs := range sum {
		b.ReportMetric(median(xs), k)
	}
}

type harnessResult struct {
	rate, cpuPerDoc, cores, freshP50, freshP99, lagZero, createP99 float64
	samples                                                        int
}

func (h harnessResult) String() string {
	return fmt.Sprintf("%.0f docs/s, server %.2f cores, %.2f ms CPU/doc, create p99 %.0f ms, fresh p50 %.0f p99 %.0f ms (%d), lag to 0 %.0f ms",
		h.rate, h.cores, h.cpuPerDoc, h.createP99, h.freshP50, h.freshP99, h.samples, h.lagZero)
}

func (h harnessResult) values() map[string]float64 {
	return map[string]float64{"docs/s": h.rate, "cpu-ms/doc": h.cpuPerDoc, "fresh-p50-ms": h.freshP50,
		"fresh-p99-ms": h.freshP99, "lag0-ms": h.lagZero, "create-p99-ms": h.createP99}
}

// harnessRun is one run of BenchmarkFreshnessProcessing.
func harnessRun(ctx context.Context, dir string, cfg harness.Config, want []string, dur time.Duration, profDir, label string) (harnessResult, error) {
	var h harnessResult
	var o harness.ServerOpts
	pprofAt := ""
	if profDir != "" {
		port, err := harness.FreePort()
		if err != nil {
			return h, err
		}
		pprofAt = fmt.Sprintf("127.0.0.1:%d", port)
		o.Env = []string{"QUIRE_PPROF=" + pprofAt}
	}
	srv, err := harness.StartServerWith(ctx, cfg.Bin, filepath.Join(dir, "data"), filepath.Join(dir, "server.log"), o)
	if err != nil {
		return h, err
	}
	defer srv.Stop()
	st, err := harness.SetProcessing(ctx, srv, "default", want, map[string]any{"contentType": "text/plain", "content": "default processing probe"})
	if err != nil {
		return h, err
	}
	if ok, why := st.Measurable(); !ok {
		return h, fmt.Errorf("not measurable: %s", why)
	}
	if len(want) > 0 && len(st.Applied) == 0 {
		return h, fmt.Errorf("processing on, but a document got no actions")
	}
	profDone := make(chan error, 1)
	if pprofAt != "" {
		go func() {
			// The middle of the load: from a quarter in (harness.CPUProfile
			// waits its first second), for half of it.
			select {
			case <-ctx.Done():
				profDone <- ctx.Err()
				return
			case <-time.After(max(dur/4-time.Second, 0)):
			}
			profDone <- harness.CPUProfile(ctx, pprofAt, dur/2, filepath.Join(profDir, "cpu-"+label+".pprof"))
		}()
	} else {
		profDone <- nil
	}
	fs := newFreshSampler(ctx, srv)
	defer fs.cancel()
	cpu := harness.StartCPU(srv.PID())
	q := harness.RunLoad(ctx, cfg.Clients, 0, dur, harness.CreateOp(srv, cfg, "f", fs.word, fs.created))
	stopped := time.Now()
	cores := cpu.Cores()[0]
	if err := q.Err(); err != nil {
		return h, err
	}
	lag, _, err := waitLagZero(ctx, srv, stopped, 2*time.Minute)
	if err != nil {
		return h, err
	}
	pr, err := fs.finish()
	if err != nil {
		return h, err
	}
	if err := <-profDone; err != nil {
		return h, fmt.Errorf("profile: %w", err)
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	h = harnessResult{rate: q.Rate(), cores: cores, cpuPerDoc: cores * 1000 / q.Rate(), createP99: ms(q.Percentile(0.99)),
		freshP50: ms(pr.Percentile(0.5)), freshP99: ms(pr.Percentile(0.99)), lagZero: ms(lag), samples: len(pr.Lat)}
	return h, nil
}
