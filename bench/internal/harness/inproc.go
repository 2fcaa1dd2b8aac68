package harness

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

// Inproc is a node running in the benchmark process.
type Inproc struct {
	Node   *node.Node
	Server *Server // base, token and clients; no child process
	Dir    string
}

// StartInproc opens and starts a node on dir with the cluster settings cc
// (none: a single server).
func StartInproc(dir string, cc node.ClusterConfig) (*Inproc, error) {
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
	return &Inproc{Node: n, Dir: dir, Server: &Server{Base: base, Token: tok,
		Client: &http.Client{Transport: tr, Timeout: apiTimeout}, transfer: &http.Client{Transport: tr}}}, nil
}

// Close closes the node (30 s at most) and the client's idle
// connections; it is safe to call more than once.
func (p *Inproc) Close() {
	if p == nil || p.Node == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p.Node.Close(ctx)
	p.Server.Client.CloseIdleConnections()
	p.Node = nil
}
