package node

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"quire/auth"
	"quire/cluster"
	"quire/server"
	"quire/storage"
)

// joinState is what a member needs to admit nodes: the cluster CA (one
// instance, so a join token is single use on this member) and the client
// of the cluster port's forwarding service (a follower has the leader
// admit and remove nodes).
type joinState struct {
	mu     sync.Mutex
	ca     *cluster.CA
	client *http.Client
}

// clusterCA is this member's CA, loaded on first use (nil when the
// member holds no CA key).
func (n *Node) clusterCA() (*cluster.CA, error) {
	n.join.mu.Lock()
	defer n.join.mu.Unlock()
	if n.join.ca == nil {
		ca, err := cluster.LoadCA(cluster.TLSDir(ClusterDir(n.cfg.DataDir)))
		if err != nil {
			return nil, err
		}
		n.join.ca = ca
	}
	return n.join.ca, nil
}

// clusterAPI is the server's view of the node's cluster member: its
// status, and admitting and removing nodes (server.ClusterJoiner).
type clusterAPI struct{ n *Node }

func (a clusterAPI) Status() cluster.Status { return a.n.Cluster.Status() }

// WaitApplied waits until this member's store applied index (session
// consistency, server/session.go).
func (a clusterAPI) WaitApplied(ctx context.Context, index uint64) error {
	return a.n.Cluster.WaitApplied(ctx, index)
}

// AppliedIndex is the index this member's store applied.
func (a clusterAPI) AppliedIndex() uint64 { return a.n.Cluster.AppliedIndex() }

// Diverged is this member's diverged mark ("" when none): the server
// refuses to serve while it is set.
func (a clusterAPI) Diverged() string { return a.n.Cluster.Diverged() }

// VerifyReplicas is POST /cluster/verify.
func (a clusterAPI) VerifyReplicas(ctx context.Context) (*cluster.VerifyReport, error) {
	return a.n.verifyNow(ctx)
}

// JoinCluster admits a new node (POST /cluster/join). The leader does
// it; a follower forwards the request to the leader over the cluster
// port and relays the answer.
func (a clusterAPI) JoinCluster(ctx context.Context, req server.ClusterJoinRequest) (*server.ClusterJoinResponse, error) {
	n := a.n
	var out *server.ClusterJoinResponse
	err := n.onLeader(ctx, "/join", req, func() error {
		var err error
		out, err = n.admit(req)
		return err
	}, &out)
	return out, err
}

// RemoveNode takes a node out of the cluster (DELETE
// /cluster/nodes/{nodeId}); a follower has the leader do it.
func (a clusterAPI) RemoveNode(ctx context.Context, id string) error {
	n := a.n
	return n.onLeader(ctx, "/remove", id, func() error { return n.removeNode(id) }, nil)
}

// onLeader runs local on the leader; elsewhere it posts in to the
// leader's forwarding service at path and decodes the answer into out.
// It waits up to leaderWait for a leader.
func (n *Node) onLeader(ctx context.Context, path string, in any, local func() error, out any) error {
	deadline := time.Now().Add(leaderWait)
	for attempt := 0; ; attempt++ {
		if n.Cluster.IsLeader() {
			err := local()
			var nl *cluster.NotLeaderError
			if !errors.As(err, &nl) {
				return err
			}
		} else if addr, _ := n.Cluster.LeaderAddr(); addr != "" {
			err, retry := n.forwardAdmin(ctx, addr, path, in, out)
			if !retry {
				return err
			}
		}
		if time.Now().After(deadline) {
			return &server.ClusterError{Status: http.StatusServiceUnavailable, Msg: "no cluster leader: try again later"}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(min(attempt+1, 10)) * 50 * time.Millisecond):
		}
	}
}

// adminReply is the leader's answer to a forwarded join or removal.
type adminReply struct {
	Value json.RawMessage `json:"value,omitempty"`
	Err   *adminError     `json:"err,omitempty"`
}

type adminError struct {
	Status    int                      `json:"status"`
	Msg       string                   `json:"msg"`
	Token     bool                     `json:"token,omitempty"`     // a refused join token
	Items     []storage.ValidationItem `json:"items,omitempty"`     // a bad request
	NotLeader bool                     `json:"notLeader,omitempty"` // ask the new leader
}

func encodeAdminError(err error) *adminError {
	var (
		ce *server.ClusterError
		ve *storage.ValidationError
		nl *cluster.NotLeaderError
	)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, cluster.ErrJoinToken):
		return &adminError{Status: http.StatusForbidden, Msg: err.Error(), Token: true}
	case errors.As(err, &nl):
		return &adminError{NotLeader: true, Msg: err.Error()}
	case errors.As(err, &ve):
		return &adminError{Status: http.StatusBadRequest, Items: ve.Items, Msg: err.Error()}
	case errors.As(err, &ce):
		return &adminError{Status: ce.Status, Msg: ce.Msg}
	}
	return &adminError{Status: http.StatusInternalServerError, Msg: err.Error()}
}

func (e *adminError) decode() error {
	switch {
	case e == nil:
		return nil
	case e.Token:
		return fmt.Errorf("%w (at the leader: %s)", cluster.ErrJoinToken, e.Msg)
	case e.Items != nil:
		return &storage.ValidationError{Items: e.Items}
	case e.Status == http.StatusInternalServerError:
		return fmt.Errorf("cluster: at the leader: %s", e.Msg)
	}
	return &server.ClusterError{Status: e.Status, Msg: e.Msg}
}

// forwardAdmin posts in to the leader's forwarding service at path.
// retry is set when the leader could not be reached or is no longer the
// leader (a join is not spent then: the token is redeemed only by a
// leader that goes on to add the node).
func (n *Node) forwardAdmin(ctx context.Context, addr, path string, in, out any) (err error, retry bool) {
	body, err := json.Marshal(in)
	if err != nil {
		return err, false
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+addr+path, bytes.NewReader(body))
	if err != nil {
		return err, false
	}
	resp, err := n.join.client.Do(req)
	if err != nil {
		var oe *net.OpError
		if errors.As(err, &oe) && oe.Op == "dial" {
			return nil, true
		}
		// The leader went away after the request was sent (a restart, a
		// lost connection): whether it acted is unknown, so it is not
		// resent, and the caller gets a 503 to try again, not a 500.
		return &server.ClusterError{Status: http.StatusServiceUnavailable, Msg: "the cluster leader did not answer (" + err.Error() + "): try again"}, false
	}
	defer resp.Body.Close()
	var rep adminReply
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&rep); err != nil {
		return &server.ClusterError{Status: http.StatusServiceUnavailable, Msg: fmt.Sprintf("the cluster leader's answer (%d) was cut short or unreadable (%v): try again", resp.StatusCode, err)}, false
	}
	if rep.Err != nil && rep.Err.NotLeader {
		return nil, true
	}
	if rep.Err != nil {
		return rep.Err.decode(), false
	}
	if out != nil && rep.Value != nil {
		if err := json.Unmarshal(rep.Value, out); err != nil {
			return fmt.Errorf("cluster: the leader's answer: %w", err), false
		}
	}
	return nil, false
}

// serveAdmin serves the forwarding service's adminPaths: the leader's
// side of forwarded membership changes and verifications, a member's
// side of a verification. Every case decodes its body before it acts.
func (n *Node) serveAdmin(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var (
		rep adminReply
		val any
	)
	switch {
	case err != nil:
		rep.Err = &adminError{Status: http.StatusBadRequest, Msg: err.Error()}
	case r.URL.Path == "/join":
		var req server.ClusterJoinRequest
		if err := json.Unmarshal(body, &req); err != nil {
			rep.Err = &adminError{Status: http.StatusBadRequest, Msg: err.Error()}
			break
		}
		out, err := n.admit(req)
		rep.Err, val = encodeAdminError(err), out
	case r.URL.Path == "/remove":
		var id string
		if err := json.Unmarshal(body, &id); err != nil {
			rep.Err = &adminError{Status: http.StatusBadRequest, Msg: err.Error()}
			break
		}
		rep.Err = encodeAdminError(n.removeNode(id))
	case r.URL.Path == "/readmit":
		var req readmitRequest
		if err := json.Unmarshal(body, &req); err != nil {
			rep.Err = &adminError{Status: http.StatusBadRequest, Msg: err.Error()}
			break
		}
		rep.Err = encodeAdminError(n.readmitNode(req.NodeID, req.RaftAddress))
	case r.URL.Path == "/promote":
		var req promoteRequest
		if err := json.Unmarshal(body, &req); err != nil {
			// An earlier release sends the id alone, once it believes it
			// caught up: promoted as it was then.
			if err := json.Unmarshal(body, &req.NodeID); err != nil {
				rep.Err = &adminError{Status: http.StatusBadRequest, Msg: err.Error()}
				break
			}
			req.LastIndex = n.Cluster.LastIndex()
		}
		var pr promoteReply
		pr.Promoted, err = n.promoteNode(req)
		rep.Err = encodeAdminError(err)
		val = pr
	case r.URL.Path == "/verify":
		var req struct{}
		if err := json.Unmarshal(body, &req); err != nil {
			rep.Err = &adminError{Status: http.StatusBadRequest, Msg: err.Error()}
			break
		}
		out, err := n.verifyReplicas(r.Context())
		rep.Err, val = encodeAdminError(err), out
	case r.URL.Path == "/digest":
		var req digestRequest
		if err := json.Unmarshal(body, &req); err != nil {
			rep.Err = &adminError{Status: http.StatusBadRequest, Msg: err.Error()}
			break
		}
		d, err := n.serveDigest(r.Context(), req)
		rep.Err, val = encodeAdminError(err), d
	case r.URL.Path == "/diverged":
		var req divergedRequest
		if err := json.Unmarshal(body, &req); err != nil {
			rep.Err = &adminError{Status: http.StatusBadRequest, Msg: err.Error()}
			break
		}
		rep.Err = encodeAdminError(n.Cluster.SetDiverged(req.Reason))
	case r.URL.Path == "/verified":
		var rep2 cluster.VerifyReport
		if err := json.Unmarshal(body, &rep2); err != nil {
			rep.Err = &adminError{Status: http.StatusBadRequest, Msg: err.Error()}
			break
		}
		n.Cluster.SetSharedVerifyReport(&rep2)
	default:
		// A path in adminPaths without a case here (a registry and a
		// switch that disagree: TestServeAdmin_ServesEveryAdminPath): a
		// clear refusal, never a silent empty success.
		rep.Err = &adminError{Status: http.StatusNotFound, Msg: fmt.Sprintf("cluster: no handler for the admin path %q on this member", r.URL.Path)}
	}
	if rep.Err == nil && val != nil {
		rep.Value, _ = json.Marshal(val)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(rep)
}

// admit is the leader's side of a join: check the request, redeem the
// token (single use, expiry, this cluster's) for the node's certificate,
// add the node as a voter, and hand over the cluster's identity.
func (n *Node) admit(req server.ClusterJoinRequest) (*server.ClusterJoinResponse, error) {
	if !n.Cluster.IsLeader() {
		return nil, &cluster.NotLeaderError{}
	}
	ca, err := n.clusterCA()
	if err != nil {
		n.cfg.Logger.Error("cluster join: this leader holds no CA key", "err", err)
		return nil, &server.ClusterError{Status: http.StatusServiceUnavailable, Msg: "the leader cannot issue certificates (no cluster CA key)"}
	}
	info, err := cluster.ParseJoinToken(req.Token)
	if err != nil {
		return nil, err
	}
	if info.CAFingerprint != ca.Fingerprint() {
		return nil, fmt.Errorf("%w: issued by another cluster", cluster.ErrJoinToken)
	}
	blk, _ := pem.Decode([]byte(req.CSR))
	if blk == nil || blk.Type != "CERTIFICATE REQUEST" {
		return nil, storage.Invalid("csr", "invalid 'csr': want a PEM CERTIFICATE REQUEST")
	}
	csr, err := x509.ParseCertificateRequest(blk.Bytes)
	if err != nil {
		return nil, storage.Invalid("csr", "invalid 'csr': "+err.Error())
	}
	if csr.Subject.CommonName != req.NodeID {
		return nil, storage.Invalid("csr", "invalid 'csr': its common name is not the nodeId")
	}
	// A node id or address already in use by another member would
	// replace that member (Join's rule for a node that moved): refuse it
	// here, before the token is spent.
	for _, s := range n.Cluster.Status().Servers {
		if (s.ID == req.NodeID) != (s.Address == req.RaftAddress) {
			return nil, &server.ClusterError{Status: http.StatusConflict,
				Msg: fmt.Sprintf("node '%s' at %s is a member: remove it first (quire cluster remove) or choose another id and address", s.ID, s.Address)}
		}
	}
	bundle, err := ca.Redeem(req.Token, blk.Bytes)
	if err != nil {
		if errors.Is(err, cluster.ErrJoinToken) {
			return nil, err
		}
		return nil, storage.Invalid("csr", "invalid 'csr': "+err.Error())
	}
	// Single use across the cluster: the spent token is a command, so a
	// later leader refuses it too (Redeem's memory is this member's only).
	spend := storage.MustCommand(storage.OpSpendJoinToken, "", "cluster", time.Now(),
		storage.SpendJoinToken{ID: info.Nonce, Expires: info.Expires})
	if _, _, err := n.Cluster.Propose(context.Background(), spend); err != nil {
		var ce *storage.ConflictError
		if errors.As(err, &ce) {
			return nil, fmt.Errorf("%w: already redeemed", cluster.ErrJoinToken)
		}
		return nil, &server.ClusterError{Status: http.StatusServiceUnavailable, Msg: "the join token could not be recorded as spent: join again with a new token"}
	}
	keys, err := auth.ExportKeys(n.cfg.DataDir)
	if err != nil {
		return nil, err
	}
	caKeys, err := ca.Keys()
	if err != nil {
		return nil, err
	}
	if err := n.Cluster.Join(bundle.NodeID, req.RaftAddress); err != nil {
		var nl *cluster.NotLeaderError
		if errors.As(err, &nl) {
			// The token is spent (recorded through the log): ask for a
			// new one.
			return nil, &server.ClusterError{Status: http.StatusServiceUnavailable, Msg: "the leader changed while adding the node: join again with a new token"}
		}
		return nil, &server.ClusterError{Status: http.StatusServiceUnavailable, Msg: "adding the node failed: " + err.Error()}
	}
	n.cfg.Logger.Info("cluster: node admitted", "nodeId", bundle.NodeID, "raftAddress", req.RaftAddress)
	return &server.ClusterJoinResponse{
		NodeID: bundle.NodeID, Certificate: string(bundle.CertPEM), CACertificate: string(bundle.CACertPEM),
		LeaderID: n.Cluster.ID(), Identity: server.ClusterIdentity{Keys: keys, CAKeys: caKeys},
	}, nil
}

func (n *Node) removeNode(id string) error {
	if !n.Cluster.IsLeader() {
		return &cluster.NotLeaderError{}
	}
	found := false
	for _, s := range n.Cluster.Status().Servers {
		found = found || s.ID == id
	}
	if !found {
		return &server.ClusterError{Status: http.StatusNotFound, Msg: "node '" + id + "' is not a member"}
	}
	if err := n.Cluster.Remove(id); err != nil {
		var nl *cluster.NotLeaderError
		if errors.As(err, &nl) {
			return err
		}
		return &server.ClusterError{Status: http.StatusServiceUnavailable, Msg: "removing the node failed: " + err.Error()}
	}
	n.cfg.Logger.Info("cluster: node removed", "nodeId", id)
	return nil
}

// JoinTimeout bounds the call to a member's join endpoint.
const JoinTimeout = 30 * time.Second

// JoinCluster makes dataDir a member of the cluster that cc.Join
// belongs to, for node cc.NodeID at the Raft address raftAddr: it makes
// the node's key, trades the join token for its certificate at the
// member's POST /cluster/join (over TLS pinned to the CA the token
// names), and installs the cluster's identity (token and URL signing
// keys, the CA and join keys) and the certificate. The member's leader
// has added the node as a voter when this returns; the node then starts
// (quire serve) on the same data dir and Raft address.
func JoinCluster(ctx context.Context, log *slog.Logger, dataDir string, cc ClusterConfig, raftAddr string) error {
	if log == nil {
		log = slog.Default()
	}
	tlsDir := cluster.TLSDir(ClusterDir(dataDir))
	if _, err := os.Stat(filepath.Join(tlsDir, cluster.NodeCertFile)); err == nil {
		return fmt.Errorf("cluster: %s already holds a cluster certificate: this node has joined", dataDir)
	}
	info, err := cluster.ParseJoinToken(cc.JoinToken)
	if err != nil {
		return fmt.Errorf("cluster: the join token is not one (quire cluster token on a member makes one): %w", err)
	}
	if !time.Now().Before(info.Expires) {
		return fmt.Errorf("cluster: the join token expired at %s: ask for a new one", info.Expires.UTC().Format(time.RFC3339))
	}
	if err := os.MkdirAll(tlsDir, 0o700); err != nil {
		return err
	}
	csr, err := cluster.NewNodeKey(tlsDir, cc.NodeID)
	if err != nil {
		return err
	}
	body, err := json.Marshal(server.ClusterJoinRequest{
		Token: cc.JoinToken, NodeID: cc.NodeID, RaftAddress: raftAddr,
		CSR: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: csr})),
	})
	if err != nil {
		return err
	}
	u := strings.TrimRight(cc.Join, "/") + "/cluster/join"
	if !strings.HasPrefix(u, "https://") {
		return fmt.Errorf("cluster: join over https only, not %s", cc.Join)
	}
	ctx, cancel := context.WithTimeout(ctx, JoinTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: cluster.JoinClientConfig(info.CAFingerprint), Proxy: nil}}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("cluster: join at %s (it must be a member's own HTTPS listener, serving the cluster the token names): %w", cc.Join, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("cluster: join at %s: %w", cc.Join, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("cluster: join at %s refused: %s %s", cc.Join, resp.Status, strings.TrimSpace(string(raw)))
	}
	var out server.ClusterJoinResponse
	if err := json.Unmarshal(raw, &out); err != nil {
		return fmt.Errorf("cluster: join at %s: the answer: %w", cc.Join, err)
	}
	if out.NodeID != cc.NodeID {
		return fmt.Errorf("cluster: join at %s: the certificate is for node %q, not %q", cc.Join, out.NodeID, cc.NodeID)
	}
	// The identity first, the certificate last: node.crt marks the join
	// as done, and a node that has it starts without joining again.
	if err := auth.InstallKeys(dataDir, out.Identity.Keys); err != nil {
		return err
	}
	if err := cluster.InstallCAKeys(tlsDir, []byte(out.CACertificate), info.CAFingerprint, out.Identity.CAKeys); err != nil {
		return err
	}
	if err := cluster.SaveNodeCert(tlsDir, &cluster.JoinBundle{NodeID: out.NodeID, CertPEM: []byte(out.Certificate), CACertPEM: []byte(out.CACertificate)}, info.CAFingerprint); err != nil {
		return err
	}
	log.Info("joined the cluster", "nodeId", out.NodeID, "raftAddress", raftAddr, "via", cc.Join, "leaderId", out.LeaderID)
	return nil
}

// IssueJoinToken issues a join token with the CA keys in a member's data
// dir (quire cluster token): every member holds them, and reading the
// files works while the server runs.
func IssueJoinToken(dataDir string, ttl time.Duration) (string, error) {
	ca, err := cluster.LoadCA(cluster.TLSDir(ClusterDir(dataDir)))
	if err != nil {
		return "", fmt.Errorf("%w (is %s the data dir of a cluster member?)", err, dataDir)
	}
	return ca.IssueJoinToken(ttl)
}
