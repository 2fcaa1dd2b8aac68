package storage

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"
)

// BenchmarkPurge_Artifacts: the hard delete of a document with 100 and
// with 1,000 artifacts (MaxArtifacts), each with a tag; the artifacts are
// added with the timer stopped. The ns/artifact of the two sizes are
// close when a purge is linear in its records (purge.go); with iterators
// opened between the deletes, 1,000 cost about ten times 100 per artifact.
func BenchmarkPurge_Artifacts(b *testing.B) {
	for _, n := range []int{100, MaxArtifacts} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			d, err := Open(Config{Dir: b.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			ctx := context.Background()
			apply := func(c *Command) {
				if _, err := d.Apply(ctx, c); err != nil {
					b.Fatal(err)
				}
			}
			apply(MustCommand(OpSetSiteConfig, "default", "bench", t0, SiteConfig{MaxDocuments: "5000"}))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				doc := fmt.Sprintf("%08d-1111-4111-8111-111111111111", i)
				apply(MustCommand(OpAddDocuments, "default", "bench", t0, AddDocuments{Docs: []NewDocument{{Document: Document{DocumentID: doc, Path: doc}}}}))
				var wg sync.WaitGroup
				for w := range 16 {
					wg.Go(func() {
						for j := w; j < n; j += 16 {
							c := addArtifactCmd("default", doc, artifactID(j))
							c.At = t0.Add(time.Duration(j) * time.Millisecond)
							if _, err := d.Apply(ctx, c); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				b.StartTimer()
				apply(MustCommand(OpDeleteDocument, "default", "bench", t0, DocumentRef{DocumentID: doc}))
			}
			b.StopTimer() // not the Close
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/artifact")
		})
	}
}
