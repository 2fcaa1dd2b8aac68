package quiretest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"testing"
	"time"

	"software.sslmate.com/src/go-pkcs12"
)

// Certificate is a leaf certificate for cn issued by a CA of its own, as
// a signing certificate of an office would be.
type Certificate struct {
	Key  *rsa.PrivateKey
	Leaf *x509.Certificate
	CA   *x509.Certificate
}

// NewCertificate makes a CA and a leaf for cn valid until notAfter.
func NewCertificate(t testing.TB, cn string, notAfter time.Time) Certificate {
	t.Helper()
	caKey, ca := newCA(t, cn+" CA", x509.KeyUsageCertSign|x509.KeyUsageDigitalSignature)
	key, leaf := issue(t, caKey, ca, &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: notAfter, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageContentCommitment})
	return Certificate{Key: key, Leaf: leaf, CA: ca}
}

// newCA makes a self-signed CA named cn, valid for two years.
func newCA(t testing.TB, cn string, usage x509.KeyUsage) (*rsa.PrivateKey, *x509.Certificate) {
	t.Helper()
	caKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn}, NotBefore: now.Add(-time.Hour),
		NotAfter: now.AddDate(2, 0, 0), IsCA: true, BasicConstraintsValid: true, KeyUsage: usage}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return caKey, ca
}

// issue makes a key and a certificate of tmpl signed by the CA.
func issue(t testing.TB, caKey *rsa.PrivateKey, ca, tmpl *x509.Certificate) (*rsa.PrivateKey, *x509.Certificate) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return key, cert
}

// PKCS12 is the certificate with its key and CA as a PKCS #12 file.
func (c Certificate) PKCS12(t testing.TB, password string) []byte {
	t.Helper()
	b, err := pkcs12.Modern.Encode(c.Key, c.Leaf, []*x509.Certificate{c.CA}, password)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
