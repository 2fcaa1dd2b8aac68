package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// testP12 is a certificate for cn as a PKCS #12 file.
func testP12(t *testing.T, cn string, notAfter time.Time, pw string) []byte {
	return quiretest.NewCertificate(t, cn, notAfter).PKCS12(t, pw)
}
