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
	caKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn + " CA"}, NotBefore: now.Add(-time.Hour),
		NotAfter: now.AddDate(2, 0, 0), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	leafTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: cn}, NotBefore: now.Add(-time.Hour),
		NotAfter: notAfter, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageContentCommitment}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(leafDER)
	if err != nil {
		t.Fatal(err)
	}
	return Certificate{Key: key, Leaf: leaf, CA: ca}
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
