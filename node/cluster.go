package node

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"time"

	"quire/cluster"
	"quire/server"
	"quire/storage"
)

// ClusterConfig makes the node a member of a Raft cluster
// (cluster/DESIGN.md). NodeID empty: a single server, no cluster.
type ClusterConfig struct {
	NodeID     string
	RaftListen string
	Bootstrap  bool
	Join       string
	JoinToken  string
	// Tune changes the cluster node's configuration before it opens
	// (tests shorten timeouts).
	Tune func(*cluster.Config)
}

// Enabled reports whether the node runs as a cluster member.
func (c ClusterConfig) Enabled() bool { return c.NodeID != "" }

// ClusterDir is where a node keeps Raft's files and its cluster TLS
// identity (tls/).
func ClusterDir(dataDir string) string { return filepath.Join(dataDir, "raft") }

// openCluster opens the node's cluster member: its TLS identity (made at
// the bootstrap), Raft, and the forwarding service the leader answers.
func (n *Node) openCluster() error {
	cc := n.cfg.Cluster
	dir := ClusterDir(n.cfg.DataDir)
	tlsDir := cluster.TLSDir(dir)
	if _, err := os.Stat(filepath.Join(tlsDir, "node.crt")); errors.Is(err, os.ErrNotExist) {
		switch {
		case cc.Bootstrap:
			if err := os.MkdirAll(tlsDir, 0o700); err != nil {
				return err
			}
			ca, err := cluster.LoadCA(tlsDir)
			if err != nil {
				if ca, err = cluster.CreateCA(tlsDir); err != nil {
					return fmt.Errorf("cluster: create the CA: %w", err)
				}
			}
			if err := ca.IssueSelf(tlsDir, cc.NodeID); err != nil {
				return fmt.Errorf("cluster: issue this node's certificate: %w", err)
			}
		case cc.Join != "":
			if err := joinCluster(n.cfg.Logger, cc, tlsDir); err != nil {
				return err
			}
		default:
			return fmt.Errorf("cluster: node %s has no cluster certificate in %s: start the first node with --bootstrap, others with --join https://<member>:8080 --join-token <token>", cc.NodeID, tlsDir)
		}
	} else if err != nil {
		return err
	}
	id, err := cluster.LoadIdentity(tlsDir)
	if err != nil {
		return err
	}
	cfg := cluster.Config{ID: cc.NodeID, Dir: dir, DB: n.DB, Listen: cc.RaftListen, TLS: id, Logger: n.cfg.Logger,
		OnRestore: func() {
			// The store was replaced by a leader's snapshot: bring the
			// search index up to date as after a crash.
			if err := n.Indexer.CatchUp(context.Background(), 0, nil); err != nil {
				n.cfg.Logger.Error("index catch-up after a snapshot restore", "err", err)
			}
		}}
	if cc.Tune != nil {
		cc.Tune(&cfg)
	}
	c, err := cluster.Open(cfg)
	if err != nil {
		return err
	}
	if cc.Bootstrap {
		if err := c.Bootstrap(); err != nil {
			c.Close()
			return err
		}
	}
	n.Cluster = c
	fl := c.ForwardListener()
	if fl == nil {
		c.Close()
		return errors.New("cluster: the node has no forwarding listener")
	}
	n.fwdSrv = &http.Server{Handler: http.HandlerFunc(n.serveForward), ReadHeaderTimeout: 10 * time.Second}
	go n.fwdSrv.Serve(plainConns{fl})
	n.applier = &clusterApplier{c: c, log: n.cfg.Logger, client: &http.Client{Transport: &http.Transport{
		DialTLSContext:      func(ctx context.Context, _, addr string) (net.Conn, error) { return c.DialForward(ctx, addr) },
		MaxIdleConnsPerHost: 16, IdleConnTimeout: time.Minute, ForceAttemptHTTP2: false,
	}}}
	return nil
}

// joinCluster trades the join token for this node's certificate at a
// member's API (POST /cluster/join) and saves it in tlsDir.
func joinCluster(log *slog.Logger, cc ClusterConfig, tlsDir string) error {
	return errors.New("cluster: joining over HTTP (--join) is not in this build yet: provision the node's certificate and have the leader add it")
}

// maxForwardBody bounds one forwarded command. A chunk command carries one
// chunk in a cluster (at most 1 MiB, about 1.4 MB as base64 JSON); the
// largest commands are the commit of a huge upload (its manifest lists
// ~92 bytes per MiB of content: 16 MiB covers ~170 GiB) and requests
// bounded by the server's 16 MiB body limit.
const maxForwardBody = 16 << 20

// serveForward is the leader's side of write forwarding: a member posts a
// command (storage.Command.Encode) to /apply over the cluster port's
// mutual TLS; the leader proposes it and answers the result, the error
// and the entry's index.
func (n *Node) serveForward(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/apply" {
		http.NotFound(w, r)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxForwardBody+1))
	var out forwardReply
	switch {
	case err != nil:
		out.Err = &wireError{Kind: "transport", Msg: err.Error()}
	case len(body) > maxForwardBody:
		out.Err = &wireError{Kind: "transport", Msg: "forwarded command too large"}
	default:
		cmd, derr := storage.DecodeCommand(body)
		if derr != nil {
			out.Err = &wireError{Kind: "transport", Msg: derr.Error()}
			break
		}
		res, idx, perr := n.Cluster.Propose(r.Context(), cmd)
		out.Index = idx
		out.Err = encodeError(perr)
		if perr == nil {
			out.Type, out.Value, err = encodeValue(res.Value)
			if err != nil {
				n.cfg.Logger.Warn("forwarded write: result not encoded", "op", cmd.Op, "err", err)
			}
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

type forwardReply struct {
	Index uint64          `json:"index"`
	Type  string          `json:"type,omitempty"`
	Value json.RawMessage `json:"value,omitempty"`
	Err   *wireError      `json:"err,omitempty"`
}

// clusterApplier is the server's applier on a cluster member: the leader
// proposes; a follower forwards the command to the leader and waits until
// it applied the entry itself, so the client reads its write here.
type clusterApplier struct {
	c      *cluster.Node
	client *http.Client
	log    *slog.Logger
}

// leaderWait bounds how long a write waits for a leader to be known.
const leaderWait = 10 * time.Second

func (a *clusterApplier) WriteState() storage.WriteState { return a.c.WriteState() }

func (a *clusterApplier) Apply(ctx context.Context, cmd *storage.Command) (storage.Result, error) {
	deadline := time.Now().Add(leaderWait)
	for attempt := 0; ; attempt++ {
		if a.c.IsLeader() {
			res, _, err := a.c.Propose(ctx, cmd)
			var nl *cluster.NotLeaderError
			if !errors.As(err, &nl) {
				return res, err
			}
		} else if addr, _ := a.c.LeaderAddr(); addr != "" {
			res, idx, err, retry := a.forward(ctx, addr, cmd)
			if !retry {
				if idx > 0 {
					if werr := a.c.WaitApplied(ctx, idx); werr != nil {
						return storage.Result{}, fmt.Errorf("cluster: wait for the forwarded write to apply here: %w", werr)
					}
				}
				return res, err
			}
		}
		if time.Now().After(deadline) {
			return storage.Result{}, &storage.WriteRefusedError{Kind: storage.KindIOError, Reason: "No cluster leader: the write cannot be accepted now"} // 503
		}
		select {
		case <-ctx.Done():
			return storage.Result{}, ctx.Err()
		case <-time.After(time.Duration(min(attempt+1, 10)) * 50 * time.Millisecond):
		}
	}
}

// forward posts cmd to the leader at the Raft address addr. retry is set
// when the command never entered the log (the node there is no longer
// the leader, or could not be reached before sending).
func (a *clusterApplier) forward(ctx context.Context, addr string, cmd *storage.Command) (res storage.Result, idx uint64, err error, retry bool) {
	data, err := cmd.Encode()
	if err != nil {
		return storage.Result{}, 0, err, false
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+addr+"/apply", bytes.NewReader(data))
	if err != nil {
		return storage.Result{}, 0, err, false
	}
	resp, err := a.client.Do(req)
	if err != nil {
		// Whether the leader received it is unknown: refusing to retry
		// would fail writes on every leader change; a dial error means
		// it was never sent. Retry only those.
		var oe *net.OpError
		if errors.As(err, &oe) && oe.Op == "dial" {
			return storage.Result{}, 0, nil, true
		}
		return storage.Result{}, 0, fmt.Errorf("cluster: forward to the leader: %w", err), false
	}
	defer resp.Body.Close()
	var out forwardReply
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return storage.Result{}, 0, fmt.Errorf("cluster: the leader's answer: %w", err), false
	}
	if out.Err != nil && out.Err.Kind == "notleader" {
		return storage.Result{}, 0, nil, true
	}
	v, verr := decodeValue(out.Type, out.Value)
	if verr != nil {
		a.log.Warn("forwarded write: result not decoded", "op", cmd.Op, "err", verr)
	}
	return storage.Result{Value: v}, out.Index, decodeError(out.Err), false
}

// wireError carries an applier's error to the follower with the type the
// server maps to a FormKiQ status.
type wireError struct {
	Kind     string                   `json:"kind"`
	Msg      string                   `json:"msg"`
	Items    []storage.ValidationItem `json:"items,omitempty"`
	Reason   string                   `json:"reason,omitempty"`
	Sentinel string                   `json:"sentinel,omitempty"`
}

// sentinels are the storage errors the server tells apart with errors.Is.
var sentinels = map[string]error{
	"notfound": storage.ErrNotFound, "conflict": storage.ErrConflict, "badtoken": storage.ErrBadToken,
	"toolarge": storage.ErrTooLarge, "nofailedaction": storage.ErrNoFailedAction,
	"actionchanged": storage.ErrActionChanged, "missingchunk": storage.ErrMissingChunk, "closed": storage.ErrClosed,
}

func encodeError(err error) *wireError {
	if err == nil {
		return nil
	}
	var (
		ve *storage.ValidationError
		nf *storage.NotFoundError
		ce *storage.ConflictError
		ac *storage.AccessError
		wr *storage.WriteRefusedError
		nl *cluster.NotLeaderError
	)
	switch {
	case errors.As(err, &nl):
		return &wireError{Kind: "notleader", Msg: err.Error()}
	case errors.As(err, &ve):
		return &wireError{Kind: "validation", Msg: err.Error(), Items: ve.Items}
	case errors.As(err, &nf):
		return &wireError{Kind: "notfound", Msg: nf.Msg}
	case errors.As(err, &ce):
		return &wireError{Kind: "conflict", Msg: ce.Msg}
	case errors.As(err, &ac):
		return &wireError{Kind: "access", Msg: ac.Msg}
	case errors.As(err, &wr):
		return &wireError{Kind: "refused", Msg: wr.Kind, Reason: wr.Reason}
	}
	for name, s := range sentinels {
		if errors.Is(err, s) {
			return &wireError{Kind: "sentinel", Sentinel: name, Msg: err.Error()}
		}
	}
	return &wireError{Kind: "other", Msg: err.Error()}
}

func decodeError(w *wireError) error {
	if w == nil {
		return nil
	}
	switch w.Kind {
	case "validation":
		return &storage.ValidationError{Items: w.Items}
	case "notfound":
		return &storage.NotFoundError{Msg: w.Msg}
	case "conflict":
		return &storage.ConflictError{Msg: w.Msg}
	case "access":
		return &storage.AccessError{Msg: w.Msg}
	case "refused":
		return &storage.WriteRefusedError{Kind: w.Msg, Reason: w.Reason}
	case "sentinel":
		if s, ok := sentinels[w.Sentinel]; ok {
			return fmt.Errorf("%w (at the leader: %s)", s, w.Msg)
		}
	}
	return fmt.Errorf("cluster: at the leader: %s", w.Msg)
}

// resultTypes are the types appliers return as Result.Value, by name.
var resultTypes = func() map[string]reflect.Type {
	m := map[string]reflect.Type{}
	for _, v := range []any{
		"", int(0), int64(0), uint64(0), float64(0), true,
		&storage.Document{}, storage.Document{},
		&storage.AddDocumentsResult{}, storage.AddDocumentsResult{},
		&storage.DeleteTagResult{}, storage.DeleteTagResult{},
		storage.MoveFolderResult{}, &storage.MoveFolderResult{},
		storage.FolderMoveJob{}, &storage.FolderMoveJob{},
		storage.ActionResult{}, &storage.ActionResult{},
	} {
		t := reflect.TypeOf(v)
		m[t.String()] = t
	}
	return m
}()

func encodeValue(v any) (string, json.RawMessage, error) {
	if v == nil {
		return "", nil, nil
	}
	t := reflect.TypeOf(v)
	if _, ok := resultTypes[t.String()]; !ok {
		return t.String(), nil, fmt.Errorf("result type %s is not forwarded", t)
	}
	b, err := json.Marshal(v)
	return t.String(), b, err
}

func decodeValue(name string, raw json.RawMessage) (any, error) {
	if name == "" {
		return nil, nil
	}
	t, ok := resultTypes[name]
	if !ok || raw == nil {
		return nil, fmt.Errorf("result type %s is not forwarded", name)
	}
	if t.Kind() == reflect.Pointer {
		p := reflect.New(t.Elem())
		if err := json.Unmarshal(raw, p.Interface()); err != nil {
			return nil, err
		}
		return p.Interface(), nil
	}
	p := reflect.New(t)
	if err := json.Unmarshal(raw, p.Interface()); err != nil {
		return nil, err
	}
	return p.Elem().Interface(), nil
}

// closeCluster stops forwarding and the Raft member (the store stays
// open for the caller to close).
func (n *Node) closeCluster() error {
	if n.Cluster == nil {
		return nil
	}
	if n.fwdSrv != nil {
		n.fwdSrv.Close()
	}
	return n.Cluster.Close()
}

// clusterInfo is what the server shows of the cluster (nil: none).
func (n *Node) clusterInfo() server.ClusterInfo {
	if n.Cluster == nil {
		return nil
	}
	return n.Cluster
}

// plainConns hides the *tls.Conn of forwarded connections from
// http.Server, which would otherwise close a connection whose ALPN
// protocol (cluster.ForwardALPN) it does not know; the TLS handshake and
// the member check are done by the cluster port.
type plainConns struct{ net.Listener }

type plainConn struct{ net.Conn }

func (l plainConns) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return plainConn{c}, nil
}
