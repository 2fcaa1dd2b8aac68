package cli

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"software.sslmate.com/src/go-pkcs12"

	"quire/quiretest"
)

// TestSecrets_WhileTheServerRuns adds, lists and deletes a certificate
// with quire secrets against a running server.
func TestSecrets_WhileTheServerRuns(t *testing.T) {
	s := quiretest.NewServer(t)
	p12 := testP12(t, "Office Seal", time.Now().AddDate(0, 0, 10), "seal-pw")
	file := filepath.Join(t.TempDir(), "seal.p12")
	if err := os.WriteFile(file, p12, 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, want int, args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		args = append(args, "--data-dir", s.DataDir, "--url", s.URL, "--site", "finance")
		if code := Main(args, &out, &errb); code != want {
			t.Fatalf("quire %s: exit %d (want %d): %s", strings.Join(args, " "), code, want, errb.String())
		}
		return out.String() + errb.String()
	}
	run(t, 0, "secrets", "add", "seal", "--file", file, "--password", "seal-pw")
	if out := run(t, 0, "secrets", "list"); !strings.Contains(out, "seal") || !strings.Contains(out, "Office Seal") {
		t.Errorf("list: %q", out)
	}
	if out := run(t, 1, "secrets", "add", "other", "--file", file, "--password", "wrong"); !strings.Contains(out, "password is not valid") {
		t.Errorf("a wrong password: %q", out)
	}
	run(t, 0, "secrets", "delete", "seal")
	if out := run(t, 0, "secrets", "list"); strings.Contains(out, "seal") {
		t.Errorf("list after delete: %q", out)
	}
}

// testP12 is a self-signed certificate as a PKCS #12 file.
func testP12(t *testing.T, cn string, notAfter time.Time, pw string) []byte {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: cn}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: notAfter, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	p12, err := pkcs12.Modern.Encode(key, cert, nil, pw)
	if err != nil {
		t.Fatal(err)
	}
	return p12
}
