package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"

	"github.com/dgraph-io/badger/v4"
)

// textAlphabet has 64 characters that need no escaping in JSON, so six
// random bits make one character; spaces make it look like words.
const textAlphabet = "abcdefghijklmnopqrstuvwxyz      ABCDEFGHIJKLMNOPQRSTUVWXYZ.,0123"

// textGen makes random-ish text. Every document differs, so neither the
// server's content deduplication nor a cache flatters the figures.
type textGen struct{ r *rand.Rand }

// newTextGens returns one generator per worker, each seeded differently.
func newTextGens(n int) []*textGen {
	gs := make([]*textGen, n)
	for i := range gs {
		gs[i] = &textGen{r: rand.New(rand.NewPCG(rand.Uint64(), uint64(i)))}
	}
	return gs
}

// text returns n new bytes of text.
func (g *textGen) text(n int) []byte {
	b := make([]byte, n)
	for i := 0; i < n; {
		v := g.r.Uint64()
		for j := 0; j < 10 && i < n; j, i = j+1, i+1 {
			b[i] = textAlphabet[v&63]
			v >>= 6
		}
	}
	return b
}

// badgerCreate is the baseline of the creation benchmark: raw Badger in
// dir, SyncWrites and otherwise default options, doing the durable work of
// one document per transaction (a 4 KiB record and a small index key) from
// as many goroutines as Quire gets clients.
//
// Its rate is not flat: with SyncWrites Badger msyncs the whole memtable
// mapping on every commit, so commits slow down as the 64 MiB memtable
// fills and speed up again after each flush. The 10 s window covers most
// of a cycle; the 3 s window of -quick sees only the fast start, which
// flatters the baseline.
func badgerCreate(ctx context.Context, dir string, cfg config) (loadResult, error) {
	db, err := badger.Open(badger.DefaultOptions(dir).WithSyncWrites(true).WithLogger(nil))
	if err != nil {
		return loadResult{}, err
	}
	defer db.Close()
	gens := newTextGens(cfg.clients)
	op := func(_ context.Context, w, i int) error {
		key := fmt.Appendf(nil, "d/%02d/%08d", w, i)
		val := gens[w].text(cfg.docSize)
		return db.Update(func(txn *badger.Txn) error {
			if err := txn.Set(key, val); err != nil {
				return err
			}
			return txn.Set(fmt.Appendf(nil, "p/%02d/%08d", w, i), key)
		})
	}
	res := runLoad(ctx, cfg.clients, cfg.warmup, cfg.window, op)
	if err := ctx.Err(); err != nil {
		return res, err
	}
	return res, res.err()
}

// createRequest is the body of POST /documents.
type createRequest struct {
	Path        string `json:"path"`
	ContentType string `json:"contentType"`
	Content     string `json:"content"`
}

// quireCreate is the creation benchmark: cfg.clients HTTP clients POST
// /documents with cfg.docSize bytes of inline text and a path each.
func quireCreate(ctx context.Context, srv *server, cfg config) (loadResult, error) {
	gens := newTextGens(cfg.clients)
	op := func(ctx context.Context, w, i int) error {
		body, err := json.Marshal(createRequest{
			Path:        fmt.Sprintf("bench/c%02d/doc-%07d.txt", w, i),
			ContentType: "text/plain",
			Content:     string(gens[w].text(cfg.docSize)),
		})
		if err != nil {
			return err
		}
		resp, err := srv.request(ctx, http.MethodPost, "/documents", bytes.NewReader(body), int64(len(body)), "application/json")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if err := checkStatus(resp, http.StatusCreated); err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	res := runLoad(ctx, cfg.clients, cfg.warmup, cfg.window, op)
	if err := ctx.Err(); err != nil {
		return res, err
	}
	return res, res.err()
}
