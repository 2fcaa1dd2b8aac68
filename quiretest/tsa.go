package quiretest

import (
	"bytes"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TSA is a real RFC 3161 time-stamping authority for tests: OpenSSL's
// `openssl ts -reply` behind an HTTP server on loopback, with a CA of its
// own and a signing certificate for time stamping only.
type TSA struct {
	URL     string
	CA      *x509.Certificate
	Dir     string       // openssl's files: ca.pem, tsa.pem
	Replies atomic.Int64 // tokens granted
	mu      sync.Mutex   // openssl keeps the serial number in a file
}

// NewTSA starts a TSA for the test's lifetime.
func NewTSA(t testing.TB) *TSA {
	t.Helper()
	openssl := NeedProgram(t, "openssl", "openssl")
	dir := t.TempDir()
	caKey, ca := newCA(t, "Test TSA Root", x509.KeyUsageCertSign)
	// RFC 3161 §2.3: the extended key usage is time stamping only, critical.
	eku, err := asn1.Marshal([]asn1.ObjectIdentifier{{1, 3, 6, 1, 5, 5, 7, 3, 8}})
	if err != nil {
		t.Fatal(err)
	}
	key, leaf := issue(t, caKey, ca, &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "Test TSA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(1, 0, 0), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtraExtensions: []pkix.Extension{{Id: asn1.ObjectIdentifier{2, 5, 29, 37}, Critical: true, Value: eku}}})
	write := func(name, typ string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("ca.pem", "CERTIFICATE", ca.Raw)
	write("tsa.pem", "CERTIFICATE", leaf.Raw)
	write("tsa.key", "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(key))
	if err := os.WriteFile(filepath.Join(dir, "serial"), []byte("01\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cnf := fmt.Sprintf(`[ tsa ]
default_tsa = tsa1
[ tsa1 ]
dir = %s
serial = $dir/serial
crypto_device = builtin
signer_cert = $dir/tsa.pem
certs = $dir/ca.pem
signer_key = $dir/tsa.key
signer_digest = sha256
default_policy = 1.3.6.1.4.1.99999.1
digests = sha256
accuracy = secs:1
ordering = no
tsa_name = yes
ess_cert_id_chain = no
ess_cert_id_alg = sha256
`, dir)
	if err := os.WriteFile(filepath.Join(dir, "tsa.cnf"), []byte(cnf), 0o600); err != nil {
		t.Fatal(err)
	}
	tsa := &TSA{CA: ca, Dir: dir}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/timestamp-query" {
			http.Error(w, "want a POST of application/timestamp-query", http.StatusBadRequest)
			return
		}
		query, err := io.ReadAll(io.LimitReader(r.Body, 1<<16))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		tsa.mu.Lock()
		defer tsa.mu.Unlock()
		cmd := exec.CommandContext(r.Context(), openssl, "ts", "-reply", "-config", filepath.Join(dir, "tsa.cnf"), "-queryfile", "/dev/stdin", "-out", "/dev/stdout")
		cmd.Stdin = bytes.NewReader(query)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			http.Error(w, fmt.Sprintf("openssl ts: %v %s", err, errb.String()), http.StatusInternalServerError)
			return
		}
		tsa.Replies.Add(1)
		w.Header().Set("Content-Type", "application/timestamp-reply")
		w.Write(out.Bytes())
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	tsa.URL = srv.URL + "/tsa"
	return tsa
}
