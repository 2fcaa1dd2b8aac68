package node

import (
	"bytes"
	"context"
	"crypto/tls"
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
	"slices"
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
	// ChunkSweepGrace is how long a content chunk must stay unreferenced
	// before the leader sweeps it (0: DefaultChunkSweepGrace).
	ChunkSweepGrace time.Duration
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
	var ln net.Listener // the cluster port, when the join opened it
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
			// A node joins with an empty store: the log replayed onto
			// data of its own would leave it different from the others.
			if _, keys, err := n.DB.StateHash(); err != nil || keys > 0 {
				return fmt.Errorf("cluster: node %s cannot join with data in %s (%d keys, %v): a node joins with an empty data dir", cc.NodeID, n.cfg.DataDir, keys, err)
			}
			// The cluster port is opened first: the leader adds the node
			// at the address it is bound to.
			var err error
			if ln, err = net.Listen("tcp", cc.RaftListen); err != nil {
				return fmt.Errorf("cluster: listen: %w", err)
			}
			if err := JoinCluster(context.Background(), n.cfg.Logger, n.cfg.DataDir, cc, ln.Addr().String()); err != nil {
				ln.Close()
				return err
			}
			// auth.Open read this data dir's own keys: the cluster's
			// replaced them.
			if err := n.Auth.ReloadKeys(); err != nil {
				ln.Close()
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
		if ln != nil {
			ln.Close()
		}
		return err
	}
	n.clusterID = id
	cfg := cluster.Config{ID: cc.NodeID, Dir: dir, DB: n.DB, Listen: cc.RaftListen, Listener: ln, TLS: id, Logger: n.cfg.Logger,
		OnRestore: func() {
			// The store was replaced by a leader's snapshot: bring the
			// search index up to date as after a crash.
			if err := n.Indexer.CatchUp(context.Background(), 0, nil); err != nil {
				n.cfg.Logger.Error("index catch-up after a snapshot restore", "err", err)
			}
			if err := n.useKeyRing(); err != nil {
				n.cfg.Logger.Error("signing keys after a snapshot restore", "err", err)
			}
			if err := n.useSecretsKey(); err != nil {
				n.cfg.Logger.Error("secrets key after a snapshot restore", "err", err)
			}
		}}
	n.proposeSeconds = newProposeHistogram()
	cfg.OnPropose = func(took time.Duration, _ error) { n.proposeSeconds.Observe(took.Seconds()) }
	if cc.Tune != nil {
		cc.Tune(&cfg)
	}
	c, err := cluster.Open(cfg)
	if err != nil {
		if ln != nil {
			ln.Close()
		}
		var se *cluster.StateError
		if errors.As(err, &se) {
			n.useUnreadableState(err)
			return nil
		}
		return err
	}
	// --bootstrap stays on the first node's command line; Raft ignores
	// it once the node has Raft state. A node without Raft state whose
	// store applied entries was a member (its state moved aside by quire
	// cluster rejoin, or lost): bootstrapping would make it a cluster of
	// its own, taking writes the real one never sees. It waits for the
	// leader instead.
	if applied, aerr := n.DB.AppliedIndex(); cc.Bootstrap && (aerr != nil || applied > 0) {
		if st := c.Status(); st.LastLogIndex == 0 {
			n.cfg.Logger.Warn("cluster: --bootstrap ignored: this node's store holds a cluster's entries (applied index "+
				fmt.Sprint(applied)+"): it waits for the cluster's leader to reach it", "nodeId", cc.NodeID)
		}
	} else if cc.Bootstrap {
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
	client := &http.Client{Transport: &http.Transport{
		DialTLSContext:      forwardDialer(c),
		MaxIdleConnsPerHost: 64, IdleConnTimeout: time.Minute, ForceAttemptHTTP2: false,
	}}
	n.applier = &clusterApplier{c: c, log: n.cfg.Logger, client: client}
	n.join.client = client
	n.promoteStop = make(chan struct{})
	go n.promoteWhenCaughtUp(n.promoteStop)
	return nil
}

// withJoinTLS makes the HTTPS listener serve this member's cluster
// certificate to a node that calls POST /cluster/join (it asks for
// cluster.JoinALPN and pins the cluster CA): the API's own certificate
// to everyone else.
func (n *Node) withJoinTLS(tc *tls.Config) *tls.Config {
	if n.clusterID == nil {
		return tc
	}
	id := n.clusterID
	jc := &tls.Config{MinVersion: tls.VersionTLS13, NextProtos: []string{cluster.JoinALPN},
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return id.Certificate(), nil }}
	out := tc.Clone()
	out.GetConfigForClient = func(h *tls.ClientHelloInfo) (*tls.Config, error) {
		if slices.Contains(h.SupportedProtos, cluster.JoinALPN) {
			return jc, nil
		}
		return nil, nil
	}
	return out
}

// forwardDialTimeout bounds connecting to the leader for a forwarded
// write: a leader that cannot be reached (a one-way partition) is tried
// again within leaderWait instead of holding the request for ever.
const forwardDialTimeout = 3 * time.Second

// errForwardDial marks a forwarded write that never reached the leader
// (safe to retry).
var errForwardDial = errors.New("cluster: could not connect to the leader")

// forwardDialer connects to the leader's cluster port within
// forwardDialTimeout.
func forwardDialer(c *cluster.Node) func(ctx context.Context, _, addr string) (net.Conn, error) {
	return func(ctx context.Context, _, addr string) (net.Conn, error) {
		ctx, cancel := context.WithTimeout(ctx, forwardDialTimeout)
		defer cancel()
		conn, err := c.DialForward(ctx, addr)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errForwardDial, err)
		}
		return conn, nil
	}
}

// maxForwardBody bounds one forwarded command. A chunk command carries one
// chunk in a cluster (at most 1 MiB, in the binary chunk form); the
// largest commands are the commit of a huge upload (its manifest lists
// ~92 bytes per MiB of content: 16 MiB covers ~170 GiB) and requests
// bounded by the server's 16 MiB body limit.
const maxForwardBody = 16 << 20

// serveForward is the leader's side of write forwarding: a member posts a
// command (storage.Command.Encode) to /apply over the cluster port's
// mutual TLS; the leader proposes it and answers the result, the error
// and the entry's index.
func (n *Node) serveForward(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && (r.URL.Path == "/join" || r.URL.Path == "/remove" || r.URL.Path == "/readmit" || r.URL.Path == "/promote") {
		n.serveAdmin(w, r)
		return
	}
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
		out.Err = encodeError(unknownOutcome(perr))
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
				return res, unknownOutcome(err)
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

// unknownOutcome turns an error that says nothing about the command
// (leadership lost while its entry was in flight, the node closing) into
// a refused write: clients get a 503 and retry, and the schedulers never
// record a failure in place of an outcome that may yet commit (the
// pipeline keeps it and records it again, which the store refuses if the
// first one committed; a folder move stays pending). A context that ended
// stays what it is.
func unknownOutcome(err error) error {
	if err == nil || !cluster.OutcomeUnknown(err) {
		return err
	}
	return &storage.WriteRefusedError{Kind: storage.KindIOError, Reason: "The cluster's leader changed while the write was being replicated: it may or may not have been applied; retry it"}
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
		if errors.Is(err, errForwardDial) || errors.As(err, &oe) && oe.Op == "dial" {
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
		le *storage.LimitError
		re *storage.RequestError
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
	case errors.As(err, &le):
		return &wireError{Kind: "limit", Msg: le.Msg}
	case errors.As(err, &re):
		return &wireError{Kind: "request", Msg: re.Msg}
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
	case "limit":
		return &storage.LimitError{Msg: w.Msg}
	case "request":
		return &storage.RequestError{Msg: w.Msg}
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
		storage.WebhookDocumentResult{}, &storage.WebhookDocumentResult{},
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
	if n.promoteStop != nil {
		close(n.promoteStop)
	}
	if n.fwdSrv != nil {
		n.fwdSrv.Close()
	}
	return n.Cluster.Close()
}

// clusterInfo is what the server shows of the cluster and asks of it
// (nil: none).
func (n *Node) clusterInfo() server.ClusterInfo {
	if n.raftUnreadable != "" {
		return unreadableState{n: n, reason: n.raftUnreadable}
	}
	if n.Cluster == nil {
		return nil
	}
	return clusterAPI{n}
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
