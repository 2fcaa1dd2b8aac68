package cluster

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"quire/storage"
)

// newTestCA creates a cluster CA as the bootstrapping node does, gives
// that node (id) its certificate and returns both.
func newTestCA(t *testing.T, id string) (*CA, *Identity) {
	t.Helper()
	dir := TLSDir(t.TempDir())
	ca, err := CreateCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := ca.IssueSelf(dir, id); err != nil {
		t.Fatal(err)
	}
	ident, err := LoadIdentity(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ca, ident
}

// joinWithToken is what a new node does: it reads the token, makes its
// key and request, has a member redeem the token, checks the CA against
// the token's fingerprint and stores its certificate.
func joinWithToken(t *testing.T, member *CA, token, id string) *Identity {
	t.Helper()
	info, err := ParseJoinToken(token)
	if err != nil {
		t.Fatal(err)
	}
	dir := TLSDir(t.TempDir())
	csr, err := NewNodeKey(dir, id)
	if err != nil {
		t.Fatal(err)
	}
	b, err := member.Redeem(token, csr)
	if err != nil {
		t.Fatalf("redeem for %s: %v", id, err)
	}
	if err := SaveNodeCert(dir, b, info.CAFingerprint); err != nil {
		t.Fatal(err)
	}
	ident, err := LoadIdentity(dir)
	if err != nil {
		t.Fatal(err)
	}
	if ident.NodeID != id {
		t.Fatalf("identity names %q, want %q", ident.NodeID, id)
	}
	return ident
}

// selfSigned is a certificate that looks like a node's (URI SAN, both
// usages) but that no cluster CA issued.
func selfSigned(t *testing.T, id string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: id},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		URIs:        []*url.URL{nodeURI(id)}, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// rogueTransport is Raft's own transport on a process that is not a
// member, dialling with dial.
func rogueTransport(t *testing.T, dial DialFunc) *raft.NetworkTransport {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sl, err := NewStreamLayer(ln, nil, dial)
	if err != nil {
		t.Fatal(err)
	}
	tr := raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream: sl, MaxPool: 1, Timeout: 5 * time.Second, Logger: hclog.NewNullLogger(),
	})
	t.Cleanup(func() { tr.Close() })
	return tr
}

// presenting is a client that presents cert whatever CAs the server asks
// for, and does not verify the server.
func presenting(cert tls.Certificate) *tls.Config {
	return &tls.Config{
		InsecureSkipVerify: true, MinVersion: tls.VersionTLS13,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil },
	}
}

// refused reports whether the server at addr refuses a TLS client with
// conf: the connection fails or is closed. One that stays open for a
// second was accepted.
func refused(t *testing.T, addr string, conf *tls.Config) bool {
	t.Helper()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, conf)
	if err != nil {
		return true
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	_, err = c.Read(make([]byte, 1))
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

func tlsDial(conf *tls.Config) DialFunc {
	return (&tls.Dialer{Config: conf}).DialContext
}

func TestTLS_ClusterFormsOverMutualTLSAndOutsidersCannotJoinReadOrVote(t *testing.T) {
	ca, id1 := newTestCA(t, "n1")
	ms := []*member{newMember(t, "n1"), newMember(t, "n2"), newMember(t, "n3")}
	ms[0].tls = id1
	for _, m := range ms[1:] {
		tok, err := ca.IssueJoinToken(0)
		if err != nil {
			t.Fatal(err)
		}
		m.tls = joinWithToken(t, ca, tok, m.id)
	}
	formCluster(t, ms)
	ctx := context.Background()
	cap := clusterApplier{ms}
	for i := range 10 {
		if _, _, err := cap.Propose(ctx, addDoc("doc-"+string(rune('a'+i)), "p"+string(rune('a'+i)))); err != nil {
			t.Fatal(err)
		}
	}
	converge(t, ms)

	// Outsiders: no TLS, TLS without a certificate, a self-signed node
	// certificate, a certificate of another cluster's CA (naming a member).
	// Each skips verifying the cluster's certificate, so only the
	// cluster's check of theirs stands in the way.
	_, otherID := newTestCA(t, "n2")
	otherCert := otherID.Certificate()
	rogues := []struct {
		name string
		conf *tls.Config // nil: plain TCP
	}{
		{"plain TCP", nil},
		{"no certificate", &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13}},
		{"self-signed", presenting(selfSigned(t, "n2"))},
		{"another cluster's CA", presenting(*otherCert)},
	}
	leader := leaderOf(ms)
	if leader == nil {
		t.Fatal("no leader")
	}
	var target, other *member // the followers
	for _, m := range ms {
		if m != leader {
			if target == nil {
				target = m
			} else {
				other = m
			}
		}
	}
	before := target.n.Status()
	evil := addDoc("evil", "evil.txt")
	evilData, err := evil.Encode()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rogues {
		t.Run(r.name, func(t *testing.T) {
			// The handshake itself fails: the connection is closed, not
			// left hanging.
			if r.conf != nil && !refused(t, target.n.Addr(), r.conf) {
				t.Fatalf("a %s peer's connection was not refused", r.name)
			}

			var dial DialFunc
			if r.conf != nil {
				dial = tlsDial(r.conf)
			}
			tr := rogueTransport(t, dial)
			// The rogue poses as members: Raft answers only members' votes.
			asOther := raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte(other.id), Addr: []byte(other.n.Addr())}
			asLeader := raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte(leader.id), Addr: []byte(leader.n.Addr())}
			// A vote with a far higher term, as a leadership transfer (which
			// bypasses leader stickiness): accepted, it would depose the leader.
			var vr raft.RequestVoteResponse
			err := tr.RequestVote(raft.ServerID(target.id), raft.ServerAddress(target.n.Addr()), &raft.RequestVoteRequest{
				RPCHeader: asOther, Term: before.Term + 100, LastLogIndex: before.LastLogIndex + 100, LastLogTerm: before.Term + 100,
				LeadershipTransfer: true,
			}, &vr)
			if err == nil {
				t.Fatalf("RequestVote from a %s peer got an answer: %+v", r.name, vr)
			}
			// Entries from a would-be leader of a higher term, committed at once.
			var ar raft.AppendEntriesResponse
			err = tr.AppendEntries(raft.ServerID(target.id), raft.ServerAddress(target.n.Addr()), &raft.AppendEntriesRequest{
				RPCHeader: asLeader, Term: before.Term + 100,
				PrevLogEntry: before.LastLogIndex, PrevLogTerm: before.Term,
				Entries:           []*raft.Log{{Index: before.LastLogIndex + 1, Term: before.Term + 100, Type: raft.LogCommand, Data: evilData}},
				LeaderCommitIndex: before.LastLogIndex + 1,
			}, &ar)
			if err == nil {
				t.Fatalf("AppendEntries from a %s peer got an answer: %+v", r.name, ar)
			}
		})
	}
	// No node saw the rogue term or the rogue entry.
	for _, m := range ms {
		if st := m.n.Status(); st.Term >= before.Term+100 {
			t.Fatalf("%s moved to term %d (was %d): a rogue RPC was accepted", m.id, st.Term, before.Term)
		}
		if _, err := m.db.GetDocument("default", "evil"); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("%s: the rogue's document: %v", m.id, err)
		}
	}

	// A certificate of this cluster's CA for a node that is not a member
	// (a redeemed token, but the leader never added it) is refused too.
	tok, err := ca.IssueJoinToken(time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	n9 := joinWithToken(t, ca, tok, "n9")
	if !refused(t, target.n.Addr(), presenting(*n9.Certificate())) {
		t.Fatal("a certificate of the cluster's CA for a non-member was accepted")
	}
	// Control: the same rogue code with a member's certificate is
	// answered (the refusals above are the certificates', not the code's).
	tr := rogueTransport(t, tlsDial(other.tls.ClientConfig()))
	var vr raft.RequestVoteResponse
	if err := tr.RequestVote(raft.ServerID(target.id), raft.ServerAddress(target.n.Addr()), &raft.RequestVoteRequest{
		RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte(other.id), Addr: []byte(other.n.Addr())},
		Term:      1,
	}, &vr); err != nil {
		t.Fatalf("a member's certificate is not answered: %v", err)
	}
	if vr.Granted {
		t.Fatal("a stale vote request was granted")
	}

	// The cluster's dialer will not talk to a server outside the cluster
	// either (a wrong address in the configuration does not leak the log):
	// a server with another CA's certificate or a self-signed one.
	for name, cert := range map[string]tls.Certificate{"another cluster's CA": *otherCert, "self-signed": selfSigned(t, "n2")} {
		ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequestClientCert})
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() { c.Read(make([]byte, 1)); c.Close() }()
			}
		}()
		c, err := tlsDial(leader.tls.ClientConfig())(ctx, "tcp", ln.Addr().String())
		ln.Close()
		if err == nil {
			c.Close()
			t.Fatalf("the cluster's dialer accepted a server with a %s certificate", name)
		}
	}

	// A new node trades a token for its certificate and joins over mTLS.
	m4 := newMember(t, "n4")
	tok4, err := ca.IssueJoinToken(0)
	if err != nil {
		t.Fatal(err)
	}
	m4.tls = joinWithToken(t, ca, tok4, "n4")
	m4.start(t)
	t.Cleanup(func() { m4.stop(t) })
	ms = append(ms, m4)
	waitFor(t, 15*time.Second, "the join of n4", func() bool {
		l := leaderOf(ms)
		return l != nil && l.n.Join("n4", m4.n.Addr()) == nil
	})
	if _, _, err := cap.Propose(ctx, addDoc("after-n4", "after-n4.txt")); err != nil {
		t.Fatal(err)
	}
	converge(t, ms)
	if _, err := m4.db.GetDocument("default", "after-n4"); err != nil {
		t.Fatalf("n4 does not hold the document written after it joined: %v", err)
	}

	// Once removed, n4's certificate no longer opens the Raft port.
	waitFor(t, 15*time.Second, "the removal of n4", func() bool {
		l := leaderOf(ms)
		return l != nil && l != m4 && l.n.Remove("n4") == nil
	})
	waitFor(t, 15*time.Second, "every member to refuse n4", func() bool {
		for _, m := range ms[:3] {
			if !refused(t, m.n.Addr(), presenting(*m4.tls.Certificate())) {
				return false
			}
		}
		return true
	})
}

func TestJoinToken_RedeemRefusesExpiredTamperedForeignAndSpentTokens(t *testing.T) {
	ca, _ := newTestCA(t, "n1")
	other, _ := newTestCA(t, "x1")
	clock := time.Now().Add(-2 * time.Hour).Truncate(time.Second)
	ca.now = func() time.Time { return clock }

	csrFor := func(id string) []byte {
		t.Helper()
		csr, err := NewNodeKey(t.TempDir(), id)
		if err != nil {
			t.Fatal(err)
		}
		return csr
	}
	issue := func(c *CA, ttl time.Duration) string {
		t.Helper()
		tok, err := c.IssueJoinToken(ttl)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	// tamper rewrites the clear part of a token, keeping its signature.
	tamper := func(tok string, edit func(map[string]any)) string {
		t.Helper()
		rest := strings.TrimPrefix(tok, joinTokenPrefix)
		p, sig, _ := strings.Cut(rest, ".")
		raw, err := base64.RawURLEncoding.DecodeString(p)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		edit(m)
		raw, err = json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return joinTokenPrefix + base64.RawURLEncoding.EncodeToString(raw) + "." + sig
	}

	if _, err := ca.IssueJoinToken(MaxJoinTokenTTL + time.Second); err == nil {
		t.Fatal("a token living longer than the maximum was issued")
	}
	if _, err := ca.IssueJoinToken(-time.Second); err == nil {
		t.Fatal("a token with a negative lifetime was issued")
	}

	expired := issue(ca, time.Hour)
	valid := issue(ca, 0)
	// One bit of the MAC flipped (decoded, flipped, encoded again).
	head, mac, _ := strings.Cut(strings.TrimPrefix(valid, joinTokenPrefix), ".")
	macBytes, err := base64.RawURLEncoding.DecodeString(mac)
	if err != nil {
		t.Fatal(err)
	}
	macBytes[3] ^= 1
	flipped := joinTokenPrefix + head + "." + base64.RawURLEncoding.EncodeToString(macBytes)
	info, err := ParseJoinToken(valid)
	if err != nil {
		t.Fatal(err)
	}
	if info.CAFingerprint != ca.Fingerprint() || !info.Expires.Equal(clock.Add(DefaultJoinTokenTTL)) {
		t.Fatalf("token says %+v", info)
	}
	clock = clock.Add(time.Hour + time.Second) // the first token expires; valid has 1h left... minus a second
	valid = issue(ca, 0)

	for _, tc := range []struct {
		name, token, want string
	}{
		{"expired", expired, "expired"},
		{"tampered expiry", tamper(expired, func(m map[string]any) { m["exp"] = clock.Add(time.Hour).Unix() }), "bad signature"},
		{"tampered signature", flipped, "bad signature"},
		{"tampered fingerprint", tamper(valid, func(m map[string]any) { m["ca"] = other.Fingerprint() }), "another cluster"},
		{"another cluster's", issue(other, 0), "another cluster"},
		{"not a token", "hello", "not a Quire join token"},
		{"empty", "", "not a Quire join token"},
		{"truncated", valid[:len(joinTokenPrefix)+10], "malformed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ca.Redeem(tc.token, csrFor("n2"))
			if !errors.Is(err, ErrJoinToken) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Redeem = %v, want ErrJoinToken saying %q", err, tc.want)
			}
		})
	}

	// A refused certificate request does not spend the token.
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	badKey, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "n2"}}, p384)
	if err != nil {
		t.Fatal(err)
	}
	badID, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "../n2"}}, p384)
	if err != nil {
		t.Fatal(err)
	}
	for name, csr := range map[string][]byte{"P-384 key": badKey, "bad node id": badID, "garbage": []byte("nope")} {
		if _, err := ca.Redeem(valid, csr); err == nil || errors.Is(err, ErrJoinToken) {
			t.Fatalf("%s: Redeem = %v, want a refused certificate request", name, err)
		}
	}

	// The valid token yields a node certificate for both directions, from
	// this CA only, naming the node; a second redemption is refused.
	b, err := ca.Redeem(valid, csrFor("n2"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ca.Redeem(valid, csrFor("n3")); !errors.Is(err, ErrJoinToken) || !strings.Contains(err.Error(), "already redeemed") {
		t.Fatalf("second Redeem = %v, want already redeemed", err)
	}
	leaf, err := parseCertPEM(b.CertPEM)
	if err != nil {
		t.Fatal(err)
	}
	if id, err := NodeIDOf(leaf); err != nil || id != "n2" || b.NodeID != "n2" || leaf.Subject.CommonName != "n2" {
		t.Fatalf("certificate names %q (%v), bundle %q", id, err, b.NodeID)
	}
	if err := verifyNode(leaf, ca.Certificate(), x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth); err != nil {
		t.Fatal(err)
	}
	if verifyNode(leaf, other.Certificate(), x509.ExtKeyUsageClientAuth) == nil {
		t.Fatal("the certificate verifies against another CA")
	}
	if life := leaf.NotAfter.Sub(clock); life != NodeLifetime {
		t.Fatalf("certificate lives %v after issue, want %v", life, NodeLifetime)
	}
	if leaf.IsCA {
		t.Fatal("a node certificate is a CA")
	}

	// A bundle whose CA is not the one the token names is refused by the
	// new node, and so is a certificate for someone else's key.
	dir := t.TempDir()
	if _, err := NewNodeKey(dir, "n2"); err != nil {
		t.Fatal(err)
	}
	if err := SaveNodeCert(dir, b, other.Fingerprint()); err == nil {
		t.Fatal("a CA with another fingerprint was accepted")
	}
	if err := SaveNodeCert(dir, b, ca.Fingerprint()); err == nil || !strings.Contains(err.Error(), "key") {
		t.Fatalf("a certificate for another key: %v", err)
	}
}

func TestTLS_KeysArePrivateAndTheCAIsCreatedOnce(t *testing.T) {
	dir := t.TempDir()
	ca, err := CreateCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := ca.IssueSelf(dir, "n1"); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{CAKeyFile, JoinKeyFile, NodeKeyFile} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Fatalf("%s has mode %v", f, st.Mode().Perm())
		}
	}
	if _, err := CreateCA(dir); err == nil {
		t.Fatal("a second CA was created over the first")
	}
	again, err := LoadCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := again.IssueJoinToken(0)
	if err != nil {
		t.Fatal(err)
	}
	csr, err := NewNodeKey(t.TempDir(), "n2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ca.Redeem(tok, csr); err != nil {
		t.Fatalf("a token of the reloaded CA: %v", err)
	}
	if err := os.Chmod(filepath.Join(dir, CAKeyFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCA(dir); err == nil || !strings.Contains(err.Error(), "0600") {
		t.Fatalf("a world-readable CA key was loaded: %v", err)
	}
}

func TestTLS_JoinClientConfigPinsTheTokensCA(t *testing.T) {
	ca, id1 := newTestCA(t, "n1")
	other, _ := newTestCA(t, "x1")
	handshake := func(fp string) error {
		a, b := net.Pipe()
		defer a.Close()
		defer b.Close()
		srv := tls.Server(a, &tls.Config{Certificates: []tls.Certificate{*id1.Certificate()}, MinVersion: tls.VersionTLS13})
		go srv.Handshake()
		cl := tls.Client(b, JoinClientConfig(fp))
		cl.SetDeadline(time.Now().Add(10 * time.Second))
		return cl.Handshake()
	}
	if err := handshake(ca.Fingerprint()); err != nil {
		t.Fatalf("a member of the token's cluster: %v", err)
	}
	if err := handshake(other.Fingerprint()); err == nil {
		t.Fatal("a member of another cluster was accepted")
	}
}

func TestTLS_OpenRefusesACertificateForAnotherNode(t *testing.T) {
	_, ident := newTestCA(t, "n1")
	db, err := storage.Open(storage.Config{Dir: t.TempDir(), MinFreeBytes: -1, MinFreePercent: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n, err := Open(Config{ID: "n2", Dir: t.TempDir(), DB: db, Listen: "127.0.0.1:0", TLS: ident})
	if err == nil {
		n.Close()
		t.Fatal("a node opened with another node's certificate")
	}
	if !strings.Contains(err.Error(), `"n1"`) {
		t.Fatalf("error does not name the certificate's node: %v", err)
	}
}
