package admin_test

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// On a single server the rotation is the same command: the key files
// sign with the new key, a token from before verifies within the grace,
// non-admins and bad bodies are refused.
func TestKeys_RotateOnASingleServer(t *testing.T) {
	s := quiretest.NewServer(t)
	old := s.Admin()
	for _, tc := range []struct {
		name   string
		token  string
		body   any
		status int
	}{
		{"not an admin", s.Token("joe", "default"), map[string]any{}, http.StatusUnauthorized},
		{"grace too long", old, map[string]any{"graceSeconds": 31 * 24 * 3600}, http.StatusBadRequest},
		{"grace not a number", old, map[string]any{"graceSeconds": "1h"}, http.StatusBadRequest},
		{"default grace", old, map[string]any{}, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r := s.Do(http.MethodPost, "/system/keys/rotate", tc.body, tc.token); r.Status != tc.status {
				t.Fatalf("%d %s, want %d", r.Status, r.Body, tc.status)
			}
		})
	}
	fresh := s.Admin()
	if fresh == old {
		t.Fatal("the key files did not change")
	}
	for _, tok := range []string{old, fresh} {
		if r := s.Do(http.MethodGet, "/documents", nil, tok); r.Status != http.StatusOK {
			t.Fatalf("GET /documents after the rotation: %d %s", r.Status, r.Body)
		}
	}
}

// TestSecretsKey_RotateOnASingleServer: every site's secrets are sealed
// again under a new secrets key, which replaces the data dir's; the
// certificates still sign on both sites, a secret added afterwards too;
// a non-admin is refused and a second rotation works.
func TestSecretsKey_RotateOnASingleServer(t *testing.T) {
	quiretest.NeedProgram(t, "qpdf", "qpdf")
	s := quiretest.NewServer(t)
	tok := s.Admin()
	keyFile := filepath.Join(s.DataDir, "keys", "secrets.key")
	p12 := servertest.Pkcs12File(t, "Nora Notary", "pw")
	type sitecase = struct{ Name, Query string }
	certifyOn := func(t *testing.T, site sitecase, alias string) {
		t.Helper()
		pdf := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "rot/deed.pdf", "contentType": "application/pdf", "isBase64": true,
			"content": servertest.B64(quiretest.TextPDF("Deed"))})
		r := s.Do(http.MethodPost, "/documents/"+pdf+"/certifications"+site.Query, map[string]any{"target": "DOWNLOAD",
			"certificates": []map[string]any{{"alias": alias}}}, tok)
		servertest.MustStatus(t, r, http.StatusCreated)
	}
	siteID := func(site sitecase) string {
		if id := strings.TrimPrefix(site.Query, "?siteId="); id != "" {
			return id
		}
		return "default"
	}
	for _, site := range servertest.Sites {
		servertest.MustStatus(t, s.Do(http.MethodPost, "/sites/"+siteID(site)+"/secrets", map[string]any{"alias": "notary", "data": servertest.B64(p12), "password": "pw"}, tok), http.StatusCreated)
	}
	before, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if r := s.Do(http.MethodPost, "/system/secrets/rotate", map[string]any{}, s.Token("joe", "default")); r.Status != http.StatusUnauthorized {
		t.Errorf("a non-admin rotates: %d %s", r.Status, r.Body)
	}
	for round := 1; round <= 2; round++ {
		r := s.Do(http.MethodPost, "/system/secrets/rotate", map[string]any{}, tok)
		servertest.MustStatus(t, r, http.StatusOK)
		if n := quiretest.Num(t, r.JSON(t), "secrets"); int(n) != len(servertest.Sites)+round-1 {
			t.Errorf("round %d: %s, want %d secrets", round, r.Body, len(servertest.Sites)+round-1)
		}
		after, err := os.ReadFile(keyFile)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(before, after) {
			t.Fatalf("round %d: the secrets key file did not change", round)
		}
		before = after
		if _, err := os.Stat(keyFile + ".next"); !os.IsNotExist(err) {
			t.Errorf("round %d: the staged key is left behind: %v", round, err)
		}
		for _, site := range servertest.Sites {
			certifyOn(t, site, "notary")
		}
		if round == 1 {
			servertest.MustStatus(t, s.Do(http.MethodPost, "/sites/default/secrets", map[string]any{"alias": "later", "data": servertest.B64(p12), "password": "pw"}, tok), http.StatusCreated)
			certifyOn(t, servertest.Sites[0], "later")
		}
	}
}
