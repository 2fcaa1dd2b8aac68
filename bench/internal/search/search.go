package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/google/uuid"

	"quire/bench/internal/console"
	"quire/bench/internal/harness"
	"quire/storage"
)

// Targets of the search benchmark (issue: search and folders).
const (
	// restAnonTarget is the target of the server's anonymous memory
	// (RssAnon) at rest after the search phase. The search rows judge
	// RssAnon, at every corpus size (issue 34): mapped segment and table
	// pages (RssFile) are page cache the kernel reclaims under pressure.
	restAnonTarget = 100e6
	// restSettle is how long the server is left alone before its memory
	// at rest is read (the indexer returns memory 1 s after a burst).
	restSettle        = 10 * time.Second
	fulltextP99Target = 25 * time.Millisecond
	exactP99Target    = 10 * time.Millisecond
	searchClients     = 8
)

// corpus generates the benchmark's documents deterministically: realistic
// words (a Zipf-distributed vocabulary), a folder tree of departments,
// years and months, and typed attributes.
type corpus struct {
	words     []string
	customers []string
	depts     []string
	// fragments are the first letters of rare words (ranks 20 to 420)
	// that are no word of the vocabulary: what an office user types
	// half-way (issue 46; the index expands them to the words they begin).
	fragments []string
}

func newCorpus() *corpus {
	r := rand.New(rand.NewPCG(7, 7))
	syl := []string{"ka", "lo", "mi", "ne", "ru", "sa", "te", "vo", "an", "el", "or", "us", "ber", "din", "gar", "hol", "mar", "pen", "quo", "stin"}
	c := &corpus{depts: []string{"finance", "legal", "hr", "sales", "it", "ops", "board", "audit", "tax", "procurement", "marketing", "support"}}
	seen := map[string]bool{}
	for len(c.words) < 5000 {
		n := 2 + r.IntN(3)
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteString(syl[r.IntN(len(syl))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			c.words = append(c.words, w)
		}
	}
	for i := 0; i < 500; i++ {
		c.customers = append(c.customers, strings.ToUpper(c.words[i][:1])+c.words[i][1:]+" GmbH")
	}
	for _, w := range c.words[20:420] {
		for cut := 2; len(w)-cut >= 4; cut++ {
			if f := w[:len(w)-cut]; !seen[f] {
				c.fragments = append(c.fragments, f)
				break
			}
		}
	}
	return c
}

type corpusDoc struct {
	id, path, text, customer, status string
	amount                           float64
}

var statuses = []string{"draft", "open", "paid", "overdue", "archived"}

// doc returns document i.
func (c *corpus) doc(i int) corpusDoc {
	r := rand.New(rand.NewPCG(uint64(i), 99))
	z := rand.NewZipf(r, 1.1, 8, uint64(len(c.words)-1))
	words := make([]string, 40)
	for j := range words {
		words[j] = c.words[z.Uint64()]
	}
	folder := fmt.Sprintf("%s/%d/%02d", c.depts[i%len(c.depts)], 2020+(i/len(c.depts))%6, 1+(i/72)%12)
	return corpusDoc{
		id:       uuid.NewSHA1(uuid.NameSpaceOID, []byte(fmt.Sprint(i))).String(),
		path:     fmt.Sprintf("%s/%s-%06d.txt", folder, words[0], i),
		text:     strings.Join(words, " "),
		customer: c.customers[r.IntN(len(c.customers))],
		status:   statuses[r.IntN(len(statuses))],
		amount:   float64(r.IntN(100000)) / 100,
	}
}

// loadCorpus writes n documents into a data dir through storage's Apply,
// ten per command (the index is built afterwards by quire reindex).
func loadCorpus(ctx context.Context, dataDir string, c *corpus, n int) error {
	db, err := storage.Open(storage.Config{Dir: filepath.Join(dataDir, "db")})
	if err != nil {
		return err
	}
	defer db.Close()
	at := time.Now()
	apply := func(op storage.Op, payload any) error {
		_, err := db.Apply(ctx, storage.MustCommand(op, "default", "bench", at, payload))
		return err
	}
	for _, a := range []storage.AttributeDef{{Key: "customer", DataType: storage.DataString}, {Key: "status", DataType: storage.DataString}, {Key: "amount", DataType: storage.DataNumber}} {
		if d, err := db.AttributeDefinition("default", a.Key); err == nil && d != nil {
			continue // a resumed load
		}
		if err := apply(storage.OpAddAttribute, storage.AddAttribute{Def: a}); err != nil {
			return err
		}
	}
	// Batches of 10 go to Apply from 8 goroutines, so their fsyncs share
	// group commits. Batches of 101 (the most one command may create)
	// spent 57% of the load's CPU in Badger sorting the transaction's
	// pending writes, which it does for every iterator a transaction
	// opens (perf, 20,000 documents). A load cut off is resumed, not
	// started over: the documents are deterministic, and those already
	// there are left out of their batch.
	per := 10
	batches := make(chan int)
	gctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, 9)
	spawn := func(k int, f func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[k] = f(); errs[k] != nil {
				cancel()
			}
		}()
	}
	for w := 0; w < 8; w++ {
		spawn(w, func() error {
			for i := range batches {
				var docs []storage.NewDocument
				for j := i; j < min(i+per, n); j++ {
					d := c.doc(j)
					if got, err := db.GetDocument("default", d.id); err == nil && got != nil {
						continue // loaded by the run that was cut off
					}
					m, chunks, _ := storage.SmallContent([]byte(d.text))
					cust, st, amt := d.customer, d.status, d.amount
					docs = append(docs, storage.NewDocument{
						Document: storage.Document{DocumentID: d.id, Path: d.path, ContentType: "text/plain"},
						Content:  &m, Chunks: chunks,
						Tags: []storage.Tag{{Key: "source", Value: "scanner"}},
						Attributes: []storage.AttributeInput{
							{Key: "customer", StringValue: &cust}, {Key: "status", StringValue: &st}, {Key: "amount", NumberValue: &amt},
						},
					})
				}
				if len(docs) == 0 {
					continue
				}
				if _, err := db.Apply(gctx, storage.MustCommand(storage.OpAddDocuments, "default", "bench", at, storage.AddDocuments{Docs: docs})); err != nil {
					return err
				}
			}
			return nil
		})
	}
	spawn(8, func() error {
		defer close(batches)
		for i := 0; i < n; i += per {
			select {
			case batches <- i:
			case <-gctx.Done():
				return nil // a worker failed or the run was cancelled
			}
		}
		return nil
	})
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return ctx.Err()
}

// rawBleve indexes the same documents straight into a Bleve index in
// batches of 1000: the baseline of Quire's reindex rate.
func rawBleve(dir string, c *corpus, n int) (float64, error) {
	idx, err := bleve.New(dir, bleve.NewIndexMapping())
	if err != nil {
		return 0, err
	}
	defer idx.Close()
	t0 := time.Now()
	b := idx.NewBatch()
	for i := 0; i < n; i++ {
		d := c.doc(i)
		if err := b.Index(d.id, map[string]any{"path": d.path, "content": d.text, "customer": d.customer, "status": d.status, "amount": d.amount}); err != nil {
			return 0, err
		}
		if b.Size() >= 1000 {
			if err := idx.Batch(b); err != nil {
				return 0, err
			}
			b = idx.NewBatch()
		}
	}
	if err := idx.Batch(b); err != nil {
		return 0, err
	}
	return float64(n) / time.Since(t0).Seconds(), nil
}

// loadAndReindex loads n documents of c into dataDir and measures quire
// reindex of them against raw Bleve.
func (s *session) loadAndReindex(ctx context.Context, c *corpus, dataDir string, n int) error {
	s.Logf("search: loading %d documents", n)
	if err := loadCorpus(ctx, dataDir, c, n); err != nil {
		return fmt.Errorf("load corpus: %w", err)
	}
	s.Logf("search: raw Bleve baseline")
	raw, err := rawBleve(filepath.Join(s.Root, "bleve-raw"), c, n)
	os.RemoveAll(filepath.Join(s.Root, "bleve-raw"))
	if err != nil {
		return fmt.Errorf("raw bleve: %w", err)
	}
	s.Logf("search: quire reindex")
	t0 := time.Now()
	if out, err := exec.CommandContext(ctx, s.Cfg.Bin, "reindex", "--data-dir", dataDir).CombinedOutput(); err != nil {
		return fmt.Errorf("quire reindex: %w: %s", err, out)
	}
	rate := float64(n) / time.Since(t0).Seconds()
	s.Rep.Rows = append(s.Rep.Rows, harness.Row{
		Name: fmt.Sprintf("index %dk docs (quire reindex)", n/1000), Quire: fmt.Sprintf("%.0f docs/s", rate),
		Baseline: fmt.Sprintf("%.0f docs/s", raw), Ratio: fmt.Sprintf("%.2f", rate/raw), Target: "-", Status: "info",
	})
	s.Rep.Note("index baseline: raw Bleve, default mapping, batches of 1000, same documents from memory; quire reads them from Badger, extracts text and indexes %d fields", 11)
	return nil
}

// searchBench loads the corpus, measures quire reindex against raw Bleve,
// then query latencies under searchClients clients.
func (s *session) searchBench(ctx context.Context) error {
	n := 100000
	window := 5 * time.Second
	if s.Cfg.Quick {
		n, window = 10000, 2*time.Second
	}
	if s.Cfg.SearchDocs > 0 {
		n = s.Cfg.SearchDocs
	}
	c := newCorpus()
	dataDir := filepath.Join(s.Root, "search")
	// With -search-data the loaded and indexed documents outlive the run,
	// marked complete by a file named for their number.
	var done string
	if s.Cfg.SearchData != "" {
		dataDir = s.Cfg.SearchData
		done = filepath.Join(dataDir, fmt.Sprintf("bench-loaded-%d", n))
	}
	if _, err := os.Stat(done); done != "" && err == nil {
		s.Logf("search: reusing %d documents in %s", n, dataDir)
		s.Rep.Note("search documents reused from %s: no loading and reindex rows", dataDir)
	} else {
		if done != "" {
			if err := os.RemoveAll(dataDir); err != nil {
				return err
			}
		}
		if err := s.loadAndReindex(ctx, c, dataDir, n); err != nil {
			return err
		}
		if done != "" {
			if err := os.WriteFile(done, nil, 0o644); err != nil {
				return err
			}
		}
	}

	srv, err := harness.StartServer(ctx, s.Cfg.Bin, dataDir, filepath.Join(s.Root, "search.log"))
	if err != nil {
		return err
	}
	defer srv.Stop()
	// Measure the segments the idle merge leaves, not the load's.
	segs, waited, err := waitIdleMerge(ctx, srv, s.Logf)
	if err != nil {
		return err
	}
	if segs.known {
		s.Rep.Note("search (%dk docs): queries began after %s waiting for the idle merge and warm pass; index segments %s", n/1000, waited.Round(time.Second), segs)
	}
	idle := srv.RSS.Current()
	srv.RSS.ResetPeak()
	get, queries := searchQueries(srv, c)
	if err := s.commonWordsNote(ctx, srv, c, n); err != nil {
		return err
	}
	floor := harness.RunLoad(ctx, searchClients, time.Second, window, get("/healthz"))
	if err := floor.Err(); err != nil {
		return fmt.Errorf("healthz load: %w", err)
	}
	for _, qq := range queries {
		s.Logf("search: %s, %d clients", qq.name, searchClients)
		faults0, ferr0 := harness.MajorFaults(srv.PID())
		best0, berr0 := bestHits(ctx, srv)
		res := harness.RunLoad(ctx, searchClients, time.Second, window, qq.op)
		if err := res.Err(); err != nil {
			return fmt.Errorf("%s: %w", qq.name, err)
		}
		faults1, ferr1 := harness.MajorFaults(srv.PID())
		best1, berr1 := bestHits(ctx, srv)
		if err := errors.Join(ferr0, ferr1, berr0, berr1); err != nil {
			return fmt.Errorf("%s: %w", qq.name, err)
		}
		s.Rep.Note("%s: %d major page faults in the server; segments answered from cached best hits %.0f, best hits computed %.0f",
			qq.name, faults1-faults0, best1["used"]-best0["used"], best1["built"]-best0["built"])
		for _, p := range []float64{0.50, 0.99} {
			ql, bl := res.Percentile(p), floor.Percentile(p)
			st, tgt := "info", "-"
			if p == 0.99 && qq.target > 0 {
				tgt, st = "< "+harness.Millis(qq.target), harness.Status(ql < qq.target)
			}
			s.Rep.Rows = append(s.Rep.Rows, harness.Row{
				Name:     fmt.Sprintf("%s p%.0f (%dk docs)", qq.name, p*100, n/1000),
				Quire:    harness.Millis(ql),
				Baseline: harness.Millis(bl),
				Ratio:    fmt.Sprintf("%.1f", ql.Seconds()/bl.Seconds()),
				Target:   tgt, Status: st,
			})
		}
		s.Rep.Note("%s: %.0f queries/s with %d clients", qq.name, res.Rate(), searchClients)
	}
	s.Rep.Note("query latency baseline: GET /healthz under the same %d clients (the HTTP round trip on this machine)", searchClients)
	peak := srv.RSS.ResetPeak()
	s.Rep.AddAnon(fmt.Sprintf("server peak anonymous memory, search (%dk docs)", n/1000), idle, peak, harness.AnonTarget)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(restSettle):
	}
	s.Rep.AddRestAnon(fmt.Sprintf("server anonymous memory at rest after search (%dk docs)", n/1000), srv.RSS.Current(), restSettle, restAnonTarget)
	// Search as you type over the same documents (issue 47), after the
	// memory rows: the browser's queries are not theirs to count.
	if err := console.SearchRow(ctx, s.Session, srv, c.words, n); err != nil {
		return srv.WithLog(err)
	}
	return srv.CheckAlive()
}

// commonWords is how many of the most frequent words the common-word
// queries pick from.
const commonWords = 4

// commonWordsNote reports how many documents the common words match by
// the server's totalCount (exact since issue 14; 1,000 at most before).
func (s *session) commonWordsNote(ctx context.Context, srv *harness.Server, c *corpus, n int) error {
	var counts []string
	for _, w := range c.words[:commonWords] {
		b, _ := json.Marshal(map[string]any{"query": map[string]any{"text": w}})
		resp, err := srv.Request(ctx, http.MethodPost, "/searchFulltext", strings.NewReader(string(b)), int64(len(b)), "application/json")
		if err != nil {
			return err
		}
		var out struct {
			TotalCount int `json:"totalCount"`
		}
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return fmt.Errorf("searchFulltext %q: status %d: %v", w, resp.StatusCode, err)
		}
		counts = append(counts, fmt.Sprintf("%s %d", w, out.TotalCount))
	}
	s.Rep.Note("common words (totalCount of /searchFulltext, of %d documents): %s", n, strings.Join(counts, ", "))
	return nil
}

func drainOK(resp *http.Response) error {
	defer resp.Body.Close()
	var b struct {
		Documents []json.RawMessage `json:"documents"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&b); err != nil && resp.StatusCode == http.StatusOK {
		// healthz has no documents; its body decodes fine too.
		return nil
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

// bestHits reads the server's quire_index_best_hits_total counters by
// their result label.
func bestHits(ctx context.Context, srv *harness.Server) (map[string]float64, error) {
	resp, err := srv.Request(ctx, http.MethodGet, "/metrics", nil, 0, "")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(b), "\n") {
		rest, ok := strings.CutPrefix(line, `quire_index_best_hits_total{result="`)
		if !ok {
			continue
		}
		label, v, ok := strings.Cut(rest, `"} `)
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, fmt.Errorf("metrics line %q: %w", line, err)
		}
		out[label] = f
	}
	// The warm pass adds a third series (warmed, read by waitIdleMerge);
	// a query phase needs the two its queries move.
	for _, want := range []string{"used", "built"} {
		if _, ok := out[want]; !ok {
			return nil, fmt.Errorf("GET /metrics: no quire_index_best_hits_total series %q (have %d)", want, len(out))
		}
	}
	return out, nil
}

// searchQuery is one query type of the search and scale benchmarks.
type searchQuery struct {
	name   string
	target time.Duration // p99 goal at 100,000 documents, 0 for none
	op     harness.LoadOp
}

// searchQueries returns a GET of a path against srv (for the HTTP floor)
// and every query type the search benchmarks measure over corpus c.
func searchQueries(srv *harness.Server, c *corpus) (func(path string) harness.LoadOp, []searchQuery) {
	get := func(path string) harness.LoadOp {
		return func(ctx context.Context, w, i int) error {
			resp, err := srv.Request(ctx, http.MethodGet, path, nil, 0, "")
			if err != nil {
				return err
			}
			return drainOK(resp)
		}
	}
	postTo := func(path string, body func(r *rand.Rand) any) harness.LoadOp {
		return func(ctx context.Context, w, i int) error {
			r := rand.New(rand.NewPCG(uint64(w), uint64(i)))
			b, _ := json.Marshal(body(r))
			resp, err := srv.Request(ctx, http.MethodPost, path, strings.NewReader(string(b)), int64(len(b)), "application/json")
			if err != nil {
				return err
			}
			return drainOK(resp)
		}
	}
	post := func(body func(r *rand.Rand) any) harness.LoadOp { return postTo("/search", body) }
	// Rare words: ranks 20 to 420 of the Zipf vocabulary, each in 0.2% to
	// 22% of the documents. Common words: ranks 0 to 3, each in 52% to 66%
	// of them (a query's cost must not grow with its matches).
	rare := func(r *rand.Rand) string { return c.words[20+r.IntN(400)] }
	common := func(r *rand.Rand) string { return c.words[r.IntN(commonWords)] }
	return get, []searchQuery{
		{"fulltext word", fulltextP99Target, post(func(r *rand.Rand) any {
			return map[string]any{"query": map[string]any{"text": rare(r)}}
		})},
		{"fulltext common word", fulltextP99Target, post(func(r *rand.Rand) any {
			return map[string]any{"query": map[string]any{"text": common(r)}}
		})},
		{"searchFulltext word", fulltextP99Target, postTo("/searchFulltext", func(r *rand.Rand) any {
			return map[string]any{"query": map[string]any{"text": rare(r)}}
		})},
		{"searchFulltext common word", fulltextP99Target, postTo("/searchFulltext", func(r *rand.Rand) any {
			return map[string]any{"query": map[string]any{"text": common(r)}}
		})},
		// Fragments (issue 46): p99 < 25 ms at 100,000 documents.
		{"fulltext fragment", fulltextP99Target, post(func(r *rand.Rand) any {
			return map[string]any{"query": map[string]any{"text": c.fragments[r.IntN(len(c.fragments))]}}
		})},
		{"searchFulltext fragment", fulltextP99Target, postTo("/searchFulltext", func(r *rand.Rand) any {
			return map[string]any{"query": map[string]any{"text": c.fragments[r.IntN(len(c.fragments))]}}
		})},
		{"filename prefix", 0, post(func(r *rand.Rand) any {
			return map[string]any{"query": map[string]any{"filename": map[string]any{"beginsWith": c.words[r.IntN(200)][:4]}}}
		})},
		{"folder listing", exactP99Target, func(ctx context.Context, w, i int) error {
			r := rand.New(rand.NewPCG(uint64(w), uint64(i)))
			p := fmt.Sprintf("%s/%d/%02d", c.depts[r.IntN(len(c.depts))], 2020+r.IntN(6), 1+r.IntN(12))
			return get("/folders?path="+url.QueryEscape(p))(ctx, w, i)
		}},
		{"attribute equality", exactP99Target, post(func(r *rand.Rand) any {
			return map[string]any{"query": map[string]any{"attribute": map[string]any{"key": "customer", "eq": c.customers[r.IntN(len(c.customers))]}}}
		})},
	}
}
