package index

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"

	"quire/index/memlimit"
	"quire/storage"
)

// benchDocs makes n documents like the create benchmark's: 4 KiB of text
// from a Zipf vocabulary of 20,000 made-up words, a path two folders
// deep, two tags and two attributes.
func benchDocs(n int, seed uint64) []Doc {
	r := rand.New(rand.NewPCG(seed, 7))
	syl := []string{"ka", "lo", "mi", "ne", "ru", "sa", "te", "vo", "an", "el", "or", "us", "ber", "din", "gar", "hol", "mar", "pen", "quo", "stin", "fe", "ja"}
	vr := rand.New(rand.NewPCG(11, 11))
	seen := map[string]bool{}
	var vocab []string
	for len(vocab) < 20000 {
		var b strings.Builder
		for range 1 + vr.IntN(4) {
			b.WriteString(syl[vr.IntN(len(syl))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			vocab = append(vocab, w)
		}
	}
	z := rand.NewZipf(r, 1.1, 4, uint64(len(vocab)-1))
	out := make([]Doc, n)
	for i := range out {
		b := make([]byte, 0, 4096+32)
		for len(b) < 4096 {
			if r.IntN(12) == 0 {
				b = append(b, ". "...)
			} else if len(b) > 0 {
				b = append(b, ' ')
			}
			b = append(b, vocab[z.Uint64()]...)
		}
		cust := vocab[r.IntN(200)]
		out[i] = Doc{
			Site: "default", ID: fmt.Sprintf("doc-%d-%08d", seed, i),
			Path:        fmt.Sprintf("customers/%s/%d/invoice-%d.txt", cust, i%12, i),
			ContentType: "text/plain", ContentSHA: fmt.Sprintf("%064x", r.Uint64()),
			Content:    string(b[:4096]),
			Inserted:   time.Unix(1700000000+int64(i), 0).UTC(),
			Tags:       []string{"status open", "customer " + cust},
			TagValues:  map[string][]string{"status": {"open"}, "customer": {cust}},
			Attributes: []string{cust, "1234.5"},
			AttrValues: map[string][]string{"customer": {cust}, "amount": {"1234.5"}},
		}
	}
	return out
}

// BenchmarkIndexBatch measures indexing into the text index (PutText)
// and the names index (PutNames) in batches, per document.
func BenchmarkIndexBatch(b *testing.B) {
	for _, size := range []int{100, 500} {
		for _, which := range []string{"text", "names"} {
			b.Run(fmt.Sprintf("%s/batch=%d", which, size), func(b *testing.B) {
				x, err := Open(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				docs := benchDocs(size*20, uint64(size))
				b.ReportAllocs()
				cpu0 := cpuTime()
				b.ResetTimer()
				n := 0
				for i := 0; i < b.N; i++ {
					off := (i % 20) * size
					batch := make([]Doc, size)
					copy(batch, docs[off:off+size])
					if i >= 20 {
						for j := range batch {
							batch[j].ID = fmt.Sprintf("%s-%d", batch[j].ID, i)
						}
					}
					var err error
					if which == "text" {
						err = x.PutText(batch, nil)
					} else {
						err = x.PutNames(batch, nil)
					}
					if err != nil {
						b.Fatal(err)
					}
					n += size
				}
				b.StopTimer()
				x.Close() // waits for the persister: its work and the merger's count
				b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(n), "cpu-ns/doc")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/doc")
			})
		}
	}
}

// cpuTime returns the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSearchTextOverlay measures a fulltext query while the indexer
// is behind a creation load: 1,000 documents indexed, 3,000 created since
// and waiting in the overlay (the worker stopped), as in the freshness
// benchmark. New documents have nothing in the index to exclude.
func BenchmarkSearchTextOverlay(b *testing.B) {
	db, err := storage.Open(storage.Config{Dir: b.TempDir(), MinFreeBytes: -1, MinFreePercent: -1, Logger: quiet()})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	x, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	ix := NewIndexer(db, x, quiet())
	if err := ix.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	add := func(from, to int) {
		for i := from; i < to; i += 100 {
			var docs []storage.NewDocument
			for j := i; j < min(i+100, to); j++ {
				docs = append(docs, storage.NewDocument{Document: storage.Document{DocumentID: uid(j), Path: fmt.Sprintf("customers/c%d/invoice-%d.txt", j%50, j)}})
			}
			c, err := storage.NewCommand(storage.OpAddDocuments, "default", "u", time.Now(), storage.AddDocuments{Docs: docs})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := db.Apply(context.Background(), c); err != nil {
				b.Fatal(err)
			}
		}
	}
	add(0, 1000)
	deadline := time.Now().Add(time.Minute)
	for ix.Queued() > 0 || len(ix.overlaySite("default")) > 0 {
		if time.Now().After(deadline) {
			b.Fatal("not indexed in time")
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(ix.stop)
	ix.wg.Wait()
	add(1000, 4000)
	if n := len(ix.overlaySite("default")); n != 3000 {
		b.Fatalf("overlay of %d, want 3000", n)
	}
	keep := func(string) (bool, error) { return true, nil }
	b.ResetTimer()
	for b.Loop() {
		hits, _, err := ix.SearchText("default", "invoice", TextOptions{Size: 10}, keep)
		if err != nil || len(hits) != 10 {
			b.Fatal(len(hits), err)
		}
	}
}

// BenchmarkIndexUnderLimit measures the indexer's batches (memlimit.WithHeadroom,
// PutNames and PutText of 500 documents) under soft memory limits (0:
// none), with 24 MiB of other live heap standing in for Badger's
// memtables and block cache: CPU per document (Bleve's merges included)
// and the peak RssAnon of the process, with Bleve batches of bleve-batch
// documents. Run each alone (its peak RssAnon is the process's) with
// -benchtime 10x.
func BenchmarkIndexUnderLimit(b *testing.B) {
	docs := benchDocs(500*4, 1)
	for _, c := range []struct{ limitMiB, perBatch int64 }{
		{64, 500}, {96, 500}, {128, 500}, {192, 500}, {0, 500}, {64, 250}, {64, 125}, {96, 250}, {0, 250},
	} {
		limitMiB := c.limitMiB
		b.Run(fmt.Sprintf("limit=%d/bleve-batch=%d", c.limitMiB, c.perBatch), func(b *testing.B) {
			ballast := make([][]byte, 24)
			for i := range ballast {
				ballast[i] = make([]byte, 1<<20)
				for j := 0; j < len(ballast[i]); j += 4096 {
					ballast[i][j] = 1
				}
			}
			old := debug.SetMemoryLimit(-1)
			defer debug.SetMemoryLimit(old)
			if limitMiB > 0 {
				debug.SetMemoryLimit(limitMiB << 20)
			} else {
				debug.SetMemoryLimit(math.MaxInt64)
			}
			debug.FreeOSMemory()
			x, err := Open(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			peak := make(chan int64)
			stop := make(chan struct{})
			go func() {
				var max int64
				for {
					if v := rssAnon(); v > max {
						max = v
					}
					select {
					case <-stop:
						peak <- max
						return
					case <-time.After(20 * time.Millisecond):
					}
				}
			}()
			var gc0 runtime.MemStats
			runtime.ReadMemStats(&gc0)
			cpu0 := cpuTime()
			b.ResetTimer()
			n := 0
			for i := 0; i < b.N; i++ {
				off := (i % 4) * 500
				batch := make([]Doc, 500)
				copy(batch, docs[off:off+500])
				for j := range batch {
					batch[j].ID = fmt.Sprintf("%s-%d", batch[j].ID, i)
				}
				if err := memlimit.WithHeadroom(func() error {
					if err := x.PutNames(batch, nil); err != nil {
						return err
					}
					for k := 0; k < len(batch); k += int(c.perBatch) {
						if err := x.PutText(batch[k:min(len(batch), k+int(c.perBatch))], nil); err != nil {
							return err
						}
					}
					return nil
				}, nil); err != nil {
					b.Fatal(err)
				}
				n += len(batch)
			}
			b.StopTimer()
			x.Close()
			close(stop)
			var gc1 runtime.MemStats
			runtime.ReadMemStats(&gc1)
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(n), "cpu-ns/doc")
			b.ReportMetric(float64(<-peak)/1e6, "peak-anon-MB")
			b.ReportMetric(float64(gc1.NumGC-gc0.NumGC), "GCs")
			runtime.KeepAlive(ballast)
		})
	}
}

// rssAnon reads the process's RssAnon in bytes (0 where unknown).
func rssAnon() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "RssAnon:"); ok {
			var kb int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), &kb)
			return kb << 10
		}
	}
	return 0
}

// BenchmarkMergePlan indexes 4 KiB documents as the indexer does under a
// saturating load (500 per round, Bleve batches of 250) with the scorch
// options in QUIRE_SCORCH (JSON, e.g. {"scorchMergePlanOptions":
// {"MaxSegmentsPerTier": 20}}; empty: Quire's), and reports the process's
// CPU per document, merges and persisting included, and the segments
// left. Run one process per setting (index/DESIGN.md, "Merge plan"):
//
//	QUIRE_SCORCH='...' go test -run X -bench MergePlan -benchtime 24x ./index/
func BenchmarkMergePlan(b *testing.B) {
	if v := os.Getenv("QUIRE_SCORCH"); v != "" {
		if err := json.Unmarshal([]byte(v), &scorchExtra); err != nil {
			b.Fatal(err)
		}
		defer func() { scorchExtra = nil }()
	}
	docs := benchDocs(500*4, 3)
	x, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	cpu0 := cpuTime()
	b.ResetTimer()
	n := 0
	for i := 0; i < b.N; i++ {
		off := (i % 4) * 500
		batch := make([]Doc, 500)
		copy(batch, docs[off:off+500])
		for j := range batch {
			batch[j].ID = fmt.Sprintf("%s-%d", batch[j].ID, i)
		}
		if err := memlimit.WithHeadroom(func() error {
			if err := x.PutNames(batch, nil); err != nil {
				return err
			}
			for k := 0; k < len(batch); k += 250 {
				if err := x.PutText(batch[k:k+250], nil); err != nil {
					return err
				}
			}
			return nil
		}, nil); err != nil {
			b.Fatal(err)
		}
		n += len(batch)
	}
	b.StopTimer()
	segs, merged := 0.0, 0.0
	if st, ok := x.text.StatsMap()["index"].(map[string]any); ok {
		if v, ok := st["TotFileSegmentsAtRoot"].(uint64); ok {
			segs = float64(v)
		}
		if v, ok := st["TotFileMergeWrittenBytes"].(uint64); ok {
			merged = float64(v)
		}
	}
	x.Close()
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(n), "cpu-ns/doc")
	b.ReportMetric(segs, "text-segments")
	b.ReportMetric(merged/float64(n), "merge-bytes/doc")
}
