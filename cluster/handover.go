package cluster

import (
	"crypto/ecdsa"
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
)

// JoinALPN is the TLS protocol name a new node asks for when it calls a
// member's join endpoint (POST /cluster/join) with JoinClientConfig: the
// member's HTTPS listener then serves its cluster certificate
// (Identity.Certificate, whose chain ends with the CA the join token
// names) instead of the API's own certificate.
const JoinALPN = "quire-join/1"

// CAKeys are the issuing secrets of the cluster: the CA's private key
// and the join-token key. Every member holds them (handed over at join),
// so any member can issue join tokens (quire cluster token) and any
// leader can redeem them and sign certificates.
type CAKeys struct {
	CAKey   string `json:"caKey"`   // PEM (EC PRIVATE KEY)
	JoinKey string `json:"joinKey"` // hex, 32 bytes
}

// Keys returns the CA's issuing secrets for a node joining the cluster.
func (ca *CA) Keys() (CAKeys, error) {
	der, err := x509.MarshalECPrivateKey(ca.key)
	if err != nil {
		return CAKeys{}, err
	}
	return CAKeys{
		CAKey:   string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})),
		JoinKey: hex.EncodeToString(ca.joinKey),
	}, nil
}

// InstallCAKeys writes the issuing secrets handed over at join into
// dir: the CA certificate handed over (caCertPEM) must have the
// fingerprint the join token names and the CA key must be its. A joining
// node installs them before SaveNodeCert, whose node.crt marks the join
// as done; afterwards LoadCA(dir) works on this node.
func InstallCAKeys(dir string, caCertPEM []byte, caFingerprint string, k CAKeys) error {
	cert, err := parseCertPEM(caCertPEM)
	if err != nil {
		return fmt.Errorf("cluster: CA certificate: %w", err)
	}
	if caFingerprint == "" || Fingerprint(cert) != caFingerprint {
		return errors.New("cluster: the CA certificate handed over is not the one the join token names")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	blk, _ := pem.Decode([]byte(k.CAKey))
	if blk == nil {
		return errors.New("cluster: the CA key handed over holds no PEM block")
	}
	key, err := x509.ParseECPrivateKey(blk.Bytes)
	if err != nil {
		return fmt.Errorf("cluster: the CA key handed over: %w", err)
	}
	if pub, ok := cert.PublicKey.(*ecdsa.PublicKey); !ok || !pub.Equal(&key.PublicKey) {
		return errors.New("cluster: the CA key handed over is not the cluster CA's")
	}
	jk, err := hex.DecodeString(strings.TrimSpace(k.JoinKey))
	if err != nil || len(jk) < 32 {
		return errors.New("cluster: the join key handed over is not 32 hex-encoded bytes")
	}
	if err := writeFile(dir, CAKeyFile, []byte(k.CAKey), 0o600); err != nil {
		return err
	}
	return writeFile(dir, JoinKeyFile, []byte(hex.EncodeToString(jk)+"\n"), 0o600)
}

// SecretsWrapKey is a key every member derives alike from the CA's
// private key (HKDF-SHA256): a rotated secrets key travels through the
// Raft log sealed with it, so neither the log nor the store holds the
// key that opens the secrets they carry.
func (ca *CA) SecretsWrapKey() ([]byte, error) {
	ek, err := ca.key.ECDH()
	if err != nil {
		return nil, err
	}
	return hkdf.Key(sha256.New, ek.Bytes(), nil, "quire secrets key wrap", 32)
}
