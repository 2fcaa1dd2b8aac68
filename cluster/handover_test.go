package cluster

import (
	"strings"
	"testing"
	"time"
)

// A member that installed the CA keys handed over issues tokens the
// first member redeems, and the other way round; keys of another CA or
// a CA certificate other than the token's are refused.
func TestHandover_CAKeysMakeEveryMemberAnIssuer(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	ca1, err := CreateCA(d1)
	if err != nil {
		t.Fatal(err)
	}
	k, err := ca1.Keys()
	if err != nil {
		t.Fatal(err)
	}
	other, err := CreateCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ok, err := other.Keys()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cert []byte
		fp   string
		keys CAKeys
		want string
	}{
		{"another CA's key", ca1.CertPEM(), ca1.Fingerprint(), CAKeys{CAKey: ok.CAKey, JoinKey: k.JoinKey}, "not the cluster CA's"},
		{"a certificate other than the token's", other.CertPEM(), ca1.Fingerprint(), k, "not the one the join token names"},
		{"no fingerprint", ca1.CertPEM(), "", k, "not the one the join token names"},
		{"short join key", ca1.CertPEM(), ca1.Fingerprint(), CAKeys{CAKey: k.CAKey, JoinKey: "00"}, "join key"},
		{"no PEM", ca1.CertPEM(), ca1.Fingerprint(), CAKeys{CAKey: "x", JoinKey: k.JoinKey}, "no PEM"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := InstallCAKeys(dir, tc.cert, tc.fp, tc.keys); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("InstallCAKeys: %v, want %q", err, tc.want)
			}
			if _, err := LoadCA(dir); err == nil {
				t.Fatal("a refused hand-over left a usable CA")
			}
		})
	}

	if err := InstallCAKeys(d2, ca1.CertPEM(), ca1.Fingerprint(), k); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(d2, CACertFile, ca1.CertPEM(), 0o644); err != nil { // SaveNodeCert's part
		t.Fatal(err)
	}
	ca2, err := LoadCA(d2)
	if err != nil {
		t.Fatal(err)
	}
	if ca2.Fingerprint() != ca1.Fingerprint() {
		t.Fatal("the installed CA is another")
	}
	tok, err := ca2.IssueJoinToken(time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	csr, err := NewNodeKey(t.TempDir(), "n2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ca1.Redeem(tok, csr); err != nil {
		t.Fatalf("a token of the member that installed the keys, at the first: %v", err)
	}
	tok, err = ca1.IssueJoinToken(time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ca2.Redeem(tok, csr); err != nil {
		t.Fatalf("the first's token at the member that installed the keys: %v", err)
	}
	foreign, err := other.IssueJoinToken(time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ca2.Redeem(foreign, csr); err == nil {
		t.Fatal("another cluster's token redeemed")
	}
}
