package server_test

import (
	"net/http"
	"testing"

	"quire/quiretest"
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
