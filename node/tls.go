package node

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"

	"quire/storage"
)

// TLSConfig says how the listener serves HTTPS.
type TLSConfig struct {
	// CertFile and KeyFile are a PEM certificate (with chain) and key.
	CertFile, KeyFile string
	// SelfSigned generates a certificate into <data>/tls on first start
	// (and again when it is about to expire or lacks a host).
	SelfSigned bool
	// Hosts are extra names and addresses of the self-signed certificate.
	Hosts []string
}

// Enabled reports whether HTTPS is configured.
func (t TLSConfig) Enabled() bool { return t.SelfSigned || t.CertFile != "" }

// selfSignedValidity is the lifetime of a generated certificate; browsers
// refuse longer ones.
const selfSignedValidity = 397 * 24 * time.Hour

// loadTLS builds the listener's TLS configuration. It returns the SHA-256
// fingerprint of the certificate so the log can show it for pinning.
func loadTLS(t TLSConfig, dataDir, listen string) (*tls.Config, string, error) {
	certFile, keyFile := t.CertFile, t.KeyFile
	if t.SelfSigned {
		dir := filepath.Join(dataDir, "tls")
		certFile, keyFile = SelfSignedCertFile(dataDir), filepath.Join(dir, "key.pem")
		hosts := certHosts(listen, t.Hosts)
		if !selfSignedOK(certFile, keyFile, hosts) {
			if err := writeSelfSigned(dir, certFile, keyFile, hosts); err != nil {
				return nil, "", fmt.Errorf("self-signed certificate: %w", err)
			}
		}
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, "", fmt.Errorf("tls: %w", err)
	}
	sum := sha256.Sum256(cert.Certificate[0])
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, hex.EncodeToString(sum[:]), nil
}

// SelfSignedCertFile is where a data dir keeps its self-signed certificate
// (tls.self_signed, and the SMTP listener's when no certificate is set).
func SelfSignedCertFile(dataDir string) string {
	return filepath.Join(dataDir, "tls", "cert.pem")
}

// certHosts are the names a self-signed certificate covers: localhost,
// the loopback addresses, this machine's name, the listen host and the
// configured extras.
func certHosts(listen string, extra []string) []string {
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	if h, err := os.Hostname(); err == nil && h != "" {
		hosts = append(hosts, h)
	}
	if h, _, err := net.SplitHostPort(listen); err == nil && h != "" {
		if ip := net.ParseIP(h); ip == nil || !ip.IsUnspecified() {
			hosts = append(hosts, h)
		}
	}
	hosts = append(hosts, extra...)
	slices.Sort(hosts)
	return slices.Compact(hosts)
}

// selfSignedOK reports whether the generated certificate exists, covers
// hosts and has more than 30 days left.
func selfSignedOK(certFile, keyFile string, hosts []string) bool {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return false
	}
	c, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil || time.Until(c.NotAfter) < 30*24*time.Hour {
		return false
	}
	for _, h := range hosts {
		if c.VerifyHostname(h) != nil {
			return false
		}
	}
	return true
}

func writeSelfSigned(dir, certFile, keyFile string, hosts []string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return err
	}
	name, _ := os.Hostname()
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "Quire " + name, Organization: []string{"Quire self-signed"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(selfSignedValidity),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	var kp, cp bytes.Buffer
	_ = pem.Encode(&kp, &pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
	_ = pem.Encode(&cp, &pem.Block{Type: "CERTIFICATE", Bytes: der})
	// Key first: a certificate without its key would be unusable.
	return errors.Join(storage.WriteFileAtomic(keyFile, kp.Bytes(), 0o600), storage.WriteFileAtomic(certFile, cp.Bytes(), 0o644))
}
