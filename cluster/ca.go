package cluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"quire/storage"
)

// Files of a node's TLS directory (see DESIGN.md, "Cluster TLS"). Keys
// are written 0600, the directory 0700. Only a member holding the CA key
// (the bootstrapping node in this slice) issues certificates and tokens.
const (
	CACertFile   = "ca.crt"   // the cluster CA's certificate (every node)
	CAKeyFile    = "ca.key"   // the CA's private key (issuing members only)
	JoinKeyFile  = "join.key" // the HMAC key of join tokens (issuing members only)
	NodeCertFile = "node.crt" // this node's certificate, issued by the CA
	NodeKeyFile  = "node.key" // this node's private key (never leaves the node)
)

// TLSDir is where a node keeps its TLS files: tls/ beside the Raft log
// and snapshots in Config.Dir.
func TLSDir(raftDir string) string { return filepath.Join(raftDir, "tls") }

// Lifetimes of the certificates the CA issues.
const (
	CALifetime   = 10 * 365 * 24 * time.Hour
	NodeLifetime = 365 * 24 * time.Hour
	// clockSkew backdates NotBefore so a peer whose clock is a little
	// behind accepts a fresh certificate.
	clockSkew = 5 * time.Minute
)

// nodeURIScheme names a node in its certificate: a URI SAN
// quire-node://<id> (the CN carries the id too, for people reading it).
const nodeURIScheme = "quire-node"

var validNodeID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ValidNodeID reports whether id can name a node in a certificate.
func ValidNodeID(id string) bool { return validNodeID.MatchString(id) }

// CA is the cluster's certificate authority: it issues node certificates
// and join tokens. It is safe for concurrent use.
type CA struct {
	cert    *x509.Certificate
	certPEM []byte
	key     *ecdsa.PrivateKey
	joinKey []byte
	now     func() time.Time // tests move the clock

	mu       sync.Mutex
	redeemed map[string]time.Time // token nonce -> expiry: single use on this member
}

// CreateCA makes a new cluster CA in dir (the bootstrapping node does
// this once): an ECDSA P-256 key and a self-signed certificate valid for
// CALifetime, and a random 32-byte join-token key. It refuses to
// overwrite an existing CA.
func CreateCA(dir string) (*CA, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	for _, f := range []string{CACertFile, CAKeyFile, JoinKeyFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return nil, fmt.Errorf("cluster: %s already exists: a CA is created once", filepath.Join(dir, f))
		}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "Quire cluster CA " + hex.EncodeToString(serial.Bytes()[:4]), Organization: []string{"Quire"}},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              now.Add(CALifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLen:            0,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	joinKey := make([]byte, 32)
	if _, err := rand.Read(joinKey); err != nil {
		return nil, err
	}
	// Keys first: a CA certificate on disk means the CA is complete.
	if err := writeFile(dir, CAKeyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return nil, err
	}
	if err := writeFile(dir, JoinKeyFile, []byte(hex.EncodeToString(joinKey)+"\n"), 0o600); err != nil {
		return nil, err
	}
	if err := writeFile(dir, CACertFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return nil, err
	}
	return LoadCA(dir)
}

// LoadCA loads the CA that CreateCA wrote to dir.
func LoadCA(dir string) (*CA, error) {
	certPEM, err := os.ReadFile(filepath.Join(dir, CACertFile))
	if err != nil {
		return nil, fmt.Errorf("cluster: CA certificate: %w", err)
	}
	cert, err := parseCertPEM(certPEM)
	if err != nil {
		return nil, fmt.Errorf("cluster: CA certificate: %w", err)
	}
	if !cert.IsCA {
		return nil, errors.New("cluster: ca.crt is not a CA certificate")
	}
	keyPEM, err := readSecret(dir, CAKeyFile)
	if err != nil {
		return nil, err
	}
	blk, _ := pem.Decode(keyPEM)
	if blk == nil {
		return nil, errors.New("cluster: ca.key holds no PEM block")
	}
	key, err := x509.ParseECPrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("cluster: CA key: %w", err)
	}
	if pub, ok := cert.PublicKey.(*ecdsa.PublicKey); !ok || !pub.Equal(&key.PublicKey) {
		return nil, errors.New("cluster: ca.key does not match ca.crt")
	}
	jk, err := readSecret(dir, JoinKeyFile)
	if err != nil {
		return nil, err
	}
	joinKey, err := hex.DecodeString(string(trimNL(jk)))
	if err != nil || len(joinKey) < 32 {
		return nil, errors.New("cluster: join.key is not 32 hex-encoded bytes")
	}
	return &CA{cert: cert, certPEM: certPEM, key: key, joinKey: joinKey, now: time.Now, redeemed: map[string]time.Time{}}, nil
}

// Certificate is the CA's certificate.
func (ca *CA) Certificate() *x509.Certificate { return ca.cert }

// CertPEM is the CA's certificate, PEM-encoded.
func (ca *CA) CertPEM() []byte { return append([]byte(nil), ca.certPEM...) }

// Fingerprint is the SHA-256 of the CA certificate's DER, hex-encoded: a
// join token carries it so a new node knows which cluster it joins.
func (ca *CA) Fingerprint() string { return Fingerprint(ca.cert) }

// Fingerprint is the SHA-256 of a certificate's DER, hex-encoded.
func Fingerprint(c *x509.Certificate) string {
	s := sha256.Sum256(c.Raw)
	return hex.EncodeToString(s[:])
}

// SignCSR issues a node certificate for a DER-encoded certificate
// request: the node id is the request's CN, the key its key (ECDSA P-256
// or Ed25519), the request's signature must verify. The certificate is
// valid for NodeLifetime for both server and client authentication and
// names the node as URI SAN quire-node://<id>. Only Redeem and the
// bootstrapping node (IssueSelf) call it: a certificate is membership.
func (ca *CA) SignCSR(csrDER []byte) (certPEM []byte, nodeID string, err error) {
	csr, err := x509.ParseCertificateRequest(csrDER)
	if err != nil {
		return nil, "", fmt.Errorf("cluster: certificate request: %w", err)
	}
	if err := csr.CheckSignature(); err != nil {
		return nil, "", fmt.Errorf("cluster: certificate request signature: %w", err)
	}
	switch k := csr.PublicKey.(type) {
	case *ecdsa.PublicKey:
		if k.Curve != elliptic.P256() {
			return nil, "", errors.New("cluster: certificate request: ECDSA keys must be P-256")
		}
	default:
		if csr.PublicKeyAlgorithm != x509.Ed25519 {
			return nil, "", fmt.Errorf("cluster: certificate request: %v keys are not accepted (ECDSA P-256 or Ed25519)", csr.PublicKeyAlgorithm)
		}
	}
	nodeID = csr.Subject.CommonName
	if !ValidNodeID(nodeID) {
		return nil, "", fmt.Errorf("cluster: certificate request: node id %q (CN) is not valid", nodeID)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, "", err
	}
	now := ca.now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: nodeID, Organization: []string{"Quire"}},
		NotBefore:    now.Add(-clockSkew),
		NotAfter:     now.Add(NodeLifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		URIs:         []*url.URL{nodeURI(nodeID)},
	}
	if tmpl.NotAfter.After(ca.cert.NotAfter) {
		tmpl.NotAfter = ca.cert.NotAfter
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, csr.PublicKey, ca.key)
	if err != nil {
		return nil, "", err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nodeID, nil
}

// IssueSelf gives the node holding the CA (the bootstrapping node) its own
// key and certificate in dir, the directory the CA lives in.
func (ca *CA) IssueSelf(dir, nodeID string) error {
	csr, err := NewNodeKey(dir, nodeID)
	if err != nil {
		return err
	}
	certPEM, _, err := ca.SignCSR(csr)
	if err != nil {
		return err
	}
	return SaveNodeCert(dir, &JoinBundle{NodeID: nodeID, CertPEM: certPEM, CACertPEM: ca.CertPEM()}, ca.Fingerprint())
}

func nodeURI(id string) *url.URL { return &url.URL{Scheme: nodeURIScheme, Host: id} }

// NodeIDOf returns the node id a certificate names (its quire-node URI
// SAN), or an error when it names none or more than one.
func NodeIDOf(c *x509.Certificate) (string, error) {
	id := ""
	for _, u := range c.URIs {
		if u.Scheme != nodeURIScheme {
			continue
		}
		if id != "" {
			return "", errors.New("cluster: the certificate names more than one node")
		}
		id = u.Host
	}
	if !ValidNodeID(id) {
		return "", errors.New("cluster: the certificate names no valid node id")
	}
	return id, nil
}

func newSerial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
}

func parseCertPEM(b []byte) (*x509.Certificate, error) {
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM certificate")
	}
	return x509.ParseCertificate(blk.Bytes)
}

// writeFile writes name in dir atomically with the given permissions.
func writeFile(dir, name string, data []byte, perm os.FileMode) error {
	return storage.WriteFileAtomic(filepath.Join(dir, name), data, perm)
}

// readSecret reads a key file and refuses one that others can read.
func readSecret(dir, name string) ([]byte, error) {
	p := filepath.Join(dir, name)
	st, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("cluster: %s is readable by others (mode %v): it must be 0600", p, st.Mode().Perm())
	}
	return os.ReadFile(p)
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
