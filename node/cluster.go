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
	"net/http/httptrace"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

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
	// VerifyEvery is how often the leader verifies that the replicas hold
	// equal data (0: DefaultVerifyEvery; negative: only on demand).
	VerifyEvery time.Duration
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
	_, rebuilt := os.Stat(filepath.Join(dir, rebuiltFile))
	if applied, aerr := n.DB.AppliedIndex(); cc.Bootstrap && (aerr != nil || applied > 0 || rebuilt == nil) {
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
	go n.verifyLoop(n.promoteStop)
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

// testDropForwardAnswer, when set (export_test.go), makes the leader
// close a forward's connection without answering once it proposed a
// command it returns true for.
var testDropForwardAnswer func(*storage.Command) bool

// adminPaths are the forwarding service's paths other than /apply
// (serveAdmin): the leader's side of membership changes and
// verifications, a member's side of a verification.
var adminPaths = map[string]bool{"/join": true, "/remove": true, "/readmit": true, "/promote": true,
	"/verify": true, "/digest": true, "/diverged": true, "/verified": true}

// serveForward is the leader's side of write forwarding: a member posts a
// command (storage.Command.Encode) to /apply over the cluster port's
// mutual TLS; the leader proposes it and answers the result, the error
// and the entry's index.
func (n *Node) serveForward(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && adminPaths[r.URL.Path] {
		n.serveAdmin(w, r)
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != "/apply" {
		http.NotFound(w, r)
		return
	}
	body, err := readForwardBody(r)
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
		if testDropForwardAnswer != nil && testDropForwardAnswer(cmd) {
			// A test breaks the connection after the leader applied the
			// command: the member cannot know the outcome.
			if hj, ok := w.(http.Hijacker); ok {
				if c, _, err := hj.Hijack(); err == nil {
					c.Close()
					return
				}
			}
		}
		out.Index = idx
		out.Err = encodeError(unknownOutcome(perr))
		if perr == cluster.ErrClosed {
			// Closed before proposing (Propose's first check): certainly
			// not in the log, so the member sends it to the next leader.
			out.Err = &wireError{Kind: "notleader", Msg: perr.Error()}
		}
		if perr == nil {
			out.Replayed = res.Replayed
			out.Type, out.Value, err = encodeValue(res.Value)
			if err != nil {
				n.cfg.Logger.Warn("forwarded write: result not encoded", "op", cmd.Op, "err", err)
			}
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

// readForwardBody reads a forwarded command (at most maxForwardBody+1
// bytes, so a larger one is seen) into a buffer of its announced size:
// io.ReadAll grew a chunk command's 1 MiB by doubling from 512 bytes,
// copying and clearing it a dozen times on the leader (issue 44, B6).
func readForwardBody(r *http.Request) ([]byte, error) {
	lr := io.LimitReader(r.Body, maxForwardBody+1)
	if n := r.ContentLength; n > 0 && n <= maxForwardBody {
		b := make([]byte, n)
		if _, err := io.ReadFull(lr, b); err != nil {
			return nil, err
		}
		// Anything past the announced length is an error of the sender.
		if m, _ := lr.Read(make([]byte, 1)); m > 0 {
			return nil, errors.New("forwarded command longer than its Content-Length")
		}
		return b, nil
	}
	return io.ReadAll(lr)
}

type forwardReply struct {
	Index uint64          `json:"index"`
	Type  string          `json:"type,omitempty"`
	Value json.RawMessage `json:"value,omitempty"`
	Err   *wireError      `json:"err,omitempty"`
	// Replayed: storage.Result.Replayed.
	Replayed bool `json:"replayed,omitempty"`
}

// clusterApplier is the server's applier on a cluster member: the leader
// proposes; a follower forwards the command to the leader and waits until
// it applied the entry itself, so the client reads its write here.
type clusterApplier struct {
	c      *cluster.Node
	client *http.Client
	log    *slog.Logger
	// resends counts the writes sent again after an unknown outcome.
	resends atomic.Int64
}

// msgAppliedNoAnswer answers a write found applied whose result cannot be
// given again.
const msgAppliedNoAnswer = "The write was applied, but its answer cannot be given again: read the state before retrying"

// leaderWait bounds how long a write waits for a leader to be known; a
// keyed write whose outcome became unknown gets leaderWait again (once)
// to resolve it by sending it again. A variable for tests only
// (SetTestLeaderWait).
var leaderWait = 10 * time.Second

func (a *clusterApplier) WriteState() storage.WriteState { return a.c.WriteState() }

// Apply proposes cmd at the leader, or forwards it there. An attempt that
// certainly did not reach the log (no leader known, the leader's cluster
// port refused or unreachable before sending, the node there no longer
// leads) is made again, to whoever leads next, within leaderWait; then
// the answer is the no-leader 503. An attempt whose outcome is unknown
// (the forward was sent and broke, or the leader changed while it was
// outstanding; leadership lost after proposing) is an OutcomeUnknownError
// (504), unless the command carries an Idempotency-Key: then it is sent
// again with the key, which the applier answers with the first result if
// the first attempt was applied (storage/requests.go), so the node
// resolves the outcome itself, within leaderWait more.
func (a *clusterApplier) Apply(ctx context.Context, cmd *storage.Command) (storage.Result, error) {
	if cmd.Idem == nil && cmd.ID == "" && cmd.Op != storage.OpPutChunks {
		// The id lets this node ask the leader, by sending the command
		// again, whether it was applied when its outcome becomes unknown
		// (storage/cmdids.go). Chunk commands are idempotent by their
		// content hash, and their binary form carries no id.
		cmd.ID = uuid.NewString()
	}
	deadline := time.Now().Add(leaderWait)
	var unknown error // the last attempt whose outcome is unknown
	extended := false
	for attempt := 0; ; attempt++ {
		var res storage.Result
		var err error
		sent := false // the attempt has an outcome: res, err
		if a.c.IsLeader() {
			var nl *cluster.NotLeaderError
			var idx uint64
			res, idx, err = a.c.Propose(ctx, cmd)
			if !errors.As(err, &nl) {
				sent = true
			}
			if idx > 0 && (err == nil || !cluster.OutcomeUnknown(err)) {
				storage.NoteIndex(ctx, idx) // applied here (session consistency)
			}
		} else if addr, _ := a.c.LeaderAddr(); addr != "" {
			var idx uint64
			var retry bool
			res, idx, err, retry = a.forward(ctx, addr, cmd)
			// A chunk command is not waited for here: nothing reads a
			// chunk before the commit of its upload, which comes after it
			// in the log and is waited for. Waiting cost each chunk of an
			// upload through a follower that follower's Badger sync on top
			// of the leader's commit (issue 44, B6).
			if !retry && idx > 0 && cmd.Op != storage.OpPutChunks {
				if werr := a.c.WaitApplied(ctx, idx); werr != nil {
					// Committed at the leader, not (yet) readable here:
					// the client cannot tell, so it is told to retry with
					// its key or read (never a bare 500).
					a.log.Warn("forwarded write: not applied here in time", "op", cmd.Op, "index", idx, "err", werr)
					return storage.Result{}, &storage.OutcomeUnknownError{Reason: msgOutcomeUnknown}
				}
				storage.NoteIndex(ctx, idx)
			}
			sent = !retry
		}
		if sent {
			if errors.Is(err, storage.ErrAppliedWithoutResult) {
				// Applied by the attempt whose outcome was unknown; its
				// result is not recorded (a type outside the registry).
				return storage.Result{}, &storage.OutcomeUnknownError{Reason: msgAppliedNoAnswer}
			}
			if ctx.Err() != nil || !cluster.OutcomeUnknown(err) && !isOutcomeUnknown(err) {
				return res, err
			}
			unknown = err
			if cmd.Idem == nil && cmd.ID == "" || errors.Is(err, cluster.ErrClosed) { // closing: no one to resend it
				return storage.Result{}, outcomeUnknown(err)
			}
			if !extended {
				extended = true
				deadline = time.Now().Add(leaderWait)
			}
			a.resends.Add(1)
			a.log.Info("write outcome unknown: asking the leader by sending it again with its id or Idempotency-Key", "op", cmd.Op, "err", err)
		}
		if time.Now().After(deadline) {
			if unknown != nil {
				return storage.Result{}, outcomeUnknown(unknown)
			}
			return storage.Result{}, &storage.WriteRefusedError{Kind: storage.KindIOError, Reason: "No cluster leader: the write cannot be accepted now; it was not applied"} // 503
		}
		select {
		case <-ctx.Done():
			return storage.Result{}, ctx.Err()
		case <-time.After(time.Duration(min(attempt+1, 10)) * 50 * time.Millisecond):
		}
	}
}

func isOutcomeUnknown(err error) bool {
	var ou *storage.OutcomeUnknownError
	return errors.As(err, &ou)
}

// msgOutcomeUnknown is the answer to a write whose outcome is unknown.
const msgOutcomeUnknown = "The write's outcome is unknown: the cluster's leader changed or could not be reached while it was being replicated, so it may or may not have been applied. Send it again with the same Idempotency-Key, or read before retrying"

// outcomeUnknown is the OutcomeUnknownError of err.
func outcomeUnknown(err error) error {
	if isOutcomeUnknown(err) {
		return err
	}
	return &storage.OutcomeUnknownError{Reason: msgOutcomeUnknown}
}

// unknownOutcome turns an error that says nothing about the command
// (leadership lost while its entry was in flight, the node closing) into
// an OutcomeUnknownError: clients get a 504, and the schedulers, to which
// it is a refused write, never record a failure in place of an outcome
// that may yet commit (the pipeline keeps it and records it again, which
// the store refuses if the first one committed; a folder move stays
// pending). A context that ended stays what it is. The leader uses it to
// answer a forwarded write.
func unknownOutcome(err error) error {
	if err == nil || !cluster.OutcomeUnknown(err) {
		return err
	}
	return &storage.OutcomeUnknownError{Reason: msgOutcomeUnknown}
}

// errLeaderChanged ends a forward whose leader is no longer the one the
// node follows: its outcome is unknown.
var errLeaderChanged = errors.New("cluster: the leader changed while the forwarded write was outstanding")

// forward posts cmd to the leader at the Raft address addr. retry is set
// when the command never entered the log (the node there is no longer
// the leader, or could not be reached before sending). A forward that was
// sent and got no answer (the connection broke, the leader changed while
// it waited) is an OutcomeUnknownError.
func (a *clusterApplier) forward(ctx context.Context, addr string, cmd *storage.Command) (res storage.Result, idx uint64, err error, retry bool) {
	data, err := cmd.Encode()
	if err != nil {
		return storage.Result{}, 0, err, false
	}
	// The forward ends when the node follows another leader (or none):
	// one paused or cut off may hold it for as long as it is away.
	fctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-fctx.Done():
				return
			case <-tick.C:
				if cur, _ := a.c.LeaderAddr(); cur != addr {
					cancel(errLeaderChanged)
					return
				}
			}
		}
	}()
	req, err := http.NewRequestWithContext(fctx, http.MethodPost, "https://"+addr+"/apply", bytes.NewReader(data))
	if err != nil {
		return storage.Result{}, 0, err, false
	}
	if cmd.Idem != nil || cmd.ID != "" {
		// net/http sends a request again on a kept-alive connection the
		// leader closed before reading it only when it is marked
		// replayable; the key makes it so (and is safe: the applier
		// dedups it).
		req.Header.Set("Idempotency-Key", "forward")
	}
	// wrote records whether any attempt net/http made delivered the whole
	// command: a replayable request whose connection broke after sending
	// is sent again on a new connection, and when that dial fails
	// client.Do reports only the dial error, although the leader may have
	// applied the first attempt (a CI run answered such a write 503 "it
	// was not applied" while every member held it).
	var wrote atomic.Bool
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err == nil {
				wrote.Store(true)
			}
		},
	}))
	resp, err := a.client.Do(req)
	if err != nil {
		// A dial error before any attempt was written means it was never
		// sent: retry. Anything else (the connection broke after sending,
		// the leader changed) is an unknown outcome, unless the caller
		// gave up.
		var oe *net.OpError
		if !wrote.Load() && (errors.Is(err, errForwardDial) || errors.As(err, &oe) && oe.Op == "dial") {
			return storage.Result{}, 0, nil, true
		}
		if ctx.Err() != nil {
			return storage.Result{}, 0, ctx.Err(), false
		}
		a.log.Warn("forwarded write: no answer from the leader", "op", cmd.Op, "leader", addr, "err", err, "cause", context.Cause(fctx))
		return storage.Result{}, 0, outcomeUnknown(err), false
	}
	defer resp.Body.Close()
	var out forwardReply
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		if ctx.Err() != nil {
			return storage.Result{}, 0, ctx.Err(), false
		}
		a.log.Warn("forwarded write: the leader's answer broke off", "op", cmd.Op, "leader", addr, "err", err)
		return storage.Result{}, 0, outcomeUnknown(err), false
	}
	if out.Err != nil && out.Err.Kind == "notleader" {
		return storage.Result{}, 0, nil, true
	}
	v, verr := decodeValue(out.Type, out.Value)
	if verr != nil {
		a.log.Warn("forwarded write: result not decoded", "op", cmd.Op, "err", verr)
	}
	return storage.Result{Value: v, Replayed: out.Replayed}, out.Index, decodeError(out.Err), false
}

// wireError carries an applier's error to the follower with the type the
// server maps to a FormKiQ status.
type wireError struct {
	Kind     string                   `json:"kind"`
	Msg      string                   `json:"msg"`
	Items    []storage.ValidationItem `json:"items,omitempty"`
	Reason   string                   `json:"reason,omitempty"`
	Sentinel string                   `json:"sentinel,omitempty"`
	// Answer is a keyed request's recorded answer (kind "replay").
	Answer *storage.RequestAnswer `json:"answer,omitempty"`
}

// sentinels are the storage errors the server tells apart with errors.Is.
var sentinels = map[string]error{
	"notfound": storage.ErrNotFound, "conflict": storage.ErrConflict, "badtoken": storage.ErrBadToken,
	"toolarge": storage.ErrTooLarge, "nofailedaction": storage.ErrNoFailedAction,
	"actionchanged": storage.ErrActionChanged, "missingchunk": storage.ErrMissingChunk, "closed": storage.ErrClosed,
	"appliedwithoutresult": storage.ErrAppliedWithoutResult,
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
	var ou *storage.OutcomeUnknownError
	var rp *storage.RequestReplayError
	switch {
	case errors.As(err, &rp):
		a := rp.Answer
		return &wireError{Kind: "replay", Msg: err.Error(), Answer: &a}
	case errors.As(err, &nl):
		return &wireError{Kind: "notleader", Msg: err.Error()}
	case errors.As(err, &ou): // before wr, which it unwraps to
		return &wireError{Kind: "unknown", Msg: ou.Reason}
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
	case "unknown":
		return &storage.OutcomeUnknownError{Reason: w.Msg}
	case "replay":
		if w.Answer != nil {
			return &storage.RequestReplayError{Answer: *w.Answer}
		}
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

// encodeValue and decodeValue carry Result.Value by type name (the
// store's registry of result types, storage/requests.go).
func encodeValue(v any) (string, json.RawMessage, error) { return storage.EncodeResultValue(v) }

func decodeValue(name string, raw json.RawMessage) (any, error) {
	return storage.DecodeResultValue(name, raw)
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
