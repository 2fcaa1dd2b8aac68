package quiretest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// MailServer is a real SMTP server on loopback that keeps what it gets.
type MailServer struct {
	Host   string
	Port   int
	mu     sync.Mutex
	logins []Login
	msgs   []Received
	got    chan struct{}
}

// Received is one delivered message.
type Received struct {
	From string
	To   []string
	Data string
	// TLS: the message came over TLS (STARTTLS or implicit).
	TLS bool
}

// Login is one authentication.
type Login struct {
	User, Password string
	// TLS: the credentials came over TLS.
	TLS bool
}

// MailOption configures a MailServer.
type MailOption func(*mailOptions)

type mailOptions struct {
	tls      *tls.Config
	implicit bool
}

// MailSTARTTLS offers STARTTLS with cfg; AUTH is refused before it.
func MailSTARTTLS(cfg *tls.Config) MailOption {
	return func(o *mailOptions) { o.tls, o.implicit = cfg, false }
}

// MailImplicitTLS serves SMTPS: TLS with cfg from the first byte.
func MailImplicitTLS(cfg *tls.Config) MailOption {
	return func(o *mailOptions) { o.tls, o.implicit = cfg, true }
}

// NewMailServer starts an SMTP server on 127.0.0.1 for the test. Without
// options it speaks plain SMTP and takes AUTH without TLS.
func NewMailServer(t testing.TB, opts ...MailOption) *MailServer {
	t.Helper()
	var o mailOptions
	for _, f := range opts {
		f(&o)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := &MailServer{Host: "127.0.0.1", Port: ln.Addr().(*net.TCPAddr).Port, got: make(chan struct{}, 100)}
	s := smtp.NewServer(mailBackend{m})
	s.Domain = "localhost"
	s.AllowInsecureAuth = o.tls == nil
	if o.tls != nil && !o.implicit {
		s.TLSConfig = o.tls
	}
	if o.implicit {
		ln = tls.NewListener(ln, o.tls)
	}
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return m
}

// TestCert makes a self-signed certificate for the DNS names, valid for
// an hour: the server's TLS config, and the pool a client trusts it with.
func TestCert(t testing.TB, names ...string) (*tls.Config, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}}}, pool
}

// Messages returns the messages received so far.
func (m *MailServer) Messages() []Received {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Received(nil), m.msgs...)
}

// Logins returns the user:password pairs clients authenticated with.
func (m *MailServer) Logins() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, l := range m.logins {
		out = append(out, l.User+":"+l.Password)
	}
	return out
}

// LoginDetails returns the authentications, with whether each came over
// TLS.
func (m *MailServer) LoginDetails() []Login {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Login(nil), m.logins...)
}

type mailBackend struct{ m *MailServer }

func (b mailBackend) NewSession(c *smtp.Conn) (smtp.Session, error) {
	return &mailSession{m: b.m, conn: c}, nil
}

type mailSession struct {
	m    *MailServer
	conn *smtp.Conn
	cur  Received
}

// tls reports whether the session runs over TLS now (after STARTTLS
// too).
func (s *mailSession) tls() bool {
	_, ok := s.conn.TLSConnectionState()
	return ok
}

func (s *mailSession) Mail(from string, _ *smtp.MailOptions) error {
	s.cur = Received{From: from, TLS: s.tls()}
	return nil
}

func (s *mailSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.cur.To = append(s.cur.To, to)
	return nil
}

func (s *mailSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.cur.Data = string(b)
	s.m.mu.Lock()
	s.m.msgs = append(s.m.msgs, s.cur)
	s.m.mu.Unlock()
	select {
	case s.m.got <- struct{}{}:
	default:
	}
	return nil
}

func (s *mailSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *mailSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		s.m.mu.Lock()
		s.m.logins = append(s.m.logins, Login{User: user, Password: pass, TLS: s.tls()})
		s.m.mu.Unlock()
		return nil
	}), nil
}

func (s *mailSession) Reset()        { s.cur = Received{} }
func (s *mailSession) Logout() error { return nil }
