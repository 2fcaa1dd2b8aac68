package certify_test

import (
	"bytes"
	"crypto/x509"
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
// valid for poppler's pdfsig and for Verify; a byte changed afterwards is
// caught by both.
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
	for name, in := range map[string][]byte{"not a PDF": []byte("hello"), "no xref": []byte("%PDF-1.4\nstartxref\n5\n%%EOF\n")} {
		_, err := certify.Sign(in, []certify.Signer{s}, certify.Options{})
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
