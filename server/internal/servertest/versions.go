package servertest

import (
	"net/http"
	"testing"

	"quire/quiretest"
)

// VersionsOf lists GET /versions (extra: more query parameters) and
// returns the entries, newest first.
func VersionsOf(t *testing.T, s *quiretest.Server, tok, site, doc, extra string) []map[string]any {
	t.Helper()
	r := s.Do(http.MethodGet, "/documents/"+doc+"/versions"+Query(site, extra), nil, tok)
	MustStatus(t, r, http.StatusOK)
	b := r.JSON(t)
	var out []map[string]any
	for i := range quiretest.List(t, b, "documents") {
		out = append(out, quiretest.Item(t, b, "documents", i))
	}
	return out
}
