package node_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"quire/node"
)

// TestOpen_RefusesABadTSACAFile: a CA file that is missing or holds no
// certificate refuses the start with the setting's name (a configured
// TSA that works is TestCertification_Timestamped's).
func TestOpen_RefusesABadTSACAFile(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.pem")
	if err := os.WriteFile(junk, []byte("not pem"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, caFile, want string
	}{
		{"missing CA file", filepath.Join(dir, "nope.pem"), "certify.tsa_ca_file"},
		{"no certificate", junk, "no PEM certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := node.Open(node.Config{DataDir: t.TempDir(), TSA: node.TSAConfig{URL: "http://127.0.0.1:1/tsa", CAFile: tc.caFile}})
			if err == nil {
				n.Close(context.Background())
				t.Fatal("Open accepted the CA file")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}
