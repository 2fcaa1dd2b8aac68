package servertest

import (
	"net/http"
	"testing"

	"quire/quiretest"
)

// profile creates an intake profile in site default and fails t unless
// it is created.
func AddIntakeProfile(t *testing.T, s *quiretest.Server, tok string, p map[string]any) {
	t.Helper()
	MustStatus(t, s.Do(http.MethodPost, "/sites/default/intakeProfiles", map[string]any{"intakeProfile": p}, tok), http.StatusCreated)
}

func APIKey(t *testing.T, s *quiretest.Server, perms ...string) string {
	t.Helper()
	r := s.Do(http.MethodPost, "/sites/default/apiKeys", map[string]any{"name": "scanner", "permissions": perms}, s.Admin())
	MustStatus(t, r, http.StatusOK)
	return quiretest.Str(t, r.JSON(t), "apiKey")
}
