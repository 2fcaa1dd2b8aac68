package auth

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The keys of one data dir, installed in another, make the second
// accept the first's tokens and signed URLs after ReloadKeys.
func TestKeys_HandedOverKeysAreTheSameIdentity(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	a := mustOpen(t, Config{DataDir: src}, nil)
	b := mustOpen(t, Config{DataDir: dst}, nil)
	tok, err := a.Sign("ann", []string{"Admins"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Authenticate(tok); err == nil {
		t.Fatal("a token of another data dir was accepted before the hand-over")
	}
	if bytes.Equal(a.URLKey(), b.URLKey()) {
		t.Fatal("two new data dirs have the same URL key")
	}
	k, err := ExportKeys(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := InstallKeys(dst, k); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{signingKeyFile, urlKeyFile} {
		st, err := os.Stat(filepath.Join(dst, keysDir, f))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v, want mode 0600", f, st.Mode(), err)
		}
	}
	if err := b.ReloadKeys(); err != nil {
		t.Fatal(err)
	}
	if p, err := b.Authenticate(tok); err != nil || p.Username != "ann" {
		t.Fatalf("the source's token after the hand-over: %v %v", p, err)
	}
	if !bytes.Equal(a.URLKey(), b.URLKey()) {
		t.Fatal("URL keys differ after the hand-over")
	}
	// quire token on the receiving data dir signs with the shared key.
	tok2, err := SignToken(dst, "", "bob", nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authenticate(tok2); err != nil {
		t.Fatalf("a token from the receiving data dir on the source: %v", err)
	}
}

func TestKeys_InstallRefusesBadKeys(t *testing.T) {
	good, err := ExportKeys(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		k    Keys
		want string
	}{
		{"no PEM", Keys{SigningKey: "x", URLKey: good.URLKey}, "no PEM"},
		{"not a key", Keys{SigningKey: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", URLKey: good.URLKey}, "signing key"},
		{"short URL key", Keys{SigningKey: good.SigningKey, URLKey: "abcd"}, "URL signing key"},
		{"URL key not hex", Keys{SigningKey: good.SigningKey, URLKey: strings.Repeat("zz", 32)}, "URL signing key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			err := InstallKeys(dir, tc.k)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("InstallKeys: %v, want an error about %q", err, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, keysDir, signingKeyFile)); err == nil {
				t.Fatal("a refused hand-over wrote a key file")
			}
		})
	}
}
