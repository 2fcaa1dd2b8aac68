package mailer_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"quire/pipeline/engine"
	"quire/pipeline/mailer"
	"quire/quiretest"
)

// relayName is the mail relay's name as an operator configures it: not
// one net/smtp takes for localhost, so PLAIN authentication is held to
// TLS as it is for a real relay. The test's dialer resolves it to the
// loopback server.
const relayName = "mail.quire.test"

// nameDialer connects relayName to loopback and records what was dialed.
type nameDialer struct {
	mu     sync.Mutex
	dialed []string
}

func (d *nameDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	d.dialed = append(d.dialed, addr)
	d.mu.Unlock()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if host == relayName {
		host = "127.0.0.1"
	}
	return (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, network, net.JoinHostPort(host, port))
}

// TestSend_TLS: STARTTLS and implicit TLS to a relay addressed by
// name deliver with the credentials sent over TLS; a certificate from
// another authority or for another name is refused for good (not
// retried) before any credentials are sent; a password is never sent
// over a plain connection.
func TestSend_TLS(t *testing.T) {
	good, trusted := quiretest.TestCert(t, relayName)
	other, otherCA := quiretest.TestCert(t, relayName) // same name, another key
	pemFile := func(name string, c *tls.Config) string {
		f := filepath.Join(t.TempDir(), name)
		var b []byte
		if c != nil {
			b = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Certificates[0].Leaf.Raw})
		} else {
			b = []byte("not a certificate\n")
		}
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	goodCA, otherCAFile, junk := pemFile("ca.pem", good), pemFile("other.pem", other), pemFile("junk.pem", nil)
	wrongName, wrongNameCA := quiretest.TestCert(t, "other.quire.test")
	cases := []struct {
		name     string
		server   []quiretest.MailOption
		security string
		roots    *x509.CertPool
		insecure bool
		caFile   string
		user     string
		err      string // "" delivers
		retried  bool
	}{
		{"STARTTLS", []quiretest.MailOption{quiretest.MailSTARTTLS(good)}, "STARTTLS", trusted, false, "", "quire", "", false},
		{"implicit TLS", []quiretest.MailOption{quiretest.MailImplicitTLS(good)}, "IMPLICIT_TLS", trusted, false, "", "quire", "", false},
		{"STARTTLS without login", []quiretest.MailOption{quiretest.MailSTARTTLS(good)}, "STARTTLS", trusted, false, "", "", "", false},
		{"STARTTLS, another authority", []quiretest.MailOption{quiretest.MailSTARTTLS(good)}, "STARTTLS", otherCA, false, "", "quire",
			"STARTTLS with mail server " + relayName + ":", false},
		{"implicit TLS, another authority", []quiretest.MailOption{quiretest.MailImplicitTLS(good)}, "IMPLICIT_TLS", otherCA, false, "", "quire",
			"TLS certificate not trusted", false},
		{"implicit TLS, the system's authorities", []quiretest.MailOption{quiretest.MailImplicitTLS(good)}, "IMPLICIT_TLS", nil, false, "", "quire",
			"TLS certificate not trusted", false},
		{"STARTTLS, certificate for another name", []quiretest.MailOption{quiretest.MailSTARTTLS(wrongName)}, "STARTTLS", wrongNameCA, false, "", "quire",
			"TLS certificate not trusted", false},
		{"implicit TLS, verification off", []quiretest.MailOption{quiretest.MailImplicitTLS(good)}, "IMPLICIT_TLS", otherCA, true, "", "quire", "", false},
		{"STARTTLS not offered", nil, "STARTTLS", trusted, false, "", "quire", "offers no STARTTLS", false},
		{"plain with a password", nil, "", nil, false, "", "quire", "Quire sends the password only over TLS", false},
		{"plain without login", nil, "", nil, false, "", "", "", false},
		{"STARTTLS, CA file", []quiretest.MailOption{quiretest.MailSTARTTLS(good)}, "STARTTLS", nil, false, goodCA, "quire", "", false},
		{"implicit TLS, CA file of another authority", []quiretest.MailOption{quiretest.MailImplicitTLS(good)}, "IMPLICIT_TLS", trusted, false, otherCAFile, "quire",
			"TLS certificate not trusted", false},
		{"CA file without a certificate", []quiretest.MailOption{quiretest.MailSTARTTLS(good)}, "STARTTLS", trusted, false, junk, "quire",
			"holds no PEM certificate", false},
		{"implicit TLS to a plain server", nil, "IMPLICIT_TLS", trusted, false, "", "quire", "not a TLS server", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := quiretest.NewMailServer(t, c.server...)
			d := &nameDialer{}
			cfg := mailer.Config{Host: relayName, Port: srv.Port, Security: c.security, From: "dms@office.lan",
				Username: c.user, Password: "relay-secret", RootCAs: c.roots, CAFile: c.caFile, InsecureSkipVerify: c.insecure, Dial: d.dial}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			m := mailer.Message{From: cfg.From, To: []string{"it@office.lan"}, Cc: []string{"boss@office.lan"}, Bcc: []string{"audit@office.lan"},
				Subject: "Invoice 2026-117 ready", Text: "Please review the invoice."}
			err := mailer.Send(ctx, cfg, m)
			want := []string{relayName + ":" + strconv.Itoa(srv.Port)}
			if c.caFile == junk {
				want = nil // a configuration error: no connection
			}
			if !slices.Equal(d.dialed, want) {
				t.Fatalf("dialed %v, want %v", d.dialed, want)
			}
			msgs, logins := srv.Messages(), srv.LoginDetails()
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want one containing %q", err, c.err)
				}
				if got := engine.IsRetryable(err); got != c.retried {
					t.Fatalf("err %q retried %v, want %v", err, got, c.retried)
				}
				if len(msgs) != 0 || len(logins) != 0 {
					t.Fatalf("refused, yet the server got messages %v and logins %v", msgs, logins)
				}
				return
			}
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			tlsWanted := c.security != ""
			wantLogins := []quiretest.Login{}
			if c.user != "" {
				wantLogins = append(wantLogins, quiretest.Login{User: "quire", Password: "relay-secret", TLS: true})
			}
			if !slices.Equal(append([]quiretest.Login{}, logins...), wantLogins) {
				t.Fatalf("logins %+v, want %+v", logins, wantLogins)
			}
			if len(msgs) != 1 {
				t.Fatalf("%d messages, want 1", len(msgs))
			}
			got := msgs[0]
			if got.TLS != tlsWanted || got.From != "dms@office.lan" ||
				!slices.Equal(got.To, []string{"it@office.lan", "boss@office.lan", "audit@office.lan"}) {
				t.Fatalf("envelope %+v: want TLS %v, from dms@office.lan, to, cc and bcc", got, tlsWanted)
			}
			for _, want := range []string{"Subject: Invoice 2026-117 ready", "To: it@office.lan", "Cc: boss@office.lan", "Please review the invoice."} {
				if !strings.Contains(got.Data, want) {
					t.Fatalf("message lacks %q:\n%s", want, got.Data)
				}
			}
			if strings.Contains(got.Data, "audit@office.lan") {
				t.Fatalf("the Bcc recipient shows in the message:\n%s", got.Data)
			}
		})
	}
}
