package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"quire/auth"
	"quire/node"
	"quire/storage"
)

// inproc is a node running in the benchmark process.
type inproc struct {
	n   *node.Node
	srv *server // base, token and clients; no child process
	dir string
}

// startInproc opens and starts a node on dir with the cluster settings cc
// (none: a single server).
func startInproc(dir string, cc node.ClusterConfig) (*inproc, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	base := "http://" + ln.Addr().String()
	n, err := node.Open(node.Config{
		Listen: ln.Addr().String(), DataDir: dir, PublicURL: base,
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
		Cluster: cc,
		// The smallest reserve (the benchmark's disk may be nearly full).
		MinFreeBytes: int64(storage.MinReserve()), MinFreePercent: -1,
	})
	if err != nil {
		ln.Close()
		return nil, err
	}
	if err := n.Start(ln); err != nil {
		n.Close(context.Background())
		return nil, err
	}
	tok, err := auth.SignToken(dir, "", "bench", []string{"Admins"}, 24*time.Hour)
	if err != nil {
		n.Close(context.Background())
		return nil, err
	}
	tr := newTransport()
	return &inproc{n: n, dir: dir, srv: &server{base: base, token: tok,
		client: &http.Client{Transport: tr, Timeout: apiTimeout}, transfer: &http.Client{Transport: tr}}}, nil
}

func (p *inproc) close() {
	if p == nil || p.n == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p.n.Close(ctx)
	p.srv.client.CloseIdleConnections()
	p.n = nil
}
