package cluster

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/raft"
)

// NewNodeKey makes this node's private key (ECDSA P-256, written to
// dir/node.key, 0600) and returns a certificate request for it naming
// nodeID, DER-encoded: what a new node sends with its join token.
func NewNodeKey(dir, nodeID string) (csrDER []byte, err error) {
	if !ValidNodeID(nodeID) {
		return nil, fmt.Errorf("cluster: node id %q is not valid (letters, digits, '.', '_', '-'; at most 64)", nodeID)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	csr, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: nodeID},
	}, key)
	if err != nil {
		return nil, err
	}
	if err := writeFile(dir, NodeKeyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return nil, err
	}
	return csr, nil
}

// SaveNodeCert checks what Redeem returned and stores it in dir beside
// the key NewNodeKey wrote: the CA certificate must have the fingerprint
// the join token carried (caFingerprint: the new node is talking to the
// cluster it meant to join), the node certificate must be issued by that
// CA, name nodeID and hold this node's key.
func SaveNodeCert(dir string, b *JoinBundle, caFingerprint string) error {
	caCert, err := parseCertPEM(b.CACertPEM)
	if err != nil {
		return fmt.Errorf("cluster: CA certificate: %w", err)
	}
	if caFingerprint == "" || Fingerprint(caCert) != caFingerprint {
		return fmt.Errorf("cluster: the CA certificate handed over has fingerprint %s, the join token names %s: not the cluster the token is for", Fingerprint(caCert), caFingerprint)
	}
	leaf, err := parseCertPEM(b.CertPEM)
	if err != nil {
		return fmt.Errorf("cluster: node certificate: %w", err)
	}
	if err := verifyNode(leaf, caCert, x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth); err != nil {
		return err
	}
	if id, err := NodeIDOf(leaf); err != nil || id != b.NodeID {
		return fmt.Errorf("cluster: the node certificate names %q, not %q", id, b.NodeID)
	}
	keyPEM, err := readSecret(dir, NodeKeyFile)
	if err != nil {
		return err
	}
	if _, err := tls.X509KeyPair(b.CertPEM, keyPEM); err != nil {
		return fmt.Errorf("cluster: the node certificate does not hold this node's key: %w", err)
	}
	if err := writeFile(dir, CACertFile, b.CACertPEM, 0o644); err != nil {
		return err
	}
	return writeFile(dir, NodeCertFile, b.CertPEM, 0o644)
}

func verifyNode(leaf, caCert *x509.Certificate, usages ...x509.ExtKeyUsage) error {
	roots := x509.NewCertPool()
	roots.AddCert(caCert)
	for _, u := range usages {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{u}}); err != nil {
			return fmt.Errorf("cluster: node certificate: %w", err)
		}
	}
	return nil
}

// Identity is a node's TLS identity: its certificate and key and the
// cluster CA it trusts (and nothing else: no system roots).
type Identity struct {
	NodeID string
	CA     *x509.Certificate
	dir    string
	roots  *x509.CertPool
	cert   atomic.Pointer[tls.Certificate]

	peersMu sync.Mutex
	peers   map[string]PeerCert // the last certificate each peer presented

	// Authorize, when set, is asked about every peer after its
	// certificate verified against the CA, with the node id the
	// certificate names; an error refuses the connection. A Node whose
	// Config.TLS has none uses its own: the id must be in the Raft
	// configuration (see DESIGN.md, "Peer identity").
	Authorize func(nodeID string) error
}

// LoadIdentity loads the node's certificate, key and CA certificate from
// dir.
func LoadIdentity(dir string) (*Identity, error) {
	caPEM, err := os.ReadFile(filepath.Join(dir, CACertFile))
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	caCert, err := parseCertPEM(caPEM)
	if err != nil {
		return nil, fmt.Errorf("cluster: CA certificate: %w", err)
	}
	id := &Identity{CA: caCert, dir: dir, roots: x509.NewCertPool()}
	id.roots.AddCert(caCert)
	if err := id.Reload(); err != nil {
		return nil, err
	}
	return id, nil
}

// Reload reads node.crt and node.key again (a rotated certificate) and
// uses them for new connections. The node id must not change.
func (id *Identity) Reload() error {
	certPEM, err := os.ReadFile(filepath.Join(id.dir, NodeCertFile))
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	keyPEM, err := readSecret(id.dir, NodeKeyFile)
	if err != nil {
		return err
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("cluster: node certificate: %w", err)
	}
	leaf := pair.Leaf
	if err := verifyNode(leaf, id.CA, x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth); err != nil {
		return err
	}
	nodeID, err := NodeIDOf(leaf)
	if err != nil {
		return err
	}
	if id.NodeID != "" && nodeID != id.NodeID {
		return fmt.Errorf("cluster: the new certificate names %q, this node is %q", nodeID, id.NodeID)
	}
	if id.NodeID == "" {
		id.NodeID = nodeID // set once, in LoadIdentity
	}
	pair.Certificate = append(pair.Certificate, id.CA.Raw) // the chain ends with the CA: see JoinClientConfig
	id.cert.Store(&pair)
	return nil
}

// NotAfter is when this node's certificate expires.
func (id *Identity) NotAfter() time.Time { return id.cert.Load().Leaf.NotAfter }

// Leaf is this node's current certificate.
func (id *Identity) Leaf() *x509.Certificate { return id.cert.Load().Leaf }

// PeerCert is a member's certificate as this node last saw it: presented
// in a mutual TLS handshake (Raft or forwarding, either direction) that
// verified and was authorized.
type PeerCert struct {
	NodeID   string
	Subject  string
	NotAfter time.Time
	SeenAt   time.Time // the handshake's time (this node's clock)
}

// Peers are the certificates peers presented since this node started,
// the last one of each node id, sorted by node id. A member this node
// has not talked to since its start (a follower's fellow follower, say)
// is not in it.
func (id *Identity) Peers() []PeerCert {
	id.peersMu.Lock()
	defer id.peersMu.Unlock()
	out := make([]PeerCert, 0, len(id.peers))
	for _, p := range id.peers {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b PeerCert) int { return strings.Compare(a.NodeID, b.NodeID) })
	return out
}

// sawPeer records the certificate a verified, authorized peer presented.
func (id *Identity) sawPeer(nodeID string, leaf *x509.Certificate) {
	id.peersMu.Lock()
	defer id.peersMu.Unlock()
	if id.peers == nil {
		id.peers = map[string]PeerCert{}
	}
	if len(id.peers) >= maxPeerCerts {
		if _, ok := id.peers[nodeID]; !ok {
			return
		}
	}
	id.peers[nodeID] = PeerCert{NodeID: nodeID, Subject: leaf.Subject.String(), NotAfter: leaf.NotAfter, SeenAt: time.Now().UTC()}
}

// maxPeerCerts bounds the peers remembered (node ids the CA issued and
// Authorize accepted: the members, so far fewer in practice).
const maxPeerCerts = 256

// Certificate is the node's current certificate and key (its chain ends
// with the CA certificate): the HTTP join endpoint serves it so a new
// node can check it against the fingerprint in its token.
func (id *Identity) Certificate() *tls.Certificate { return id.cert.Load() }

// ServerConfig is the TLS configuration of the Raft listener: TLS 1.3,
// this node's certificate, and a client certificate required and
// verified against the cluster CA (client authentication, a node id).
func (id *Identity) ServerConfig() *tls.Config { return id.serverConfig(id.Authorize) }

func (id *Identity) serverConfig(authorize func(string) error) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS13,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return id.cert.Load(), nil
		},
		ClientAuth: tls.RequireAndVerifyClientCert,
		ClientCAs:  id.roots,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.VerifiedChains) == 0 || len(cs.VerifiedChains[0]) == 0 {
				return errors.New("cluster: the peer presented no verified certificate")
			}
			return id.checkPeer(cs.VerifiedChains[0][0], authorize)
		},
	}
}

// ClientConfig is the TLS configuration of the Raft dialer: TLS 1.3, this
// node's certificate, and the server's verified against the cluster CA
// (server authentication, a node id). Raft dials addresses, and node
// certificates name nodes, not hosts, so the host name is not checked:
// the CA and the node id are.
func (id *Identity) ClientConfig() *tls.Config { return id.clientConfig(id.Authorize) }

func (id *Identity) clientConfig(authorize func(string) error) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS13,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return id.cert.Load(), nil
		},
		InsecureSkipVerify: true, // replaced by VerifyConnection: the cluster CA only, no host name
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("cluster: the peer presented no certificate")
			}
			inter := x509.NewCertPool()
			for _, c := range cs.PeerCertificates[1:] {
				inter.AddCert(c)
			}
			leaf := cs.PeerCertificates[0]
			if _, err := leaf.Verify(x509.VerifyOptions{
				Roots: id.roots, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			}); err != nil {
				return fmt.Errorf("cluster: peer certificate: %w", err)
			}
			return id.checkPeer(leaf, authorize)
		},
	}
}

func (id *Identity) checkPeer(leaf *x509.Certificate, authorize func(string) error) error {
	nodeID, err := NodeIDOf(leaf)
	if err != nil {
		return err
	}
	if authorize != nil {
		if err := authorize(nodeID); err != nil {
			return fmt.Errorf("cluster: peer %s refused: %w", nodeID, err)
		}
	}
	id.sawPeer(nodeID, leaf)
	return nil
}

// JoinClientConfig is the TLS configuration a new node uses to call a
// member's join endpoint: it has no CA yet, only the fingerprint its
// token carries, so it accepts a server whose chain holds a CA
// certificate with that fingerprint and a leaf issued by it for server
// authentication (what Identity.Certificate serves). It asks for
// JoinALPN, so a member's HTTPS listener serves that certificate.
func JoinClientConfig(caFingerprint string) *tls.Config {
	return &tls.Config{
		MinVersion:         tls.VersionTLS13,
		NextProtos:         []string{JoinALPN},
		InsecureSkipVerify: true, // replaced by VerifyConnection: pinned to the CA's fingerprint
		VerifyConnection: func(cs tls.ConnectionState) error {
			var ca *x509.Certificate
			for _, c := range cs.PeerCertificates {
				if c.IsCA && Fingerprint(c) == caFingerprint {
					ca = c
				}
			}
			if ca == nil || len(cs.PeerCertificates) < 2 || cs.PeerCertificates[0].IsCA {
				return errors.New("cluster: the server is not a member of the cluster the join token names")
			}
			return verifyNode(cs.PeerCertificates[0], ca, x509.ExtKeyUsageServerAuth)
		},
	}
}

// handshakeTimeout bounds a peer's TLS handshake on the Raft port.
const handshakeTimeout = 10 * time.Second

// NewTLSStreamLayer is Raft's stream layer over mutual TLS: ln is a plain
// TCP listener; connections it accepts are handed to Raft only after a
// TLS 1.3 handshake in which the peer's certificate verified against the
// cluster CA and id.Authorize accepted its node id (each handshake in its
// own goroutine, bounded by a timeout, so a peer that stalls holds up no
// one). Dialled connections present this node's certificate and verify
// the peer's the same way. advertise as in NewStreamLayer. log receives
// refused handshakes (nil: slog.Default()).
func NewTLSStreamLayer(ln net.Listener, advertise net.Addr, id *Identity, log *slog.Logger) (raft.StreamLayer, error) {
	if id == nil {
		return nil, errors.New("cluster: no TLS identity")
	}
	return newTLSStreamLayer(ln, advertise, id, id.Authorize, nil, log)
}

func newTLSStreamLayer(ln net.Listener, advertise net.Addr, id *Identity, authorize func(string) error, dial DialFunc, log *slog.Logger) (raft.StreamLayer, error) {
	if id == nil {
		return nil, errors.New("cluster: no TLS identity")
	}
	if log == nil {
		log = slog.Default()
	}
	conf := id.serverConfig(authorize)
	conf.NextProtos = []string{ForwardALPN}
	tl := &tlsListener{
		raw: ln, conf: conf, log: log,
		conns: make(chan net.Conn), side: make(chan net.Conn), done: make(chan struct{}), failed: make(chan struct{}),
	}
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	ts := &tlsStream{tl: tl, id: id, authorize: authorize, dial: dial}
	s, err := NewStreamLayer(tl, advertise, func(ctx context.Context, network, addr string) (net.Conn, error) {
		return ts.dialTLS(ctx, network, addr, id.clientConfig(authorize))
	})
	if err != nil {
		return nil, err
	}
	ts.StreamLayer = s
	go tl.acceptLoop()
	return ts, nil
}

// dialTLS opens a TCP connection with the stream's dial function and runs
// the client side of the TLS handshake over it.
func (s *tlsStream) dialTLS(ctx context.Context, network, addr string, conf *tls.Config) (*tls.Conn, error) {
	raw, err := s.dial(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	c := tls.Client(raw, conf)
	if err := c.HandshakeContext(ctx); err != nil {
		raw.Close()
		return nil, err
	}
	return c, nil
}

// tlsStream is the mutual TLS stream layer; it also reaches the
// forwarding service of the cluster port.
type tlsStream struct {
	raft.StreamLayer
	tl        *tlsListener
	id        *Identity
	authorize func(string) error
	dial      DialFunc // TCP connections to peers (Config.Dial)
}

type tlsListener struct {
	raw   net.Listener
	conf  *tls.Config
	log   *slog.Logger
	conns chan net.Conn
	side  chan net.Conn // connections that asked for ForwardALPN

	closeOnce sync.Once
	done      chan struct{} // Close was called
	failed    chan struct{} // the raw listener failed: err
	err       error
}

func (l *tlsListener) acceptLoop() {
	for {
		c, err := l.raw.Accept()
		if err != nil {
			select {
			case <-l.done:
				return
			default:
			}
			var ne net.Error
			if (errors.As(err, &ne) && ne.Timeout()) || errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			l.err = err
			close(l.failed)
			return
		}
		go l.handshake(c)
	}
}

func (l *tlsListener) handshake(c net.Conn) {
	tc := tls.Server(c, l.conf)
	ctx, cancel := context.WithTimeout(context.Background(), handshakeTimeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		level := slog.LevelWarn
		if errors.Is(err, errRaftNotRunning) {
			level = slog.LevelDebug // a joining node, before its Raft runs
		}
		l.log.Log(context.Background(), level, "refused a connection to the Raft port", "remote", c.RemoteAddr().String(), "err", err)
		c.Close()
		return
	}
	ch := l.conns
	if tc.ConnectionState().NegotiatedProtocol == ForwardALPN {
		ch = l.side
	}
	select {
	case ch <- tc:
	case <-l.done:
		tc.Close()
	}
}

// ForwardALPN is the TLS protocol name a member asks for on the cluster
// port to reach the node's forwarding service (Node.ForwardListener)
// instead of Raft. Raft's own connections ask for none.
const ForwardALPN = "quire-forward/1"

// sideListener hands out the cluster port's ForwardALPN connections.
type sideListener struct {
	l         *tlsListener
	closeOnce sync.Once
	closed    chan struct{}
}

func (s *sideListener) Accept() (net.Conn, error) {
	select {
	case c := <-s.l.side:
		return c, nil
	case <-s.closed:
		return nil, net.ErrClosed
	case <-s.l.done:
		return nil, net.ErrClosed
	case <-s.l.failed:
		return nil, s.l.err
	}
}

// Close stops this listener's Accept; the cluster port itself closes
// with the node.
func (s *sideListener) Close() error {
	s.closeOnce.Do(func() { close(s.closed) })
	return nil
}

func (s *sideListener) Addr() net.Addr { return s.l.raw.Addr() }

func (l *tlsListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-l.failed:
		return nil, l.err
	}
}

func (l *tlsListener) Close() error {
	err := net.ErrClosed
	l.closeOnce.Do(func() {
		close(l.done)
		err = l.raw.Close()
	})
	return err
}

func (l *tlsListener) Addr() net.Addr { return l.raw.Addr() }
