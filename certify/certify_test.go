package certify_test

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quire/certify"
	"quire/quiretest"
)

// testPKI is a signer with a CA-issued certificate.
func testPKI(t *testing.T, name string) certify.Signer {
	c := quiretest.NewCertificate(t, name, time.Now().AddDate(1, 0, 0))
	return certify.Signer{Key: c.Key, Cert: c.Leaf, Chain: []*x509.Certificate{c.CA}}
}

// normalized rewrites a PDF as Sign reads it (qpdf, no object streams).
func normalized(t *testing.T, pdf []byte, extra ...string) []byte {
	t.Helper()
	qpdf := quiretest.NeedProgram(t, "qpdf", "qpdf")
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.pdf"), filepath.Join(dir, "out.pdf")
	os.WriteFile(in, pdf, 0o600)
	args := append(append([]string{}, extra...), in, out)
	if b, err := exec.Command(qpdf, args...).CombinedOutput(); err != nil {
		t.Fatalf("qpdf %v: %v %s", args, err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func pdfsig(t *testing.T, pdf []byte) string {
	t.Helper()
	prog := quiretest.NeedProgram(t, "pdfsig", "poppler-utils")
	fn := filepath.Join(t.TempDir(), "signed.pdf")
	os.WriteFile(fn, pdf, 0o600)
	out, _ := exec.Command(prog, fn).CombinedOutput()
	return string(out)
}

// TestSign_CertificationAndApproval: a certification and an approval
// signature on a PDF (and on one whose source used an xref stream) are
// valid for poppler's pdfsig and for Verify, and qpdf reads the
// certification level from the catalog (this pdfsig does not report it);
// a byte changed afterwards is caught by both verifiers.
func TestSign_CertificationAndApproval(t *testing.T) {
	first, second := testPKI(t, "Alice Notary"), testPKI(t, "Bob Approver")
	for _, tc := range []struct {
		name string
		pdf  []byte
	}{
		{"classic", normalized(t, quiretest.TextPDF("Contract of sale"), "--object-streams=disable")},
		{"from xref stream", normalized(t, normalized(t, quiretest.TextPDF("Contract of sale"), "--object-streams=generate"), "--object-streams=disable")},
		{"a form", normalized(t, quiretest.FormPDF("Application", [][2]string{{"name", "Ann"}}), "--object-streams=disable")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			signed, err := certify.Sign(tc.pdf, []certify.Signer{first, second}, certify.Options{Reason: "approved", Location: "Springfield", CertifyP: 2})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(signed, tc.pdf) {
				t.Fatal("the signed PDF does not keep the original bytes (not an incremental update)")
			}
			out := pdfsig(t, signed)
			if strings.Count(out, "Signature is Valid") != 2 || !strings.Contains(out, "Alice Notary") || !strings.Contains(out, "Bob Approver") {
				t.Fatalf("pdfsig:\n%s", out)
			}
			if p := docMDP(t, signed); p != 2 {
				t.Errorf("qpdf reads certification level %d, want 2 (form filling and signing)", p)
			}
			if !strings.Contains(out, "Total document signed") {
				t.Errorf("pdfsig does not report the last signature covering the whole file:\n%s", out)
			}
			infos, err := certify.Verify(signed)
			if err != nil || len(infos) != 2 {
				t.Fatalf("Verify: %v %+v", err, infos)
			}
			if infos[0].Err != nil || infos[1].Err != nil || !infos[0].Certified || infos[1].Certified || !infos[1].WholeFile || infos[0].Signer != "Alice Notary" {
				t.Errorf("Verify: %+v", infos)
			}
			// A changed byte inside the signed range.
			bad := bytes.Clone(signed)
			i := bytes.Index(bad, []byte("/Name (Alice"))
			bad[i+7] ^= 0x20
			if out := pdfsig(t, bad); strings.Contains(out, "Signature is Valid") {
				t.Errorf("pdfsig accepts a changed PDF:\n%s", out)
			}
			if infos, _ := certify.Verify(bad); len(infos) != 2 || infos[0].Err == nil || infos[1].Err == nil {
				t.Errorf("Verify accepts a changed PDF: %+v", infos)
			}
			// Bytes added after the last signature: not the whole file any more.
			more := append(bytes.Clone(signed), []byte("\n% appended\n")...)
			if infos, _ := certify.Verify(more); len(infos) != 2 || infos[1].WholeFile {
				t.Errorf("Verify after an addition: %+v", infos)
			}
		})
	}
}

func TestSign_RefusesWhatItCannotSign(t *testing.T) {
	s := testPKI(t, "X")
	approved, err := certify.Sign(normalized(t, quiretest.TextPDF("Signed"), "--object-streams=disable"), []certify.Signer{s}, certify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string][]byte{"not a PDF": []byte("hello"), "no xref": []byte("%PDF-1.4\nstartxref\n5\n%%EOF\n"), "certifying a signed PDF": approved} {
		_, err := certify.Sign(in, []certify.Signer{s}, certify.Options{CertifyP: 2})
		var ce *certify.Error
		if err == nil || !errorsAs(err, &ce) {
			t.Errorf("%s: %v, want a certify.Error", name, err)
		}
	}
}

func errorsAs(err error, target **certify.Error) bool {
	e, ok := err.(*certify.Error)
	if ok {
		*target = e
	}
	return ok
}

// TestSign_Timestamped: with a TSA (OpenSSL's, over HTTP) every signature
// carries a token over its signature value that Verify, pdfsig and
// `openssl ts -verify` accept; a token changed afterwards is reported,
// and an authority that cannot be reached fails the signing with a
// TSAError instead of leaving the signature unstamped.
func TestSign_Timestamped(t *testing.T) {
	tsa := quiretest.NewTSA(t)
	roots := x509.NewCertPool()
	roots.AddCert(tsa.CA)
	pdf := normalized(t, quiretest.TextPDF("Lease"), "--object-streams=disable")
	before := time.Now().Add(-2 * time.Second)
	signed, err := certify.Sign(pdf, []certify.Signer{testPKI(t, "Alice Notary"), testPKI(t, "Bob Approver")},
		certify.Options{CertifyP: 2, TSA: &certify.TSA{URL: tsa.URL, Roots: roots}})
	if err != nil {
		t.Fatal(err)
	}
	if n := tsa.Replies.Load(); n != 2 {
		t.Errorf("the TSA granted %d tokens, want 2", n)
	}
	infos, err := certify.Verify(signed)
	if err != nil || len(infos) != 2 {
		t.Fatalf("Verify: %v %+v", err, infos)
	}
	for i, in := range infos {
		if in.Err != nil || !in.Timestamped || in.Timestamp.Before(before) || in.Timestamp.After(time.Now().Add(2*time.Second)) {
			t.Errorf("signature %d: %+v", i, in)
		}
	}
	if out := pdfsig(t, signed); strings.Count(out, "Signature is Valid") != 2 {
		t.Errorf("pdfsig:\n%s", out)
	}
	openssl := quiretest.NeedProgram(t, "openssl", "openssl")
	sigs, tokens := certify.TimestampTokens(signed)
	if len(tokens) != 2 {
		t.Fatalf("%d tokens", len(tokens))
	}
	for i, tok := range tokens {
		fn := filepath.Join(t.TempDir(), "token.der")
		os.WriteFile(fn, tok, 0o600)
		d := sha256.Sum256(sigs[i])
		out, err := exec.Command(openssl, "ts", "-verify", "-in", fn, "-token_in", "-digest", hex.EncodeToString(d[:]),
			"-CAfile", filepath.Join(tsa.Dir, "ca.pem"), "-untrusted", filepath.Join(tsa.Dir, "tsa.pem")).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "Verification: OK") {
			t.Errorf("openssl ts -verify of token %d: %v\n%s", i, err, out)
		}
	}

	// A byte of the first token's TSTInfo changed: the token no longer verifies.
	bad := bytes.Clone(signed)
	hx := hex.EncodeToString(tokens[0][len(tokens[0])-300 : len(tokens[0])-280])
	at := bytes.Index(bad, []byte(hx))
	if at < 0 {
		t.Fatal("token not found in the PDF")
	}
	if bad[at] == 'a' {
		bad[at] = 'b'
	} else {
		bad[at] = 'a'
	}
	if infos, _ := certify.Verify(bad); len(infos) != 2 || infos[0].Err == nil {
		t.Errorf("Verify accepts a changed timestamp token: %+v", infos)
	}

	// No authority listening.
	_, err = certify.Sign(pdf, []certify.Signer{testPKI(t, "Alice Notary")}, certify.Options{TSA: &certify.TSA{URL: "http://127.0.0.1:1/tsa"}})
	var te *certify.TSAError
	if !errors.As(err, &te) {
		t.Errorf("Sign without a reachable TSA: %v, want a TSAError", err)
	}
	// An authority whose certificate does not chain to the configured roots.
	other := x509.NewCertPool()
	other.AddCert(testPKI(t, "Elsewhere").Chain[0])
	if _, err = certify.Sign(pdf, []certify.Signer{testPKI(t, "Alice Notary")}, certify.Options{TSA: &certify.TSA{URL: tsa.URL, Roots: other}}); !errors.As(err, &te) {
		t.Errorf("Sign with an untrusted TSA: %v, want a TSAError", err)
	}
}

// docMDP reads, with qpdf rather than this package, the DocMDP
// permission level the catalog's /Perms names (0: not certified).
func docMDP(t *testing.T, pdf []byte) int {
	t.Helper()
	qpdf := quiretest.NeedProgram(t, "qpdf", "qpdf")
	fn := filepath.Join(t.TempDir(), "signed.pdf")
	os.WriteFile(fn, pdf, 0o600)
	out, err := exec.Command(qpdf, "--json=2", "--json-key=qpdf", fn).Output()
	if err != nil {
		t.Fatalf("qpdf --json: %v", err)
	}
	var doc struct {
		QPDF []json.RawMessage `json:"qpdf"`
	}
	var objs map[string]struct {
		Value map[string]any `json:"value"`
	}
	if json.Unmarshal(out, &doc) != nil || len(doc.QPDF) != 2 || json.Unmarshal(doc.QPDF[1], &objs) != nil {
		t.Fatalf("qpdf --json: unexpected output")
	}
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	root := str(objs["trailer"].Value, "/Root")
	perms, _ := objs["obj:"+root].Value["/Perms"].(map[string]any)
	sig := objs["obj:"+str(perms, "/DocMDP")].Value
	refs, _ := sig["/Reference"].([]any)
	if len(refs) != 1 {
		return 0
	}
	ref, _ := refs[0].(map[string]any)
	params, _ := ref["/TransformParams"].(map[string]any)
	p, _ := params["/P"].(float64)
	if str(ref, "/TransformMethod") != "/DocMDP" {
		return 0
	}
	return int(p)
}
