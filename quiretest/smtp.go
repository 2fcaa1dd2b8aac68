package quiretest

import (
	"io"
	"net"
	"sync"
	"testing"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// MailServer is a real SMTP server on loopback that keeps what it gets.
type MailServer struct {
	Host   string
	Port   int
	mu     sync.Mutex
	logins []string
	msgs   []Received
	got    chan struct{}
}

// Received is one delivered message.
type Received struct {
	From string
	To   []string
	Data string
}

// NewMailServer starts an SMTP server on 127.0.0.1 for the test.
func NewMailServer(t testing.TB) *MailServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := &MailServer{Host: "127.0.0.1", Port: ln.Addr().(*net.TCPAddr).Port, got: make(chan struct{}, 100)}
	s := smtp.NewServer(mailBackend{m})
	s.Domain = "localhost"
	s.AllowInsecureAuth = true
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return m
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
	return append([]string(nil), m.logins...)
}

type mailBackend struct{ m *MailServer }

func (b mailBackend) NewSession(*smtp.Conn) (smtp.Session, error) { return &mailSession{m: b.m}, nil }

type mailSession struct {
	m   *MailServer
	cur Received
}

func (s *mailSession) Mail(from string, _ *smtp.MailOptions) error {
	s.cur = Received{From: from}
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
		s.m.logins = append(s.m.logins, user+":"+pass)
		s.m.mu.Unlock()
		return nil
	}), nil
}

func (s *mailSession) Reset()        { s.cur = Received{} }
func (s *mailSession) Logout() error { return nil }
